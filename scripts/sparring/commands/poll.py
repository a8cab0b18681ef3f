"""`sparring poll` (never blocks) and `sparring wait` (blocks until the turn ends)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from sparring import states
from sparring.codex import events
from sparring.errors import SparringError
from sparring.records import TurnRecord
from sparring.store import sessions
from sparring.store.inputs import read_input
from sparring.store.sessions import Session
from sparring.turn import barrier, lifecycle, view
from sparring.turn import seal as sealing
from sparring.turn.brief import brief, lean_status
from sparring.turn.progress import Progress
from sparring.workflows import registry

# Fast enough that `wait` returns well within half a second of the turn's end.
_WAIT_STEP_S = 0.05


def poll(here: str, session: str, full: bool = False) -> dict[str, Any]:
    return polled(sessions.resolve(session, here), here, full)


def polled(session: Session, cwd: str, full: bool) -> dict[str, Any]:
    data, turn, seen = lifecycle.observe(session)
    return _shown(session, data, turn, _revealed(session, data, turn, seen), full, cwd)


def wait(here: str, session: str, timeout: float, full: bool = False,
         seal_file: str | None = None, quiet: bool = False) -> dict[str, Any]:
    """Until the turn ends or `timeout` passes; with `seal_file`, Claude's analysis sealed
    first (what `sparring seal` does). Unless `quiet`, what Codex does meanwhile is printed
    to stderr as it happens (turn/progress.py)."""
    analysis = read_input(seal_file, "--seal") if seal_file is not None else None
    found = sessions.resolve(session, here)
    sealed = sealing.seal(session, here, analysis) if analysis is not None else None
    return waited(found, here, timeout, full, sealed, None if quiet else Progress(_stderr))


def _stderr(line: str) -> None:
    sys.stderr.write(line)
    sys.stderr.flush()  # as it happens: Claude Code shows the lines while the call runs


def waited(session: Session, cwd: str, timeout: float, full: bool,
           sealed: dict[str, Any] | None, progress: Progress | None = None) -> dict[str, Any]:
    """The poll object once the turn ended, or at `timeout`. While the turn runs, only the
    session, the runner and what the events gained since the last look (for `progress`)
    are read; the whole events once, at the end (they grow to megabytes)."""
    deadline = time.monotonic() + timeout
    data, turn = lifecycle.settle(session)
    if states.is_terminal(turn["status"]):
        progress = None  # it ended before this call: its answer says it all
    while True:
        over = states.is_terminal(turn["status"]) or time.monotonic() >= deadline
        if progress is not None:
            progress.follow(session, data, turn, last=over)
        if over:
            data, turn, seen = lifecycle.observe(session)
            if progress is not None:
                progress.close(data, turn)
            result = _shown(session, data, turn, _revealed(session, data, turn, seen), full,
                            cwd)
            if not states.is_terminal(turn["status"]):
                result["wait_timed_out"] = True
            if sealed is not None:
                result["sealed"] = True
                result["independence"] = sealed["independence"]
            return result
        time.sleep(_WAIT_STEP_S)
        data, turn = lifecycle.settle(session)


def _revealed(session: Session, data: dict[str, Any], turn: TurnRecord,
              seen: events.TurnView) -> dict[str, Any]:
    """The poll object; when it shows Codex's answer, that is recorded as its reveal."""
    found = view.to_dict(session, data, turn, seen)
    if found["review"] is not None:
        barrier.reveal(session, data)
    return found


def _shown(session: Session, data: dict[str, Any], turn: TurnRecord,
           found: dict[str, Any], full: bool, cwd: str | Path) -> dict[str, Any]:
    """The poll object (brief unless `full`), and once Codex's turn has ended, where the
    workflow stands when it says (its `status` part, as arch-debate's and deep-discussion's
    do): one call instead of two a round."""
    shown = found if full else brief(found)
    if not states.is_terminal(turn["status"]) or turn["purpose"] == "synthesis":
        return shown
    flow = registry.WORKFLOWS.get(data["skill"])  # one sparring does not know is only watched
    status = flow.part("status") if flow is not None else None
    if flow is None or status is None or not flow.status_key or not data.get(flow.status_key):
        return shown
    try:
        found = _without_repeats(status(session, data, cwd))
        shown[flow.status_key] = found if full else lean_status(found)
    except SparringError as exc:  # the turn is reported all the same (its guard above all)
        shown[flow.status_key] = {"error": exc.to_dict()}
        return shown
    if flow.status_replaces_review and not full:
        shown.pop("review", None)  # its status carries Codex's message
    return shown


# What the poll object around it already says, or what never changes within a session.
_REPEATED = ("session", "question", "topic", "effort", "model", "codex_turn")


def _without_repeats(status: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in status.items() if key not in _REPEATED}
