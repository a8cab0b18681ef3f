"""Loopback mock of the OpenAI Responses API, for driving the real Codex CLI.

    with ResponsesMock() as mock:
        mock.script(text("hello from mock"))
        home = mock.codex_home(tmp_path / "codex-home")
        subprocess.run([codex, "exec", "--json", ...], env=mock.codex_env(home), ...)
        request = mock.responses_requests()[0]

`POST /v1/responses` is answered by the next scripted behaviour, or by the default
behaviour when the script is empty. A request whose last input item is a tool
output (Codex running a tool inside a turn) takes the next scripted behaviour or,
when none is left, a plain text reply, never the default. The SSE frames follow
reference/codex-cli.md §9.4; the config follows §9.1-§9.2.
"""

from __future__ import annotations

import json
import os
import time
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

RESPONSES_PATH = "/v1/responses"
MOCK_MODEL = "gpt-5-mock"
MOCK_KEY_ENV = "MOCK_OPENAI_KEY"
TOOL_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
TOOL_FOLLOWUP_REPLY = "mock: tool output received"
RATE_LIMIT_BODY: dict[str, Any] = {
    "error": {
        "message": "Rate limit reached (mock).",
        "type": "requests",
        "code": "rate_limit_exceeded",
    }
}

Event = dict[str, Any]
Item = dict[str, Any]


@dataclass(frozen=True)
class Usage:
    """Token usage reported in `response.completed`."""

    input_tokens: int = 22
    output_tokens: int = 7
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_tokens},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }

    def as_codex_usage(self) -> dict[str, int]:
        """What `turn.completed.usage` reports for a turn made of this one request."""
        return {
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_tokens,
            "cache_write_input_tokens": 0,
            "output_tokens": self.output_tokens,
            "reasoning_output_tokens": self.reasoning_tokens,
        }


# -- SSE event builders (§9.4) ----------------------------------------------------


def _message_item(item_id: str, text: str, status: str) -> Item:
    content = [{"type": "output_text", "text": text, "annotations": []}] if text else []
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": status,
        "content": content,
    }


def _message_events(index: int, item_id: str, text: str) -> tuple[list[Event], Item]:
    where = {"item_id": item_id, "output_index": index, "content_index": 0}
    part = {"type": "output_text", "text": text, "annotations": []}
    done = _message_item(item_id, text, "completed")
    events: list[Event] = [
        _item_event("added", index, _message_item(item_id, "", "in_progress")),
        {"type": "response.content_part.added", **where, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", **where, "delta": text},
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": part},
        _item_event("done", index, done),
    ]
    return events, done


def _reasoning_events(index: int, item_id: str, summary: str) -> tuple[list[Event], Item]:
    def item(parts: list[dict[str, str]]) -> Item:
        return {
            "id": item_id,
            "type": "reasoning",
            "summary": parts,
            "content": None,
            "encrypted_content": None,
        }

    done = item([{"type": "summary_text", "text": summary}])
    return [_item_event("added", index, item([])), _item_event("done", index, done)], done


def _function_call_events(
    index: int, call_id: str, name: str, arguments: str
) -> tuple[list[Event], Item]:
    item_id = f"fc_{call_id}"

    def item(status: str, args: str) -> Item:
        return {
            "id": item_id,
            "type": "function_call",
            "status": status,
            "name": name,
            "arguments": args,
            "call_id": call_id,
        }

    where = {"item_id": item_id, "output_index": index}
    done = item("completed", arguments)
    events: list[Event] = [
        _item_event("added", index, item("in_progress", "")),
        {"type": "response.function_call_arguments.delta", **where, "delta": arguments},
        {"type": "response.function_call_arguments.done", **where, "arguments": arguments},
        _item_event("done", index, done),
    ]
    return events, done


def _item_event(phase: str, index: int, item: Item) -> Event:
    return {"type": f"response.output_item.{phase}", "output_index": index, "item": item}


def _created_event(response_id: str) -> Event:
    return {
        "type": "response.created",
        "response": {
            "id": response_id,
            "object": "response",
            "status": "in_progress",
            "output": [],
        },
    }


def _completed_event(response_id: str, output: list[Item], usage: Usage) -> Event:
    return {
        "type": "response.completed",
        "response": {
            "id": response_id,
            "object": "response",
            "status": "completed",
            "output": output,
            "usage": usage.to_json(),
        },
    }


def _stream(exchange: Exchange, parts: list[tuple[list[Event], Item]], usage: Usage) -> None:
    """A complete streamed response: created, each item's events, completed."""
    response_id = f"resp_mock_{exchange.request.index}"
    exchange.start_sse(chunked=False)
    exchange.send_event(_created_event(response_id))
    for events, _ in parts:
        for event in events:
            exchange.send_event(event)
    exchange.send_event(_completed_event(response_id, [item for _, item in parts], usage))


# -- behaviours -------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A full assistant text reply."""

    reply: Reply
    usage: Usage = field(default_factory=Usage)

    def respond(self, exchange: Exchange) -> None:
        text = resolve_reply(self.reply, exchange.request)
        msg_id = f"msg_mock_{exchange.request.index}"
        _stream(exchange, [_message_events(0, msg_id, text)], self.usage)


@dataclass(frozen=True)
class ReasoningThenText:
    """A reasoning item with one summary, then an assistant text reply."""

    summary: str
    reply: Reply
    usage: Usage = field(default_factory=Usage)

    def respond(self, exchange: Exchange) -> None:
        n = exchange.request.index
        text = resolve_reply(self.reply, exchange.request)
        parts = [
            _reasoning_events(0, f"rs_mock_{n}", self.summary),
            _message_events(1, f"msg_mock_{n}", text),
        ]
        _stream(exchange, parts, self.usage)


@dataclass(frozen=True)
class ShellCall:
    """A `function_call` of `exec_command`; Codex runs it and sends the output back."""

    cmd: str
    usage: Usage = field(default_factory=Usage)
    yield_time_ms: int = 2000

    def respond(self, exchange: Exchange) -> None:
        arguments = json.dumps({"cmd": self.cmd, "yield_time_ms": self.yield_time_ms})
        call_id = f"call_mock_{exchange.request.index}"
        _stream(
            exchange, [_function_call_events(0, call_id, "exec_command", arguments)], self.usage
        )


@dataclass(frozen=True)
class Items:
    """Output items streamed as given: a web search call, a namespaced function call (an
    MCP tool's, a sub-agent's), a custom tool call, messages; each `added` then `done`."""

    items: tuple[Item, ...]
    usage: Usage = field(default_factory=Usage)

    def respond(self, exchange: Exchange) -> None:
        parts = []
        for index, item in enumerate(self.items):
            if item.get("type") == "message":
                parts.append(_message_events(index, str(item["id"]), message_text(item)))
            else:
                parts.append(([_item_event("added", index, item),
                               _item_event("done", index, item)], item))
        _stream(exchange, parts, self.usage)


@dataclass(frozen=True)
class Failed:
    """`response.created`, a partial answer when `partial`, then `response.failed` with
    `error` (`{"code", "message"}`, as the Responses API reports a failed response)."""

    error: dict[str, Any]
    partial: str | None = None

    def respond(self, exchange: Exchange) -> None:
        response_id = f"resp_mock_{exchange.request.index}"
        exchange.start_sse(chunked=False)
        exchange.send_event(_created_event(response_id))
        if self.partial is not None:
            events, _ = _message_events(0, f"msg_mock_{exchange.request.index}", self.partial)
            for event in events:
                exchange.send_event(event)
        exchange.send_event({"type": "response.failed", "response": {
            "id": response_id, "status": "failed", "error": self.error}})


@dataclass(frozen=True)
class Status:
    """A non-2xx JSON error response, optionally with `Retry-After`."""

    code: int
    body: Any = None
    retry_after: int | None = None

    def respond(self, exchange: Exchange) -> None:
        body = self.body if self.body is not None else _error_body(self.code)
        headers = {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}
        exchange.send_json(self.code, body, headers)


@dataclass(frozen=True)
class Stall:
    """Headers and `response.created`, then silence until the server stops."""

    def respond(self, exchange: Exchange) -> None:
        exchange.start_sse(chunked=False)
        exchange.send_event(_created_event(f"resp_mock_{exchange.request.index}"))
        exchange.wait_until_stopped()


@dataclass(frozen=True)
class Delayed:
    """Another behaviour, after `seconds` of silence: the model thinking that long before
    it answers (a long turn, whose events come minutes apart)."""

    seconds: float
    then: Any

    def respond(self, exchange: Exchange) -> None:
        time.sleep(self.seconds)
        self.then.respond(exchange)


def _error_body(code: int) -> dict[str, Any]:
    return {"error": {"message": f"mock forced status {code}", "type": "mock_error"}}


def function_call(name: str, arguments: dict[str, Any], *, namespace: str | None = None,
                  call_id: str = "call_1") -> Item:
    """A completed `function_call` item; `namespace` as codex names an MCP server's tools
    (`mcp__<server>`) and its sub-agent tools (`multi_agent_v1`)."""
    item: Item = {"id": f"fc_{call_id}", "type": "function_call", "status": "completed",
                  "name": name, "arguments": json.dumps(arguments), "call_id": call_id}
    return {**item, "namespace": namespace} if namespace else item


def custom_tool_call(name: str, text_input: str, call_id: str = "call_1") -> Item:
    """A completed `custom_tool_call` item (apply_patch, code mode's `exec`)."""
    return {"id": f"ctc_{call_id}", "type": "custom_tool_call", "status": "completed",
            "name": name, "input": text_input, "call_id": call_id}


def web_search_call(action: dict[str, Any], item_id: str = "ws_1") -> Item:
    """A completed `web_search_call` item: `{"type": "search", "query"}`, `open_page` with
    `url`, `find_in_page` with `url` and `pattern`."""
    return {"type": "web_search_call", "id": item_id, "status": "completed", "action": action}


def message(reply: str, item_id: str = "msg_1") -> Item:
    return _message_item(item_id, reply, "completed")


def text(reply: Reply, usage: Usage | None = None) -> Text:
    return Text(reply, usage or Usage())


def reasoning_then_text(
    summary: str, reply: Reply, usage: Usage | None = None
) -> ReasoningThenText:
    return ReasoningThenText(summary, reply, usage or Usage())


def shell_call(cmd: str, usage: Usage | None = None) -> ShellCall:
    return ShellCall(cmd, usage or Usage())


def status(code: int, body: Any = None, retry_after: int | None = None) -> Status:
    return Status(code, body, retry_after)


def rate_limited(retry_after: int | None = None) -> Status:
    """429 with the body real rate limits carry (§6.5)."""
    return Status(429, RATE_LIMIT_BODY, retry_after)


def hang() -> Hang:
    return Hang()


def stall() -> Stall:
    return Stall()


# -- reading recorded requests ----------------------------------------------------


def input_items(request: RecordedRequest) -> list[dict[str, Any]]:
    """The `input` list of a recorded `POST /v1/responses` body."""
    body = request.body if isinstance(request.body, dict) else {}
    items = body.get("input", [])
    return [item for item in items if isinstance(item, dict)]


def message_text(item: Mapping[str, Any]) -> str:
    """Concatenated text parts of one `message` input item."""
    content = item.get("content", [])
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def messages(request: RecordedRequest, role: str) -> list[str]:
    """Texts of the `message` input items with `role`, in order."""
    return [
        message_text(item)
        for item in input_items(request)
        if item.get("type", "message") == "message" and item.get("role") == role
    ]


def last_user_text(request: RecordedRequest) -> str:
    """Text of the last `user` message (the prompt of the current turn)."""
    texts = messages(request, "user")
    return texts[-1] if texts else ""


def ends_with_tool_output(request: RecordedRequest) -> bool:
    items = input_items(request)
    return bool(items) and items[-1].get("type") in TOOL_OUTPUT_TYPES


# -- the mock -----------------------------------------------------------------------


class ResponsesMock(LoopbackServer):
    """Loopback Responses API: scripted SSE answers to `POST /v1/responses`."""

    def __init__(self, default: Behaviour | None = None) -> None:
        super().__init__()
        self._script = Script(text("mock reply") if default is None else default)
        # Answers every request instead of the script when set: a turn with sub-agents,
        # whose threads each need their own answers (support/codex_streams.py).
        self.router: Behaviour | None = None

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

    @property
    def api_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def responses_requests(self) -> list[RecordedRequest]:
        return self.requests_to("POST", RESPONSES_PATH)

    def route(self, exchange: Exchange) -> None:
        request = exchange.request
        if request.method != "POST" or request.path != RESPONSES_PATH:
            exchange.send_json(404, _error_body(404))
            return
        if self.router is not None:
            self.router.respond(exchange)
            return
        fallback = text(TOOL_FOLLOWUP_REPLY) if ends_with_tool_output(request) else None
        self._script.next(fallback).respond(exchange)

    # -- pointing codex at the mock (§9.1) ---------------------------------------------
    def codex_home(
        self,
        directory: Path,
        *,
        model: str = MOCK_MODEL,
        stream_idle_timeout_ms: int = 10_000,
        request_max_retries: int = 0,
        stream_max_retries: int = 0,
    ) -> Path:
        """Write `config.toml` pointing Codex at this mock; return the directory."""
        directory.mkdir(parents=True, exist_ok=True)
        config = f"""\
model = "{model}"
model_provider = "mock"

[model_providers.mock]
name = "Mock Responses API"
base_url = "{self.api_base_url}"
wire_api = "responses"
env_key = "{MOCK_KEY_ENV}"
request_max_retries = {request_max_retries}
stream_max_retries = {stream_max_retries}
stream_idle_timeout_ms = {stream_idle_timeout_ms}

# Under workspace-write only the project is writable, as with a home outside the temp
# folders: a real codex that may write /tmp leaves its empty mount targets there (.git,
# .codex, .agents), and every other test would then see /tmp as a git checkout.
[sandbox_workspace_write]
exclude_slash_tmp = true
exclude_tmpdir_env_var = true
"""
        (directory / "config.toml").write_text(config, encoding="utf-8")
        return directory

    def codex_env(self, codex_home: Path, home: Path | None = None) -> dict[str, str]:
        return codex_env(codex_home, home)


def codex_env(codex_home: Path, home: Path | None = None) -> dict[str, str]:
    """A minimal child environment (env -i style) for Codex against the mock.

    HOME defaults to a fresh sibling of `codex_home`, never the real one.
    """
    home = home or codex_home.with_name(f"{codex_home.name}-home")
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        MOCK_KEY_ENV: "dummy",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
