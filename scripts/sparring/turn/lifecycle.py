"""A turn's life seen from outside its runner: is it still running, and making sure it ends.

`observe` is the safety net for a runner that died: when the runner is gone it enforces
the turn's limits itself and records the end, so `poll` never reports `running` for a
codex that no longer runs. `require_idle` is the busy check of every verb that starts a
turn; `stop_running` ends the running turn (and a re-ask queued meanwhile).
"""

from __future__ import annotations

import time
from typing import Any

from sparring import process, states
from sparring.codex import events
from sparring.errors import SparringError
from sparring.records import TurnRecord
from sparring.store.session import Session, find_turn, latest_turn
from sparring.turn import record as turns

# A runner gets this long to record its own identity before we doubt it.
_RUNNER_GRACE_S = 15.0
# How long the runner gets to record the end itself before we record it.
_RUNNER_RECORD_S = 5.0


def current_turn(session: Session, data: dict[str, Any]) -> TurnRecord:
    turn = latest_turn(data)
    if turn is None:
        raise SparringError("invalid_transition", f"session {session.id} has no turn yet",
                            f"start round one with `sparring start {session.id}`")
    return turn


def require_idle(session: Session, data: dict[str, Any]
                 ) -> tuple[dict[str, Any], TurnRecord | None]:
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


def observe(session: Session) -> tuple[dict[str, Any], TurnRecord, events.TurnView]:
    """(session data, latest turn, its events), after repairing a turn whose runner died."""
    data = session.load()
    turn = current_turn(session, data)
    if not states.is_terminal(turn["status"]) and _runner_gone(turn):
        _finish_orphan(session, turn)
        data = session.load()
        turn = find_turn(data, turn["n"])
    finished = states.is_terminal(turn["status"])
    return data, turn, events.read(session.turn_file(turn["n"], turns.EVENTS), finished)


def _runner_gone(turn: TurnRecord) -> bool:
    runner = process.Identity.from_dict(turn.get("runner"))
    if runner is None:
        return time.time() - float(turn["created_at"]) > _RUNNER_GRACE_S
    return not process.is_alive(runner)


def _finish_orphan(session: Session, turn: TurnRecord) -> None:
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


def stop_running(session: Session) -> bool:
    """Stop the session's running turn; a re-ask queued meanwhile is stopped too."""
    stopped = False
    while (target := _flag_latest(session)) is not None:
        _end(session, *target)
        stopped = True
    return stopped


def _flag_latest(session: Session) -> tuple[int, Any, Any] | None:
    # The latest turn under the lock, not the one we saw earlier: the runner may have
    # ended it and queued a re-ask in between.
    with session.update() as data:
        turn = latest_turn(data)
        if turn is None or states.is_terminal(turn["status"]):
            return None
        turn["stop_requested"] = True
        return turn["n"], turn.get("codex"), turn.get("runner")


def _end(session: Session, n: int, codex: Any, runner: Any) -> None:
    """End codex's tree and make sure the end is recorded (by the runner, else by us)."""
    process.stop_tree(process.Identity.from_dict(codex))
    deadline = time.monotonic() + _RUNNER_RECORD_S
    while time.monotonic() < deadline:
        if states.is_terminal(find_turn(session.load(), n)["status"]):
            return
        if not process.is_alive(process.Identity.from_dict(runner)):
            break
        time.sleep(0.05)
    process.stop_tree(process.Identity.from_dict(runner))
    turns.record_end(session, n, exit_code=None, end_reason="stopped")
