"""`poll` and `wait` of an ended turn, read quickly: only the standard library, no click.

Claude runs `wait` after every Codex round, and most often the turn has ended by then: all
there is to print is what session.json and the turn's events say. `ended_turn` answers only
that common case and raises `SlowPath` for everything else: a turn still running (or whose
runner died), a session holding a workflow's own record (the CLI adds where the workflow
stands, as the registry says), the first reveal of a sealed answer (it is recorded), anything
unusual on disk. The full CLI then prints the same object
the slow way: tests/test_quick.py holds the two to the same bytes, and so does conftest.py
for every poll, wait and guard check of the suite.

It reads with the functions the CLI reads with (store/locate.py, store/witness.py,
codex/events.py, turn/barrier.py, turn/budget.py, turn/brief.py), each light enough to load
here, and it answers only what the CLI would: a session folder of this project, a session
file the witness vouches for, no runner's record saying the turn still runs.
"""

from __future__ import annotations

import os
import time

from sparring import states
from sparring.codex import events
from sparring.errors import guard_said, runner_said
from sparring.fastjson import loads
from sparring.store import locate, witness
from sparring.store.locate import EVENTS_FILE, SESSION_FILE, SESSION_FORMAT, session_folder
from sparring.store.shapes import SESSION_KEYS, placement_problem, session_problem
from sparring.turn.barrier import withheld
from sparring.turn.brief import brief
from sparring.turn.budget import figures, total_usage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class SlowPath(Exception):
    """This one is for the full CLI."""


class WithStatus(SlowPath):
    """An ended turn of a session whose workflow adds where it stands: the CLI's own path
    answers (commands/poll.py), from the session as read and checked here (`read`: its
    folder and document), which it does not read again."""

    def __init__(self, directory: str, data: dict[str, Any]) -> None:
        super().__init__("the workflow's status comes with the answer: the CLI's path adds it")
        self.read = (directory, data)


def ended_turn(verb: str, ref: str) -> dict[str, Any]:
    """The brief poll object of the session's latest turn, which has ended."""
    cwd = os.getcwd()
    directory = session_folder(ref, cwd)
    if directory is None:
        raise SlowPath("no such session: the full CLI says so")
    if not locate.in_project(directory, locate.project_root(cwd)):
        raise SlowPath("not a session folder of this project: the full CLI refuses it")
    path = os.path.join(directory, SESSION_FILE)
    raw = witness.read(path)
    if raw is None or not witness.vouches(path, raw):
        raise SlowPath("not the session file sparring wrote: the full CLI puts it back")
    data = loads(raw.decode("utf-8"), allow_nan=False)
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT or not data.get(
            "turns"):
        raise SlowPath("not a session file this reader knows, or no turn yet")
    if session_problem(data) or placement_problem(data, directory):
        raise SlowPath("not as sparring wrote it: the full CLI reports state_corrupt")
    turn = data["turns"][-1]
    if not states.is_terminal(turn["status"]):
        raise SlowPath("the turn runs (or its runner died): the full CLI watches it")
    if _run_recorded(directory):
        raise SlowPath("a runner's record is there: the full CLI checks session.json agrees")
    if turn["purpose"] != "synthesis" and not SESSION_KEYS.issuperset(data):
        raise WithStatus(directory, data)
    seen = events.read(os.path.join(locate.outputs_folder(directory, data.get("outputs")),
                                    str(turn["n"]), EVENTS_FILE), finished=True)
    if seen.malformed:
        raise SlowPath("lines that are not events: the full CLI counts and reports them")
    hidden = withheld(data)
    review = None
    if hidden is None and turn["status"] == states.COMPLETED:
        if data["engine"]["barrier"] and not data["engine"]["revealed_at"]:
            raise SlowPath("the first reveal is recorded in the session")
        review = {"text": seen.final_message, "data": _structured(seen.final_message)}
        if turn.get("summary_id"):
            review["summary_id"] = turn["summary_id"]
    started = turn.get("started_at") or turn["created_at"]
    shown = brief({
        "session": os.path.basename(directory), "status": turn["status"],
        "round": turn["round"], "turn": turn["n"], "purpose": turn["purpose"],
        "elapsed_s": round((turn.get("ended_at") or time.time()) - started, 2),
        "review": review, "review_withheld": hidden,
        "error": runner_said(turn.get("error")), "recoverable": bool(turn.get("recoverable")),
        "guard": guard_said(turn.get("guard")), "malformed_lines": 0,
        "usage": {"round": turn.get("usage"), "total": total_usage(data),
                  "budget": figures(data)},
    })
    if verb == "wait":
        shown["wait_timed_out"] = False
    return shown


def _run_recorded(directory: str) -> bool:
    """Whether a runner's record (store/runs.py) is kept for the session: records exist
    only while a runner runs, so mostly there is none at all, and no hash to compute."""
    try:
        with os.scandir(os.path.join(locate.state_home(), "runs")) as entries:
            if not any(e.name.endswith(".json") for e in entries):
                return False
    except OSError:
        return False
    return os.path.exists(locate.run_record(directory))


def _structured(text: str | None) -> Any:
    """events.parse_review, for an answer that is not fenced (unfencing imports re)."""
    if text is not None and text.lstrip().startswith("```"):
        raise SlowPath("a fenced answer: the CLI unwraps it")
    return events.parse_review(text)
