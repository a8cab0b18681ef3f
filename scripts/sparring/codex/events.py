"""Reading Codex's JSONL event stream (`codex exec --json`).

`thread.started` → `turn.started` → `item.*` → `turn.completed{usage}` or
`turn.failed{error}`. Top-level `error` events are retry notices, not
failures: only `turn.failed` and the exit code mean failure. `usage` in
`turn.completed` is cumulative for the thread. Lines that are not JSON
objects with a `type` are counted and skipped; an unterminated last line is
left for later unless the stream has ended. No event is dropped for how deep it
nests: past jsontext.MAX_DEPTH its structure is cut and its text kept
(jsontext.loads_kept), so a tool's deep result still shows, and is checked.

Older dialects: codex 0.43 tagged items with `item_type` (`assistant_message` for
the answer), which is read as today's `type`; codex 0.42 and older printed
`{"id", "msg"}` lines, which are only recognised (`legacy`), so that the turn
fails as `codex_too_old` rather than as a crash (sparring refuses such a codex
before it starts: codex.MINIMUM_VERSION).

turn/view.py's `seen` is the one reader of a turn's events; it reads them through here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.fence import unfence
from sparring.jsontext import MAX_DEPTH, loads, loads_kept, lone_surrogate, too_deep
from sparring.paths import read_own
from sparring.store import shapes

USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)
_TEXT_LIMIT = 400


class TurnView:
    """What one turn's events say so far."""
    def __init__(self) -> None:
        self.thread_id: str | None = None
        self.turn_started = False
        self.completed = False
        self.failure: str | None = None
        self.messages: list[str] = []
        self.notices: list[str] = []
        self.usage: dict[str, int] | None = None
        self.malformed = 0
        self.events = 0
        self.legacy = 0  # `{"id", "msg"}` lines: codex 0.42 or older
        self.readable = True  # False: no plain file of bounded size held the events
        self.end = 0  # how far into the bytes read the whole lines parsed reach
        self._items: dict[str, dict[str, Any]] = {}

    @property
    def final_message(self) -> str | None:
        return self.messages[-1] if self.messages else None

    @property
    def items(self) -> list[dict[str, Any]]:
        """Every item but Codex's own messages, as last reported: its commands (with their
        output), tool calls, searches, file changes, reasoning."""
        return list(self._items.values())

    @property
    def activities(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for item in self._items.values():
            found.extend(_describe(item))
        return found


# The most of a turn's events the runner reads: far more than any turn prints.
EVENTS_LIMIT = 256 * 1024 * 1024


def read(path: Path | str, finished: bool, start: int = 0) -> TurnView:
    """The turn's events so far (from byte `start` on, a whole line's start: what a reader
    that follows the turn has not read yet; `end` then counts from `start`). A file that is
    not a plain file of bounded size (Codex may swap it for a link, a FIFO or a sparse giant
    during its turn) reads as no events, and not `readable`."""
    raw = read_own(path, EVENTS_LIMIT, start=start)
    view = parse(raw or b"", finished)
    view.readable = raw is not None
    return view


def parse(data: bytes, finished: bool) -> TurnView:
    view = TurnView()
    lines = data.split(b"\n")
    view.end = len(data)
    if not finished and not data.endswith(b"\n"):
        lines = lines[:-1]  # Codex is still writing this line
        view.end = data.rfind(b"\n") + 1
    for raw in lines:
        if raw.strip():
            _apply(view, raw)
    return view


def _apply(view: TurnView, raw: bytes) -> None:
    try:
        event = loads_kept(raw)
    except ValueError:  # not JSON (a decoding error is a ValueError too)
        view.malformed += 1
        return
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        if isinstance(event, dict) and isinstance(event.get("msg"), dict) and "id" in event:
            view.legacy += 1
        else:
            view.malformed += 1
        return
    view.events += 1
    kind = event["type"]
    if kind == "thread.started":
        said = str(event.get("thread_id") or "")
        if shapes.is_thread_id(said):  # never a word codex's command line could take for a flag
            view.thread_id = said
    elif kind == "turn.started":
        view.turn_started = True
    elif kind in ("item.started", "item.updated", "item.completed"):
        _apply_item(view, event.get("item"), kind == "item.completed")
    elif kind == "turn.completed":
        view.completed = True
        view.usage = usage_of(event.get("usage"))
    elif kind == "turn.failed":
        error = event.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        view.failure = str(message or "turn.failed without a message")
    elif kind == "error":
        view.notices.append(str(event.get("message", "")))


# codex 0.43's item tags, as today's (`item_type` for `type`).
_OLD_TYPES = {"assistant_message": "agent_message"}


def _apply_item(view: TurnView, item: Any, done: bool) -> None:
    if not isinstance(item, dict):
        view.malformed += 1
        return
    if "type" not in item and isinstance(item.get("item_type"), str):
        item["type"] = _OLD_TYPES.get(item["item_type"], item["item_type"])
    key = str(item.get("id", f"anon_{len(view._items)}"))
    if item.get("type") == "agent_message":
        if done:
            view.messages.append(str(item.get("text", "")))
        return
    view._items.pop(key, None)  # re-insert so the list stays in order of last change
    view._items[key] = item


def usage_of(raw: Any) -> dict[str, int]:
    source = raw if isinstance(raw, dict) else {}
    return {key: _int(source.get(key)) for key in USAGE_KEYS}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _clip(value: Any) -> str:
    text = str(value or "").strip()
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def _describe(item: dict[str, Any]) -> list[dict[str, Any]]:
    kind = item.get("type")
    if kind == "command_execution":
        return [{"kind": "command", "command": _clip(item.get("command")),
                 "status": item.get("status"), "exit_code": item.get("exit_code")}]
    if kind == "file_change":
        changes = item.get("changes")
        if not isinstance(changes, list):
            changes = []
        return [{"kind": "file_change", "path": c.get("path"), "change": c.get("kind"),
                 "status": item.get("status")} for c in changes if isinstance(c, dict)]
    if kind == "reasoning":
        return [{"kind": "reasoning", "text": _clip(item.get("text"))}]
    if kind == "error":
        return [{"kind": "warning", "message": _clip(item.get("message"))}]
    if kind == "web_search":
        return [{"kind": "web_search", "query": _clip(item.get("query"))}]
    if kind == "mcp_tool_call":
        return [{"kind": "tool_call", "server": item.get("server"), "tool": item.get("tool"),
                 "status": item.get("status")}]
    if kind == "collab_tool_call":  # a sub-agent spawned, messaged, waited for or closed
        return [{"kind": "sub_agent", "tool": item.get("tool"),
                 "prompt": _clip(item.get("prompt")), "status": item.get("status")}]
    return [{"kind": str(kind or "item"), "status": item.get("status")}]


def parse_review(text: str | None) -> Any:
    """Codex's answer as JSON when it is JSON (a fenced block counts: fence.unfence), else
    None; nested past MAX_DEPTH, it is not read as JSON either."""
    if text is None:
        return None
    if text.lstrip().startswith("```"):
        text = unfence(text, lenient=True)
    try:
        found = loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past what we read
        return None
    # Nested too deep, or holding half a UTF-16 pair (which no report can hold): not JSON.
    return None if too_deep(found, MAX_DEPTH) or lone_surrogate(found) else found
