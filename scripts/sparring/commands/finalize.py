"""`sparring finalize`: write the session summary. Works in any state; idempotent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.store import sessions
from sparring.store.statefile import write_json_atomic
from sparring.turn import lifecycle, watch
from sparring.turn.brief import tokens
from sparring.turn.summary import SUMMARY_FILE, summarize


def finalize(here: str, session: str, full: bool = True) -> dict[str, Any]:
    return summary(sessions.resolve(session, here), full)


def summary(session: sessions.Session, full: bool) -> dict[str, Any]:
    """The summary written, and what is printed of it."""
    data = session.load()
    stopped_running = False
    if data["turns"]:
        lifecycle.settle(session)
        # a summary describes turns that have ended
        stopped_running = lifecycle.stop_running(session)
    summary = summarize(session, session.load())
    summary["stopped_running_turn"] = stopped_running
    path = Path(session.path, SUMMARY_FILE)
    write_json_atomic(path, summary, witness=True)
    with session.update() as locked:
        locked["finalized_at"] = summary["finalized_at"]
    watch.prune_store(Path(data["root"]))  # the session has ended: its copies may go
    found = {**summary, "summary_file": str(path)}
    return found if full else brief(found)


def brief(summary: dict[str, Any]) -> dict[str, Any]:
    """What the close needs: how it ended, what it cost, where the summary is (every turn,
    codex and its settings are in the file, and printed with --full)."""
    found = {key: summary[key] for key in ("session", "status", "rounds", "duration_s")}
    found["usage_total"] = tokens(summary["usage_total"])
    if summary["budget"] is not None:
        found["budget"] = summary["budget"]
    if summary["stopped_running_turn"]:
        found["stopped_running_turn"] = True
    found["summary_file"] = summary["summary_file"]
    return found
