"""A session's summary: its turns, timings and tokens, and what codex ran with.

`finalize` writes it to summary.json, `status SESSION` prints it, and the report builds on it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from sparring import states
from sparring.codex import rollout
from sparring.store import lastrun
from sparring.store.sessions import Session
from sparring.turn import budget

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
        "codex_ran": codex_ran(data),
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
        "ran": turn.get("ran"),
    }


def sandbox_of(turn: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sandbox a turn ran in and where it came from (launch.py records it; a turn of an
    older sparring has only the mode)."""
    if turn is None:
        return None
    return turn.get("sandbox") or {"mode": turn["settings"]["sandbox"], "source": "unrecorded",
                                   "allowed": None, "allowed_by": None, "where": None}


def _applied(data: dict[str, Any], latest: dict[str, Any] | None) -> dict[str, Any]:
    """What codex ran the latest turn with: what its rollout recorded (`ran`, at the turn's
    end; a turn of an older sparring: the rollout read now), over what sparring passed (a
    field the rollout leaves out is what was passed)."""
    if latest is None:
        return {"effort": None, "model": None, "sandbox": None, "source": "no codex turn"}
    passed = {key: latest["settings"][key] for key in ("effort", "model", "sandbox")}
    recorded = latest["ran"] if "ran" in latest else rollout.turn_context(
        data.get("thread_id"))
    if recorded:
        return {**passed, **recorded, "source": "codex rollout"}
    return {**passed, "source": "command line"}


def ran_with(turn: dict[str, Any]) -> dict[str, Any]:
    """The model and effort a turn ran with: its rollout's, over what sparring passed;
    `recorded` when codex's rollout said so."""
    ran = turn.get("ran") or {}
    passed = turn["settings"]
    return {"model": ran.get("model") or passed.get("model"),
            "effort": ran.get("effort") or passed.get("effort"), "recorded": bool(ran)}


def codex_ran(data: dict[str, Any]) -> dict[str, Any]:
    """What Codex ran with over the session, as the report says it (`line`: "Codex:
    gpt-5.5, effort high, every round"), and `warnings`: the model or effort changed between
    rounds, or is not what the user's earlier debate ran with."""
    turns = [t for t in data["turns"] if t.get("ran") or t.get("ended_at")]
    if not turns:
        return {"line": "Codex did not run", "warnings": []}
    spans: list[tuple[str, list[int]]] = []
    for turn in turns:
        said = _said(ran_with(turn))
        if spans and spans[-1][0] == said:
            spans[-1][1].append(turn["round"])
        else:
            spans.append((said, [turn["round"]]))
    if len(spans) == 1:
        line = f"Codex: {spans[0][0]}, every round"
    else:
        line = "Codex: " + "; ".join(f"{said} in {_rounds(rounds)}" for said, rounds in spans)
    warnings = [f"Codex's model or effort changed between rounds ({line[7:]})"] \
        if len(spans) > 1 else []

    first = next((t for t in turns if t.get("ran")), None)
    earlier = lastrun.differs(ran_with(first), data.get("codex_before")) if first else None
    return {"line": line, "warnings": warnings + ([earlier] if earlier else [])}


def _said(ran: dict[str, Any]) -> str:
    model = ran["model"] or "codex's default model"
    if not ran["recorded"]:
        model += " (not recorded by codex)"
    return f"{model}, effort {ran['effort'] or 'the model default'}"


def _rounds(rounds: list[int]) -> str:
    kept = sorted(set(rounds))
    if len(kept) == 1:
        return f"round {kept[0]}"
    return f"rounds {kept[0]}–{kept[-1]}" if kept == list(range(kept[0], kept[-1] + 1)) \
        else "rounds " + ", ".join(map(str, kept))


def question(data: Mapping[str, Any]) -> str | None:
    """The question a session debates, as its first round's template was given it."""
    for turn in data["turns"]:
        found = (turn.get("template") or {}).get("question")
        if found:
            return str(found)
    found = data.get("question")
    return None if found is None else str(found)
