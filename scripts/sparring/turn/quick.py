"""`poll` and `wait` of an ended turn, read quickly: only the standard library, no click.

Claude runs `wait` after every Codex round, and most often the turn has ended by then: all
there is to print is what session.json and the turn's events say. `ended_turn` answers only
that common case and raises `SlowPath` for everything else: a turn still running (or whose
runner died), a session holding a workflow's own record (the CLI adds where the workflow
stands, as the registry says), the first reveal of a sealed answer (it is recorded), anything
unusual on disk. The full CLI then prints the same object
the slow way: tests/test_quick.py holds the two to the same bytes, and so does conftest.py
for every poll, wait and guard check of the suite.

It reads with the functions the CLI reads with (store/locate.py, codex/events.py,
turn/barrier.py, turn/budget.py, turn/brief.py), each light enough to load here.
"""

from __future__ import annotations

import os
import time

from sparring import states
from sparring.codex import events
from sparring.fastjson import loads
from sparring.store.locate import SESSION_FILE, SESSION_FORMAT, session_folder
from sparring.store.shapes import SESSION_KEYS, session_problem
from sparring.turn.barrier import withheld
from sparring.turn.brief import brief
from sparring.turn.budget import figures, total_usage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class SlowPath(Exception):
    """This one is for the full CLI."""


def ended_turn(verb: str, ref: str) -> dict[str, Any]:
    """The brief poll object of the session's latest turn, which has ended."""
    directory = session_folder(ref, os.getcwd())
    if directory is None:
        raise SlowPath("no such session: the full CLI says so")
    with open(os.path.join(directory, SESSION_FILE), encoding="utf-8") as f:
        data = loads(f.read(), allow_nan=False)
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT or not data.get(
            "turns"):
        raise SlowPath("not a session file this reader knows, or no turn yet")
    if session_problem(data):
        raise SlowPath("not as sparring wrote it: the full CLI reports state_corrupt")
    turn = data["turns"][-1]
    if not states.is_terminal(turn["status"]):
        raise SlowPath("the turn runs (or its runner died): the full CLI watches it")
    if turn["purpose"] != "synthesis" and not SESSION_KEYS.issuperset(data):
        raise SlowPath("the workflow's status comes with the answer: the full CLI adds it")
    seen = events.read(os.path.join(directory, "turns", str(turn["n"]), "events.jsonl"),
                       finished=True)
    if seen.malformed:
        raise SlowPath("lines that are not events: the full CLI counts and reports them")
    hidden = withheld(data)
    review = None
    if hidden is None and turn["status"] == states.COMPLETED:
        if data["engine"]["barrier"] and not data["engine"]["revealed_at"]:
            raise SlowPath("the first reveal is recorded in the session")
        review = {"text": seen.final_message, "data": _structured(seen.final_message)}
    started = turn.get("started_at") or turn["created_at"]
    shown = brief({
        "session": os.path.basename(directory), "status": turn["status"],
        "round": turn["round"], "turn": turn["n"], "purpose": turn["purpose"],
        "elapsed_s": round((turn.get("ended_at") or time.time()) - started, 2),
        "review": review, "review_withheld": hidden,
        "error": turn.get("error"), "recoverable": bool(turn.get("recoverable")),
        "guard": turn.get("guard"), "malformed_lines": 0,
        "usage": {"round": turn.get("usage"), "total": total_usage(data),
                  "budget": figures(data)},
    })
    if verb == "wait":
        shown["wait_timed_out"] = False
    return shown


def _structured(text: str | None) -> Any:
    """events.parse_review, for an answer that is not fenced (unfencing imports re)."""
    if text is not None and text.lstrip().startswith("```"):
        raise SlowPath("a fenced answer: the CLI unwraps it")
    return events.parse_review(text)
