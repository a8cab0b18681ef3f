"""`sparring poll` (never blocks) and `sparring wait` (blocks until the turn ends)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sparring import session as sessions
from sparring import states, view

# Fast enough that `wait` returns well within half a second of the turn's end.
_WAIT_STEP_S = 0.05


def poll(ref: str, cwd: Path) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    return view.to_dict(session, *view.observe(session))


def wait(ref: str, cwd: Path, timeout: float) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    deadline = time.monotonic() + timeout
    while True:
        data, turn, seen = view.observe(session)
        if states.is_terminal(turn["status"]) or time.monotonic() >= deadline:
            result = view.to_dict(session, data, turn, seen)
            result["wait_timed_out"] = not states.is_terminal(turn["status"])
            return result
        time.sleep(_WAIT_STEP_S)
