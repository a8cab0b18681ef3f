"""A turn's life seen from outside its runner: is it still running, and making sure it ends.

`observe` is the safety net for a runner that died: when the runner is gone it ends what
is left of the turn and records the end, so `poll` never reports `running` for a codex
that no longer runs. `require_idle` is the busy check of every verb that starts a turn;
`stop_running` ends the running turn (and a re-ask queued meanwhile).

Which turn runs, and which processes are its, comes from the runner's own record
(store/runs.py), out of Codex's reach; session.json must agree with it (`agreed`), and a
process is only ever signalled on the record's word, never on session.json's.
"""

from __future__ import annotations

import signal
import time
from typing import Any

from sparring import process, states
from sparring.codex import events
from sparring.errors import SparringError
from sparring.records import TurnRecord
from sparring.store import runs
from sparring.store.sessions import Session, find_turn, latest_turn
from sparring.store.statefile import locked
from sparring.turn import turns, view

# A runner gets this long to record its own identity before we doubt it.
_RUNNER_GRACE_S = 15.0
# How long a runner asked to stop gets to end its turn and record that, before we do.
_RUNNER_RECORD_S = 10.0


def current_turn(session: Session, data: dict[str, Any]) -> TurnRecord:
    turn = latest_turn(data)
    if turn is None:
        raise SparringError("invalid_transition", f"session {session.id} has no turn yet",
                            f"start round one with `sparring start {session.id}`")
    return turn


def require_idle(session: Session, data: dict[str, Any]
                 ) -> tuple[dict[str, Any], TurnRecord | None]:
    """The session and its latest turn, which has ended (a dead runner's turn is recorded
    first); `session_busy` while codex still works on it, state_corrupt when session.json
    disagrees with the runner's record."""
    data, _ = agreed(session)
    turn = latest_turn(data)
    if turn is not None and not states.is_terminal(turn["status"]):
        data, turn = settle(session)  # agreed() again: a runner may have died meanwhile
        if not states.is_terminal(turn["status"]):
            raise SparringError("session_busy", f"round {turn['round']} is still running",
                                f"wait for it with `sparring wait {session.id}` or end it with "
                                f"`sparring stop {session.id}`")
    return data, turn


def observe(session: Session) -> tuple[dict[str, Any], TurnRecord, events.TurnView]:
    """(session data, latest turn, its events), after repairing a turn whose runner died
    (settle)."""
    data, turn = settle(session)
    return data, turn, view.seen(session, turn["n"], states.is_terminal(turn["status"]))


def settle(session: Session) -> tuple[dict[str, Any], TurnRecord]:
    """(session data, latest turn), once a turn whose runner died is recorded as ended:
    observe without reading the turn's events, for a caller that does not show them (a
    turn's events grow to megabytes, and `wait` asks twenty times a second).
    state_corrupt when session.json disagrees with the runner's own record."""
    data, turn, _ = _settled(session)
    return data, turn


def _settled(session: Session) -> tuple[dict[str, Any], TurnRecord, runs.Run | None]:
    data, run = agreed(session)
    turn = current_turn(session, data)
    if not states.is_terminal(turn["status"]) and _runner_gone(turn, run):
        _finish_orphan(session, turn, run)
        data, run = session.load(), None  # the record went with the recorded end
        turn = find_turn(data, turn["n"])
    return data, turn, run


def agreed(session: Session) -> tuple[dict[str, Any], runs.Run | None]:
    """session.json and the runner's own record (store/runs.py), which must agree on the
    running turn. When they do not, the record's processes are ended (nothing of a turn
    session.json does not show runs on) and the answer is state_corrupt."""
    data, run = session.load(), _record(session)
    problem = _problem(data, run)
    if problem is not None:
        # Runners change both under the session lock: a disagreement seen between their two
        # writes is not one. Look again under the lock before believing it.
        with locked(session.state.path):
            data, run = session.load(), _record(session)
            problem = _problem(data, run)
    if problem is not None:
        raise disagree(session, run, problem)
    return data, run


def _record(session: Session) -> runs.Run | None:
    """The runner's record (runs.read), which exists only while a turn runs."""
    return runs.read(session.path)


def disagree(session: Session, run: runs.Run | None, problem: str) -> SparringError:
    """End what the runner's record names and say session.json is corrupt. The runner is
    killed outright: it must not write its turn's end into a file that disagrees."""
    if run is not None:
        process.send(run.runner, signal.SIGKILL)
        process.end(run.scope())
    return runs.disagreement(session.path, problem)


def _problem(data: dict[str, Any], run: runs.Run | None) -> str | None:
    """What session.json says that the runner's record does not, or None. The record
    exists while its turn has not ended (whoever records the end removes it under the same
    lock), so its turn missing, ended while the runner runs, or followed by another turn,
    was not sparring's doing."""
    latest = latest_turn(data)
    if run is None:
        return _unknown_runner(latest, run)
    mine = next((t for t in data["turns"] if run.names(t)), None)
    if mine is None:
        return f"it does not list turn {run.turn}, which sparring's runner {_runs(run)}"
    return _against_record(mine, latest, run) or _unknown_runner(latest, run)


def _against_record(mine: TurnRecord, latest: TurnRecord | None,
                    run: runs.Run) -> str | None:
    """What session.json says of `mine`, the turn the record is about, that it does not."""
    if mine is not latest:
        return (f"it lists turn {(latest or mine)['n']} after turn {run.turn}, whose end "
                "sparring's runner never recorded")
    if states.is_terminal(mine["status"]):
        return (f"it says turn {run.turn} {mine['status']}, but sparring's runner never "
                "recorded that")
    named = process.Identity.from_dict(mine.get("runner"))
    if named is not None and run.runner is not None and not named.same(run.runner):
        return f"it names another runner for turn {run.turn} than the one running it"
    return None


def _unknown_runner(latest: TurnRecord | None, run: runs.Run | None) -> str | None:
    """A running turn under a live runner no record of sparring's is about. (Under a dead
    one it is a runner killed as it recorded its end: observe repairs it, signalling
    nothing.)"""
    if latest is None or states.is_terminal(latest["status"]) or not latest.get("runner"):
        return None
    if run is not None and run.names(latest):
        return None
    if not process.is_alive(process.Identity.from_dict(latest["runner"])):
        return None
    return (f"it says turn {latest['n']} is {latest['status']} under a runner sparring has no "
            "record of")


def _runs(run: runs.Run) -> str:
    return "is running" if run.runner_alive() else "ran"


def _runner_gone(turn: TurnRecord, run: runs.Run | None) -> bool:
    if run is not None and run.names(turn) and run.runner is not None:
        return not run.runner_alive()
    if turn.get("runner"):  # no record of it: a runner killed as it recorded the end
        return not process.is_alive(process.Identity.from_dict(turn["runner"]))
    # Its runner is not launched yet: it gets a while to say so.
    return time.time() - float(turn["created_at"]) > _RUNNER_GRACE_S


def _finish_orphan(session: Session, turn: TurnRecord, run: runs.Run | None) -> None:
    """The runner is gone: nothing of its turn runs on (its watchdog has most likely ended
    it already); the end is recorded as the runner's death, or as the limit codex passed."""
    reason = None
    if run is not None and process.is_alive(run.codex):
        reason = turns.deadline_passed(session, turn, time.time())
    if run is not None:
        process.end(run.scope())
    turns.record_end(session, turn["n"], exit_code=None, end_reason=reason or "runner_died",
                     follow_up=_ended(session, run))
    if run is not None:
        runs.remove(session.path, run.turn, run.turn_created_at)


def _ended(session: Session, run: runs.Run | None) -> turns.FollowUp:
    """For record_end: the runner's record goes with the end, under the same lock."""
    def follow_up(data: dict[str, Any], turn: TurnRecord) -> None:
        if run is not None and run.names(turn):
            runs.remove(session.path, run.turn, run.turn_created_at)
    return follow_up


def stop_running(session: Session) -> bool:
    """Stop the session's running turn, and a re-ask queued meanwhile; nothing of them runs
    on after (what the runner's record names is ended even if the runner is gone)."""
    agreed(session)
    stopped = False
    while (n := _flag_latest(session)) is not None:
        _end(session, n, _record(session))
        stopped = True
    return stopped


def _flag_latest(session: Session) -> int | None:
    # The latest turn under the lock, not the one we saw earlier: the runner may have
    # ended it and queued a re-ask in between.
    with session.update() as data:
        turn = latest_turn(data)
        if turn is None or states.is_terminal(turn["status"]):
            return None
        turn["stop_requested"] = True
        return int(turn["n"])


def _end(session: Session, n: int, run: runs.Run | None) -> None:
    """Ask the runner to end turn `n` (it ends every process of the turn and records the
    end); if it does not within _RUNNER_RECORD_S, or is gone, end them here and record it."""
    if run is not None and run.turn == n and process.send(run.runner, signal.SIGTERM):
        _await_end(session, n, run)
    if run is not None:
        process.end(run.scope())  # the runner too, if it did not finish in time
    if not states.is_terminal(find_turn(session.load(), n)["status"]):
        turns.record_end(session, n, exit_code=None, end_reason="stopped",
                         follow_up=_ended(session, run))
    if run is not None:
        runs.remove(session.path, run.turn, run.turn_created_at)


def _await_end(session: Session, n: int, run: runs.Run) -> None:
    """Until the runner has recorded the end and exited, for at most _RUNNER_RECORD_S."""
    deadline = time.monotonic() + _RUNNER_RECORD_S
    while time.monotonic() < deadline and run.runner_alive():
        time.sleep(0.05)
