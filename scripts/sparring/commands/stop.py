"""`sparring stop`: end the running turn and its whole process tree. Idempotent."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sparring import process, states, turns, view
from sparring import session as sessions
from sparring.quick import brief
from sparring.session import Session, find_turn, latest_turn

# How long the runner gets to record the end itself before we record it.
_RUNNER_RECORD_S = 5.0


def stop(ref: str, cwd: Path) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    if not session.load()["turns"]:  # nothing ever ran: stopping is trivially done
        return {"session": session.id, "session_dir": str(session.dir), "status": "new",
                "already_ended": True}
    view.observe(session)
    stopped = stop_running(session)
    result = brief(view.to_dict(session, *view.observe(session)), review=False)
    result["already_ended"] = not stopped
    return result


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
