"""A stdio MCP server for the real codex: one read-only tool, `read_note`, whose result
holds its text twice, as a text block and as structured content nested NOTE_DEPTH levels
deep, and the same note as a resource (support/codex_streams.py records codex calling
and reading them).

    [mcp_servers.notes]
    command = "<python>"
    args = ["<this file>"]

Newline-delimited JSON-RPC on stdin and stdout, as codex speaks it to a stdio server;
stdlib only. The tool is marked read-only (`readOnlyHint`): codex exec, whose approval is
always `never`, refuses a tool that would need approval ("MCP tool call requires approval,
but approval policy is never").
"""

from __future__ import annotations

import json
import sys
from typing import Any

NOTE_DEPTH = 40
NOTE = ("the nightly batch window cannot absorb the peak load\n"
        "so expiry needs a sweep job of its own")
RESOURCE = "note://draft"  # the same note as a resource (read_mcp_resource)
TOOL = {"name": "read_note", "description": "Read one of the user's notes by name",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                        "required": ["name"]},
        "annotations": {"readOnlyHint": True}}


def nested(depth: int, leaf: str) -> dict[str, Any]:
    value: dict[str, Any] = {"text": leaf}
    for level in range(depth - 1):
        value = {"level": level, "child": value}
    return value


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}, "resources": {}},
                "serverInfo": {"name": "notes", "version": "1"}}
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        name = (params.get("arguments") or {}).get("name", "")
        text = f"note {name}:\n{NOTE}"
        return {"content": [{"type": "text", "text": text}],
                "structuredContent": nested(NOTE_DEPTH, text), "isError": False}
    if method == "resources/list":
        return {"resources": [{"uri": RESOURCE, "name": "draft", "mimeType": "text/markdown"}]}
    if method == "resources/read":
        return {"contents": [{"uri": params.get("uri", RESOURCE), "mimeType": "text/markdown",
                              "text": f"# draft\n\n{NOTE}\n"}]}
    return {}


def main() -> int:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:  # a notification: no answer
            continue
        result = answer(message)
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                     "result": result}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
