"""What `wait` prints while Codex works: one short line per command Codex runs, file it
changes, search or tool call it makes, and reconnect notice, as it happens, each with the
time since the turn began and the turn's tokens so far (codex records them in its rollout
after each model request: codex/rollout.usage); a line after a minute without one, so a
healthy long turn reads apart from a stuck one; a last line with how the turn ended and
what it cost.

They go to stderr, flushed line by line: the verb's answer stays one JSON document alone on
stdout. Claude Code's Bash tool shows both streams to the model and to the user, so the
lines are bounded (MAX_LINES of at most LINE_CHARS, then one "… N more" count) and Codex's
text in them is made inert (`inert`): every line is a shell comment (`# `), whose text has
no control or format character left and is cut short, labelled `codex` (the runner's own
lines are labelled `sparring`). Pasted into a shell, a line runs nothing; no line is a
command the runner offers (docs/security.md, "Commands the runner prints").

Codex's reasoning is never printed (before the seal it is withheld: view.py), nor its
tokens until its answer may be shown (brief.py withholds them with it).
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable
from typing import Any

from sparring import states
from sparring.codex import rollout
from sparring.records import TurnRecord
from sparring.store.sessions import Session
from sparring.turn import barrier, turns, view

MAX_LINES = 20
LINE_CHARS = 100
# How long without a line before one says the turn goes on, and how often the events are
# read meanwhile (only what was added since the last read).
QUIET_S = 60.0
READ_EVERY_S = 0.5
# How often the tokens so far are read from Codex's rollout, at most (for a line).
TOKENS_EVERY_S = 5.0
# Control and format characters, by Unicode's own categories (Cc, Cf, Cs, Zl, Zp: C0, C1,
# soft hyphen, bidi controls, zero-width marks, interlinear annotations, line and paragraph
# separators, tags, lone surrogates), whichever Unicode the interpreter knows: a terminal or
# a reader could be misled by any of them.
_UNSAFE = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


def inert(text: Any, room: int) -> str:
    """Codex's text on one line: whitespace runs as one space, every control or format
    character as `?`, cut to `room` characters (the last one `…` when cut)."""
    flat = " ".join(str(text or "").split())
    if len(flat) > room:
        flat = flat[: max(room - 1, 0)] + "…"
    return "".join("?" if unicodedata.category(c) in _UNSAFE else c for c in flat)


def clock(seconds: float) -> str:
    """Elapsed time as `42s`, `3m05s`, `1h02m`."""
    whole = max(int(seconds), 0)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def count(tokens: int) -> str:
    """Tokens as `850`, `12.3k`, `1.20M`."""
    if tokens < 1000:
        return str(tokens)
    return f"{tokens / 1000:.1f}k" if tokens < 1_000_000 else f"{tokens / 1_000_000:.2f}M"


def said(item: dict[str, Any]) -> list[str]:
    """What one item of Codex's shows as a line's text (before `inert`): nothing for its
    reasoning, its messages, its plans."""
    kind = item.get("type")
    if kind == "command_execution":
        return [f"ran {item.get('command') or ''}"]
    if kind == "file_change":
        changes = item.get("changes")
        return [f"changed {c.get('path')} ({c.get('kind')})"
                for c in (changes if isinstance(changes, list) else []) if isinstance(c, dict)]
    if kind == "web_search":
        return [f"searched {item.get('query') or ''}"]
    if kind == "mcp_tool_call":
        return [f"called {item.get('server')}.{item.get('tool')}"]
    if kind == "collab_tool_call":
        return [f"sub-agent {item.get('tool')}"]
    return []


class Progress:
    """The lines of one `wait`, written through `write` (a line, its newline included)."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.turn: int | None = None
        self.offset = 0
        self.items: set[str] = set()
        self.shown = 0
        self.left = 0
        self.commands = 0
        self.read_at = 0.0
        self.line_at = time.monotonic()
        self.thread: str | None = None
        self.spent: int | None = None
        self.spent_at = -TOKENS_EVERY_S
        self.data: dict[str, Any] = {}

    def follow(self, session: Session, data: dict[str, Any], turn: TurnRecord,
               last: bool = False) -> None:
        """Lines for what Codex did since the last call (at most every READ_EVERY_S, but
        for the `last` call, once the turn ended or the wait is over)."""
        now = time.monotonic()
        if now - self.read_at < READ_EVERY_S and not last:
            return
        self.read_at, self.data = now, data
        if turn["n"] != self.turn:  # a new turn (a re-ask, the next round): from its start
            self.turn, self.offset, self.items = turn["n"], 0, set()
            self.thread, self.spent = turn.get("thread_id"), None
            self._line("sparring", turn, f"following Codex's turn {turn['n']} (round "
                       f"{turn['round']}); lines marked codex are its own, shortened")
        found = view.seen(session, turn["n"], finished=False, start=self.offset)
        self.offset += found.end
        self.thread = self.thread or found.thread_id
        for item in found.items:
            self._item(turn, item)
        for notice in found.notices:
            self._line("codex", turn, f"notice: {notice}")
        if now - self.line_at >= QUIET_S and not states.is_terminal(turn["status"]):
            quiet = clock(time.time() - view.last_activity(session, turn))
            self._line("sparring", turn, f"Codex still works; commands so far: "
                       f"{self.commands}; its last event {quiet} ago")

    def _item(self, turn: TurnRecord, item: dict[str, Any]) -> None:
        """Its lines, once: an item is printed again as it goes on (started, completed)."""
        key = item.get("id")
        if isinstance(key, str):
            if key in self.items:
                return
            self.items.add(key)
        self.commands += item.get("type") == "command_execution"
        for text in said(item):
            self._line("codex", turn, text)

    def close(self, data: dict[str, Any], turn: TurnRecord) -> None:
        """The last line, always written: how the turn stands, what it cost (once its answer
        may be shown) and how many lines were left out."""
        if self.turn is None:
            return  # the turn had ended before this wait began: the answer says it all
        self.data = data
        status = states.reported(turn["status"])
        what = "still runs: wait again" if status == states.RUNNING else f"ended: {status}"
        usage = turn.get("usage") or {}
        if usage and barrier.withheld(data) is None:
            spent = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
            what += f", {spent:,} tokens this round"
        if self.left:
            what += f"; … {self.left} more not shown"
        self.write(self._text("sparring", turn, what, tokens=False))

    def _line(self, who: str, turn: TurnRecord, text: str) -> None:
        self.line_at = time.monotonic()
        if self.shown >= MAX_LINES:
            self.left += 1
            return
        self.shown += 1
        self.write(self._text(who, turn, text))

    def _text(self, who: str, turn: TurnRecord, text: str, tokens: bool = True) -> str:
        started = float(turn.get("started_at") or turn["created_at"])
        ended = turn.get("ended_at")
        head = f"# {who} {clock((float(ended) if ended else time.time()) - started)}"
        spent = self._tokens(turn) if tokens else None
        head += f", {count(spent)} tokens: " if spent is not None else ": "
        return head + inert(text, LINE_CHARS - len(head)) + "\n"

    def _tokens(self, turn: TurnRecord) -> int | None:
        """This turn's tokens so far (input and output), from Codex's rollout; None before
        Codex's answer may be shown (they are withheld with it) or before any is recorded."""
        if barrier.withheld(self.data) is not None:
            return None
        now = time.monotonic()
        if now - self.spent_at >= TOKENS_EVERY_S:
            self.spent_at = now
            so_far = turns.round_usage(self.data, turn, rollout.usage(self.thread), self.thread)
            if so_far is not None:
                self.spent = so_far.get("input_tokens", 0) + so_far.get("output_tokens", 0)
        return self.spent
