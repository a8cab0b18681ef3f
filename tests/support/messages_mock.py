"""Loopback mock of the Anthropic Messages API, for driving the real Claude Code.

    with MessagesMock() as mock:
        mock.script(tool_use("Bash", {"command": "echo hi", "description": "say hi"}))
        env = mock.claude_env(tmp_path / "home")
        subprocess.run([claude, "-p", "hello", ...], env=env, ...)
        first = mock.messages_requests()[0]

`POST /v1/messages` (any query, e.g. `?beta=true`) is answered with SSE per
reference/claude-code-skills.md §14 by the next scripted behaviour, or the default
when the script is empty. A request whose last user message carries a
`tool_result` takes the next scripted behaviour or, when none is left, a short text
echoing the tool output, never the default. Every other request gets a 404.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.loopback_server import (
    Behaviour,
    Exchange,
    Hang,
    LoopbackServer,
    RecordedRequest,
    Reply,
    Script,
    resolve_reply,
)

MESSAGES_PATH = "/v1/messages"
TOOL_RESULT_PREFIX = "MOCK-TOOL-RESULT: "
DEFAULT_API_TIMEOUT_MS = 30_000

Event = dict[str, Any]
Block = dict[str, Any]


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 10
    output_tokens: int = 5


# -- SSE event builders (§14) -------------------------------------------------------


def _message_start(request: RecordedRequest, usage: Usage) -> Event:
    body = request.body if isinstance(request.body, dict) else {}
    return {
        "type": "message_start",
        "message": {
            "id": f"msg_mock_{request.index}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-mock"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": 1,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        },
    }


def _text_block_events(index: int, text: str) -> list[Event]:
    return [
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
        {"type": "content_block_stop", "index": index},
    ]


def _tool_use_block_events(index: int, tool_id: str, name: str, arguments: str) -> list[Event]:
    """Input arrives as two `input_json_delta` fragments split mid-token (rule 3)."""
    middle = len(arguments) // 2
    start_block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    return [
        {"type": "content_block_start", "index": index, "content_block": start_block},
        *(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }
            for fragment in (arguments[:middle], arguments[middle:])
        ),
        {"type": "content_block_stop", "index": index},
    ]


def _stream(exchange: Exchange, block_events: list[Event], stop_reason: str, usage: Usage) -> None:
    """message_start, the blocks, then the mandatory message_delta and message_stop."""
    exchange.start_sse(chunked=True)
    exchange.send_event(_message_start(exchange.request, usage))
    for event in block_events:
        exchange.send_event(event)
    exchange.send_event(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": usage.output_tokens},
        }
    )
    exchange.send_event({"type": "message_stop"})
    exchange.end_sse()


# -- behaviours -----------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A final assistant text reply (`stop_reason: end_turn`)."""

    reply: Reply
    usage: Usage = field(default_factory=Usage)

    def respond(self, exchange: Exchange) -> None:
        reply = resolve_reply(self.reply, exchange.request)
        _stream(exchange, _text_block_events(0, reply), "end_turn", self.usage)


@dataclass(frozen=True)
class ToolUse:
    """One `tool_use` block (`stop_reason: tool_use`); `name` must be in the request's tools."""

    name: str
    input: Mapping[str, Any]
    usage: Usage = field(default_factory=Usage)

    def respond(self, exchange: Exchange) -> None:
        tool_id = f"toolu_mock_{exchange.request.index}"
        events = _tool_use_block_events(0, tool_id, self.name, json.dumps(dict(self.input)))
        _stream(exchange, events, "tool_use", self.usage)


@dataclass(frozen=True)
class Status:
    """A non-2xx JSON error in the Messages API error shape."""

    code: int
    message: str = ""
    error_type: str = "api_error"
    retry_after: int | None = None

    def respond(self, exchange: Exchange) -> None:
        message = self.message or f"mock forced status {self.code}"
        body = {"type": "error", "error": {"type": self.error_type, "message": message}}
        headers = {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}
        exchange.send_json(self.code, body, headers)


def text(reply: Reply, usage: Usage | None = None) -> Text:
    return Text(reply, usage or Usage())


def tool_use(name: str, input_dict: Mapping[str, Any], usage: Usage | None = None) -> ToolUse:
    return ToolUse(name, input_dict, usage or Usage())


def bash(command: str, description: str = "mock bash call") -> ToolUse:
    """A Bash tool call, the common case of `tool_use`."""
    return tool_use("Bash", {"command": command, "description": description})


def status(
    code: int, message: str = "", error_type: str = "api_error", retry_after: int | None = None
) -> Status:
    return Status(code, message, error_type, retry_after)


def hang() -> Hang:
    return Hang()


# -- reading recorded requests --------------------------------------------------------


def request_messages(request: RecordedRequest) -> list[dict[str, Any]]:
    body = request.body if isinstance(request.body, dict) else {}
    return [m for m in body.get("messages", []) if isinstance(m, dict)]


def content_blocks(message: Mapping[str, Any]) -> list[Block]:
    """A message's content as blocks (a plain string becomes one text block)."""
    content = message.get("content", [])
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)]


def block_texts(message: Mapping[str, Any]) -> list[str]:
    return [b.get("text", "") for b in content_blocks(message) if b.get("type") == "text"]


def skill_listing(request: RecordedRequest) -> str:
    """Text of the `role:"system"` entries of `messages`, where skills are listed (§6).

    The content is a string in 2.1.197 and a list of blocks in 2.1.330.
    """
    system = [m for m in request_messages(request) if m.get("role") == "system"]
    return "\n".join(text for m in system for text in block_texts(m))


def first_message_texts(request: RecordedRequest) -> list[str]:
    """Text blocks of `messages[0]`, where `/skill args` is expanded (§7)."""
    msgs = request_messages(request)
    return block_texts(msgs[0]) if msgs else []


def last_user_message(request: RecordedRequest) -> dict[str, Any] | None:
    users = [m for m in request_messages(request) if m.get("role") == "user"]
    return users[-1] if users else None


def last_user_tool_results(request: RecordedRequest) -> list[Block]:
    """The `tool_result` blocks of the last user message."""
    message = last_user_message(request)
    if message is None:
        return []
    return [b for b in content_blocks(message) if b.get("type") == "tool_result"]


def tool_result_text(block: Mapping[str, Any]) -> str:
    """A tool_result's content as text (a string, or text blocks joined)."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


def _tool_followup(request: RecordedRequest) -> str:
    outputs = "\n".join(tool_result_text(b) for b in last_user_tool_results(request))
    return f"{TOOL_RESULT_PREFIX}{outputs.strip()}"


# -- the mock -------------------------------------------------------------------------


class MessagesMock(LoopbackServer):
    """Loopback Messages API: scripted SSE answers to `POST /v1/messages`."""

    def __init__(self, default: Behaviour | None = None) -> None:
        super().__init__()
        self._script = Script(text("mock reply") if default is None else default)
        self._driver: Behaviour | None = None

    def drive(self, model: Behaviour) -> None:
        """Hand every request to `model` (e.g. a scripted_model.ScriptedModel), whatever
        the script holds."""
        self._driver = model

    @property
    def default(self) -> Behaviour:
        return self._script.default

    @default.setter
    def default(self, behaviour: Behaviour) -> None:
        self._script.default = behaviour

    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next requests, in order."""
        self._script.extend(behaviours)

    @property
    def pending(self) -> int:
        return len(self._script)

    def messages_requests(self) -> list[RecordedRequest]:
        return self.requests_to("POST", MESSAGES_PATH)

    def route(self, exchange: Exchange) -> None:
        request = exchange.request
        if request.method != "POST" or request.path != MESSAGES_PATH:
            exchange.send_empty(404)
            return
        if self._driver is not None:
            self._driver.respond(exchange)
            return
        fallback = text(_tool_followup) if last_user_tool_results(request) else None
        self._script.next(fallback).respond(exchange)

    def claude_env(self, home: Path, *, sandbox: bool = False) -> dict[str, str]:
        return claude_env(home, self.port, sandbox=sandbox)


def claude_env(
    home: Path,
    port: int,
    *,
    sandbox: bool = False,
    api_timeout_ms: int = DEFAULT_API_TIMEOUT_MS,
) -> dict[str, str]:
    """The offline environment of §2 (env -i style), HOME a fresh directory.

    `sandbox=True` adds IS_SANDBOX=1, which root needs for
    `--dangerously-skip-permissions` (§12).
    """
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "TERM": "dumb",
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "dummy",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        "API_TIMEOUT_MS": str(api_timeout_ms),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    if sandbox:
        env["IS_SANDBOX"] = "1"
    return env
