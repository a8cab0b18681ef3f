"""`sparring finalize`: write the session summary. Works in any state; idempotent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.store import session as sessions
from sparring.store.state import write_json_atomic
from sparring.turn import guard as turnguard
from sparring.turn import lifecycle
from sparring.turn.summary import SUMMARY_FILE, summarize


def finalize(ref: str, cwd: Path) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    data = session.load()
    stopped_running = False
    if data["turns"]:
        lifecycle.observe(session)
        # a summary describes turns that have ended
        stopped_running = lifecycle.stop_running(session)
    summary = summarize(session, session.load())
    summary["stopped_running_turn"] = stopped_running
    path = session.dir / SUMMARY_FILE
    write_json_atomic(path, summary, witness=True)
    with session.update() as locked:
        locked["finalized_at"] = summary["finalized_at"]
    turnguard.prune_store(Path(data["root"]))  # the session has ended: its copies may go
    return {**summary, "summary_file": str(path)}
