"""A session's summary: its turns, timings and tokens, and what codex ran with.

`finalize` writes it to summary.json, `status SESSION` prints it, and the report builds on it.
"""

from __future__ import annotations

import time

from sparring import states
from sparring.codex import rollout
from sparring.store.sessions import Session
from sparring.turn import budget

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

SUMMARY_FILE = "summary.json"


def summarize(session: Session, data: dict[str, Any]) -> dict[str, Any]:
    rows = [_turn_row(t) for t in data["turns"]]
    latest = data["turns"][-1] if data["turns"] else None
    return {
        "session": session.id,
        "session_dir": session.path,
        "skill": data["skill"],
        "status": states.reported(latest["status"]) if latest else "new",
        "rounds": max((t["round"] for t in data["turns"]), default=0),
        "turns": rows,
        "duration_s": round(sum(r["duration_s"] or 0 for r in rows), 2),
        "usage_total": budget.total_usage(data),
        "budget": budget.figures(data),
        "thread_id": data.get("thread_id"),
        "codex": data.get("codex", {}),
        "applied": _applied(data, latest),
        "sandbox": sandbox_of(latest),
        "finalized_at": time.time(),
    }


def _turn_row(turn: dict[str, Any]) -> dict[str, Any]:
    started, ended = turn.get("started_at"), turn.get("ended_at")
    return {
        "turn": turn["n"], "round": turn["round"], "purpose": turn["purpose"],
        "status": states.reported(turn["status"]),
        "started_at": started, "ended_at": ended,
        "duration_s": round(ended - started, 2) if started and ended else None,
        "usage": turn.get("usage"),
        "error": (turn.get("error") or {}).get("code"),
        **{key: turn["settings"][key] for key in ("effort", "model", "sandbox")},
    }


def sandbox_of(turn: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sandbox a turn ran in and where it came from (launch.py records it; a turn of an
    older sparring has only the mode)."""
    if turn is None:
        return None
    return turn.get("sandbox") or {"mode": turn["settings"]["sandbox"], "source": "unrecorded",
                                   "allowed": None, "allowed_by": None, "where": None}


def _applied(data: dict[str, Any], latest: dict[str, Any] | None) -> dict[str, Any]:
    """What codex ran with: its own rollout record when found, else what we passed."""
    if latest is None:
        return {"effort": None, "model": None, "sandbox": None, "source": "no codex turn"}
    passed = {key: latest["settings"][key] for key in ("effort", "model", "sandbox")}
    recorded = rollout.turn_context(data.get("thread_id"))
    if recorded:
        return {**passed, **recorded, "source": "codex rollout"}
    return {**passed, "source": "command line"}


def question(data: Mapping[str, Any]) -> str | None:
    """The question a session debates, as its first round's template was given it."""
    for turn in data["turns"]:
        found = (turn.get("template") or {}).get("question")
        if found:
            return str(found)
    found = data.get("question")
    return None if found is None else str(found)
