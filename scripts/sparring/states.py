"""The turn state machine: which status may follow which.

A turn is `starting` until its runner has launched codex, `running` while
codex works, then ends in exactly one terminal status. Terminal statuses never
change again, so two processes that both notice the end (the runner and a
`poll` that finds the runner gone) cannot disagree about it. `move` is the one
way a turn's status changes.
"""

from __future__ import annotations

from typing import Any

from sparring.records import TurnRecord

STARTING = "starting"
RUNNING = "running"
COMPLETED = "completed"
FAILED = "failed"
TIMEOUT = "timeout"
STALLED = "stalled"
STOPPED = "stopped"

TERMINAL = frozenset({COMPLETED, FAILED, TIMEOUT, STALLED, STOPPED})
# What poll/wait report: `starting` is shown as `running` (the turn is under way).
REPORTED = (RUNNING, COMPLETED, FAILED, TIMEOUT, STALLED, STOPPED)

_NEXT: dict[str, frozenset[str]] = {
    STARTING: frozenset({RUNNING, FAILED, STOPPED}),
    RUNNING: TERMINAL,
}


class IllegalTransition(RuntimeError):
    """A status change the machine does not allow: a bug, never a user's mistake."""


def can_move(current: str, new: str) -> bool:
    return new in _NEXT.get(current, frozenset())


def move(turn: TurnRecord, new: str, **fields: Any) -> None:
    """Set the turn's status to `new` (and `fields`, keys of a TurnRecord, with it), if the
    machine allows that move; otherwise IllegalTransition, and the turn is left as it was."""
    if not can_move(turn["status"], new):
        raise IllegalTransition(f"turn {turn.get('n')}: {turn['status']} cannot become {new}")
    turn.update(fields)  # type: ignore[typeddict-item]
    turn["status"] = new


def is_terminal(status: str) -> bool:
    return status in TERMINAL


def reported(status: str) -> str:
    return RUNNING if status == STARTING else status
