"""The turn state machine: which status may follow which.

A turn is `starting` until its runner has launched codex, `running` while
codex works, then ends in exactly one terminal status. Terminal statuses never
change again, so two processes that both notice the end (the runner and a
`poll` that finds the runner gone) cannot disagree about it.
"""

from __future__ import annotations

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


def can_move(current: str, new: str) -> bool:
    return new in _NEXT.get(current, frozenset())


def is_terminal(status: str) -> bool:
    return status in TERMINAL


def reported(status: str) -> str:
    return RUNNING if status == STARTING else status
