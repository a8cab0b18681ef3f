"""What Codex did, by round, as the evidence checks read it (evidence.Record).

From each turn's recorded events (turn/view.py's `seen`, out of the project): the texts in
which a cited command or URL counts as seen that round (the commands Codex ran, its
searches and tool calls), and what Codex had opened by each round on the thread that
answered it (each command or call with what it got back), for the check that a file Codex
cites is one it read. Earlier turns of the same thread count: Codex has their output in
its context when it resumes; a fresh thread (a challenge) starts with nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sparring import evidence
from sparring.records import AnySession, TurnRecord
from sparring.store.sessions import Session
from sparring.turn.view import seen


def record(session: Session, data: AnySession,
           round_of: Callable[[TurnRecord], int] | None = None) -> evidence.Record:
    """The session's turns, by round (`round_of` a turn; default its `round`)."""
    activity: dict[int, list[str]] = {}
    reads: dict[int, list[tuple[str, str]]] = {}
    threads: dict[str, list[tuple[str, str]]] = {}
    for turn in data["turns"]:
        n = round_of(turn) if round_of else int(turn["round"])
        pairs = [pair for item in seen(session, turn["n"]).items
                 if (pair := _pair(item)) is not None]
        activity.setdefault(n, []).extend(command for command, _ in pairs)
        thread = threads.setdefault(str(turn.get("thread_id") or f"turn-{turn['n']}"), [])
        thread.extend(pairs)
        reads[n] = list(thread)
    return evidence.Record(activity, reads)


def _pair(item: dict[str, Any]) -> tuple[str, str] | None:
    """What an item ran or called, and what came back, as text."""
    kind = item.get("type")
    if kind == "command_execution":
        return str(item.get("command") or ""), str(item.get("aggregated_output") or "")
    if kind in ("reasoning", "file_change", "error", "todo_list"):
        return None
    said = {k: v for k, v in item.items() if k not in ("id", "type", "status", "result")}
    result = item.get("result")
    return (json.dumps(said, ensure_ascii=False, default=str),
            result if isinstance(result, str) else json.dumps(result, ensure_ascii=False,
                                                               default=str))
