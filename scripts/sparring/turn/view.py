"""The poll/wait object: what a turn is doing, from what is on disk.

Formatting only: it reads the session and the turn's events and changes nothing. Repairing
a turn whose runner died is lifecycle.py's; recording that Codex's answer was shown is
barrier.reveal, called by the verbs that show it.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from sparring import states
from sparring.codex import events
from sparring.errors import guard_said, runner_said
from sparring.records import TurnRecord
from sparring.store.locate import BASELINE_FILE, EVENTS_FILE, PROMPT_FILE, STDERR_FILE
from sparring.store.sessions import Session
from sparring.turn import barrier, budget

MAX_ACTIVITIES = 20
# What poll and wait print of Codex's answer at most: with the rest of the object, under the
# 30,000 characters of a Bash call's output Claude Code keeps. The whole answer stays in the
# turn's events (`cut.whole_in`; an arch-debate's round file holds it too).
ANSWER_SHOWN = 20_000


def to_dict(session: Session, data: dict[str, Any], turn: TurnRecord,
            view: events.TurnView) -> dict[str, Any]:
    now = time.time()
    status = states.reported(turn["status"])
    started = turn.get("started_at") or turn["created_at"]
    withheld = barrier.withheld(data)
    activities = _redacted(view.activities) if withheld else view.activities
    review = None if withheld else _review(session, turn, view)
    # The status, the guard's verdict and the tokens come before Codex's answer: an output
    # cut short still says them.
    return {
        "session": session.id,
        "session_dir": session.path,
        "skill": data["skill"],
        "status": status,
        "round": turn["round"],
        "turn": turn["n"],
        "purpose": turn["purpose"],
        "thread_id": turn.get("thread_id") or view.thread_id or data.get("thread_id"),
        "elapsed_s": round((turn.get("ended_at") or now) - started, 2),
        "last_event_s": (round(now - last_activity(session, turn), 2)
                         if status == states.RUNNING else None),
        "error": runner_said(turn.get("error")),
        "recoverable": bool(turn.get("recoverable")),
        "guard": guard_said(turn.get("guard"), session.id,
                            session.turn_path(turn["n"], BASELINE_FILE)),
        "usage": {"round": turn.get("usage"), "total": budget.total_usage(data),
                  "budget": budget.figures(data)},
        "activities": _activities(turn, view, activities, now)[-MAX_ACTIVITIES:],
        "activities_total": len(activities),
        "review": review,
        "review_withheld": withheld,
        "settings": turn["settings"],
        "malformed_lines": view.malformed,
        "files": _files(session, turn["n"], withheld is not None),
    }


def _files(session: Session, n: int, withheld: bool) -> dict[str, str]:
    """Where the turn's files are; what its codex printed, out of the project, only once
    Codex's answer may be shown."""
    found = {"prompt": session.turn_path(n, PROMPT_FILE)}
    if not withheld:
        found.update(events=session.output(n, EVENTS_FILE), stderr=session.output(n, STDERR_FILE))
    return found


def last_activity(session: Session, turn: TurnRecord) -> float:
    """When Codex last printed an event (the events file's mtime), or when it started."""
    started = float(turn.get("started_at") or turn["created_at"])
    try:
        return max(started, os.stat(session.output(turn["n"], EVENTS_FILE)).st_mtime)
    except FileNotFoundError:
        return started


def _activities(turn: TurnRecord, view: events.TurnView,
                found: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    notices = [{"kind": "notice", "message": m} for m in view.notices[-3:]]
    if found or notices or states.is_terminal(turn["status"]):
        return found + notices
    # Never a bare "running": say what stage the turn is in.
    started = turn.get("started_at") or turn["created_at"]
    if not view.turn_started:
        what = "codex is starting" if turn["status"] == states.STARTING else (
            "codex started; waiting for its first event")
    else:
        what = "codex is thinking; no tool call or reasoning summary yet"
    return [{"kind": "waiting", "message": f"{what} ({now - started:.0f} s)"}]


def _review(session: Session, turn: TurnRecord, view: events.TurnView
            ) -> dict[str, Any] | None:
    if turn["status"] != states.COMPLETED:
        return None
    text = view.final_message
    if text is not None and turn.get("schema"):
        text = _private(text)
    if text is not None and len(text) > ANSWER_SHOWN:
        return {"text": text[:ANSWER_SHOWN], "data": None, "cut": {
            "shown_chars": ANSWER_SHOWN, "total_chars": len(text),
            "whole_in": session.output(turn["n"], EVENTS_FILE)}}
    found = {"text": text, "data": events.parse_review(text)}
    if turn.get("schema") and isinstance(found["data"], dict) and "confidence" in found["data"]:
        # Each side's confidence is its own: never shown to the other (the report holds both).
        found = {"text": None, "data": {k: v for k, v in found["data"].items()
                                        if k != "confidence"}}
    if turn.get("summary_id"):
        found["summary_id"] = turn["summary_id"]
    return found


def _private(text: str) -> str:
    """A structured answer's text without its confidence, which is Codex's own (the parsed
    answer drops it too): never shown to the other side."""
    if '"confidence"' not in text:
        return text

    return re.sub(r'"confidence"\s*:\s*-?[0-9.eE+]+', '"confidence": null', text)


def _redacted(activities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Reasoning summaries would leak Codex's view before Claude has formed its own.
    return [{**a, "text": "(withheld until you seal your analysis)"}
            if a["kind"] == "reasoning" else a for a in activities]


def seen(session: Session, n: int, finished: bool = True, start: int = 0
         ) -> events.TurnView:
    """What turn `n`'s codex printed, read from its events (`finished`: its last line is
    whole; from byte `start` on, for `wait`'s progress): the one reader of a turn's events,
    for poll, wait, status and the rest."""
    return events.read(session.output(n, EVENTS_FILE), finished, start)


def final_text(session: Session, turn: TurnRecord) -> str | None:
    """Codex's last message in an ended turn, from its events."""
    return seen(session, turn["n"]).final_message
