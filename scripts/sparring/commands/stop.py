"""`sparring stop`: end the running turn and its whole process tree. Idempotent."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sparring import process, states, turns, view
from sparring import session as sessions
from sparring.session import Session, find_turn

# How long the runner gets to record the end itself before we record it.
_RUNNER_RECORD_S = 5.0


def stop(ref: str, cwd: Path) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    _, turn, _ = view.observe(session)
    already = states.is_terminal(turn["status"])
    if not already:
        stop_turn(session, turn["n"])
    result = view.to_dict(session, *view.observe(session))
    result["already_ended"] = already
    return result


def stop_turn(session: Session, n: int) -> None:
    """Flag the stop, end codex's tree, and make sure the end is recorded."""
    with session.update() as data:
        turn = find_turn(data, n)
        turn["stop_requested"] = True
        codex, runner = turn.get("codex"), turn.get("runner")
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
