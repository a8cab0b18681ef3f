"""The poll/wait object: what a turn is doing, from what is on disk.

`observe` is also the safety net for a runner that died: when the runner is
gone it enforces the turn's limits itself and records the end, so `poll`
never reports `running` for a codex that no longer runs.
"""

from __future__ import annotations

import time
from typing import Any

from sparring import budget, engine, events, process, states, turns
from sparring.errors import SparringError
from sparring.session import Session, find_turn, latest_turn

MAX_ACTIVITIES = 20
# A runner gets this long to record its own identity before we doubt it.
_RUNNER_GRACE_S = 15.0


def current_turn(session: Session, data: dict[str, Any]) -> dict[str, Any]:
    turn = latest_turn(data)
    if turn is None:
        raise SparringError("invalid_transition", f"session {session.id} has no turn yet",
                            f"start round one with `sparring start {session.id}`")
    return turn


def require_idle(session: Session, data: dict[str, Any]
                 ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The session and its latest turn, which has ended (a dead runner's turn is recorded
    first); `session_busy` while codex still works on it."""
    turn = latest_turn(data)
    if turn is not None and not states.is_terminal(turn["status"]):
        data, turn, _ = observe(session)
        if not states.is_terminal(turn["status"]):
            raise SparringError("session_busy", f"round {turn['round']} is still running",
                                f"wait for it with `sparring wait {session.id}` or end it with "
                                f"`sparring stop {session.id}`")
    return data, turn


def observe(session: Session) -> tuple[dict[str, Any], dict[str, Any], events.TurnView]:
    """(session data, latest turn, its events), after repairing a turn whose runner died."""
    data = session.load()
    turn = current_turn(session, data)
    if not states.is_terminal(turn["status"]) and _runner_gone(turn):
        _finish_orphan(session, turn)
        data = session.load()
        turn = find_turn(data, turn["n"])
    finished = states.is_terminal(turn["status"])
    return data, turn, events.read(session.turn_file(turn["n"], turns.EVENTS), finished)


def _runner_gone(turn: dict[str, Any]) -> bool:
    runner = process.Identity.from_dict(turn.get("runner"))
    if runner is None:
        return time.time() - float(turn["created_at"]) > _RUNNER_GRACE_S
    return not process.is_alive(runner)


def _finish_orphan(session: Session, turn: dict[str, Any]) -> None:
    """The runner is gone: end codex if it is past a limit, record the end once it is gone."""
    codex = process.Identity.from_dict(turn.get("codex"))
    if process.is_alive(codex):
        reason = turns.deadline_passed(session, turn, time.time())
        if reason is None:
            return  # codex still works within its limits; report it running
        process.stop_tree(codex)
        turns.record_end(session, turn["n"], exit_code=None, end_reason=reason)
        return
    turns.record_end(session, turn["n"], exit_code=None, end_reason="runner_died")


def to_dict(session: Session, data: dict[str, Any], turn: dict[str, Any],
            view: events.TurnView) -> dict[str, Any]:
    now = time.time()
    status = states.reported(turn["status"])
    started = turn.get("started_at") or turn["created_at"]
    withheld = _withheld(data, turn)
    activities = _redacted(view.activities) if withheld else view.activities
    review = None if withheld else _review(turn, view)
    if review is not None:
        _note_reveal(session, data, turn)
    return {
        "session": session.id,
        "session_dir": str(session.dir),
        "skill": data["skill"],
        "status": status,
        "round": turn["round"],
        "turn": turn["n"],
        "purpose": turn["purpose"],
        "thread_id": turn.get("thread_id") or view.thread_id or data.get("thread_id"),
        "elapsed_s": round((turn.get("ended_at") or now) - started, 2),
        "last_event_s": (round(now - turns.last_activity(session, turn), 2)
                         if status == states.RUNNING else None),
        "activities": _activities(turn, view, activities, now)[-MAX_ACTIVITIES:],
        "activities_total": len(activities),
        "review": review,
        "review_withheld": withheld,
        "usage": {"round": turn.get("usage"), "total": turns.total_usage(data),
                  "budget": budget.figures(data)},
        "error": turn.get("error"),
        "recoverable": bool(turn.get("recoverable")),
        "settings": turn["settings"],
        "guard": turn.get("guard"),
        "malformed_lines": view.malformed,
        "files": turns.files(session, turn["n"]),
    }


def _activities(turn: dict[str, Any], view: events.TurnView,
                found: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    notices = [{"kind": "notice", "message": m} for m in view.notices[-3:]]
    if found or notices or states.is_terminal(turn["status"]):
        return found + notices
    # Never a bare "running": say what stage the turn is in.
    started = turn.get("started_at") or turn["created_at"]
    if not view.turn_started:
        what = "codex is starting" if turn["status"] == states.STARTING else (
            "codex started; waiting for its first event")
    else:
        what = "codex is thinking; no tool call or reasoning summary yet"
    return [{"kind": "waiting", "message": f"{what} ({now - started:.0f} s)"}]


def _review(turn: dict[str, Any], view: events.TurnView) -> dict[str, Any] | None:
    if turn["status"] != states.COMPLETED:
        return None
    text = view.final_message
    return {"text": text, "data": turns.parse_review(text)}


def _withheld(data: dict[str, Any], turn: dict[str, Any]) -> str | None:
    """Why Codex's answer stays hidden: Claude has not sealed its own analysis yet (in a
    sealed workflow no answer of Codex's, of any round, is shown before the seal)."""
    state = engine.state(data)
    if not state["barrier"] or state["seal"]:
        return None
    return ("Codex's answer stays hidden until you seal your own analysis: write it to a file, "
            f"then `sparring seal {data['id']} --file FILE`")


def _redacted(activities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Reasoning summaries would leak Codex's view before Claude has formed its own.
    return [{**a, "text": "(withheld until you seal your analysis)"}
            if a["kind"] == "reasoning" else a for a in activities]


def _note_reveal(session: Session, data: dict[str, Any], turn: dict[str, Any]) -> None:
    """The first time a sealed session shows Codex's round-one answer is the reveal."""
    state = engine.state(data)
    if not state["barrier"] or state["revealed_at"]:
        return
    with session.update() as locked:
        engine.state(locked)["revealed_at"] = engine.state(locked)["revealed_at"] or time.time()
