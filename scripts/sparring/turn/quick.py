"""`poll` and `wait` of an ended turn, read quickly: only the standard library, no click.

Claude runs `wait` after every Codex round, and most often the turn has ended by then: all
there is to print is what session.json and the turn's events say. `ended_turn` answers only
that common case and raises `SlowPath` for everything else: a turn still running (or whose
runner died), an arch-debate or deep-discussion whose status comes with the answer, the first
reveal of a sealed answer (it is recorded), anything unusual on disk. The full CLI then
prints the same object the slow way: tests/test_quick.py holds the two to the same bytes, and
so does conftest.py for every poll, wait and guard check of the suite.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from sparring.errors import guard_said, runner_said
from sparring.fastjson import loads
from sparring.store import witness
from sparring.store.shapes import session_problem
from sparring.turn.brief import brief
from sparring.turn.budget import figures

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The session file this reader understands (session.FORMAT); any other goes the slow way.
_FORMAT = 1
_ENDED = frozenset({"completed", "failed", "timeout", "stalled", "stopped"})


class SlowPath(Exception):
    """This one is for the full CLI."""


def ended_turn(verb: str, ref: str) -> dict[str, Any]:
    """The brief poll object of the session's latest turn, which has ended."""
    directory = _session_dir(ref, os.getcwd())
    path = Path(directory, "session.json")
    raw = witness.read(path)
    if raw is None or not witness.vouches(path, raw):
        raise SlowPath("not the session file sparring wrote: the full CLI puts it back")
    data = loads(raw.decode("utf-8"), allow_nan=False)
    if not isinstance(data, dict) or data.get("format") != _FORMAT or not data.get("turns"):
        raise SlowPath("not a session file this reader knows, or no turn yet")
    if session_problem(data):
        raise SlowPath("not as sparring wrote it: the full CLI reports state_corrupt")
    turn = data["turns"][-1]
    if turn["status"] not in _ENDED:
        raise SlowPath("the turn runs (or its runner died): the full CLI watches it")
    if _run_recorded(directory):
        raise SlowPath("a runner's record is there: the full CLI checks session.json agrees")
    if turn["purpose"] != "synthesis" and (data.get("debate") or data.get("discussion")):
        raise SlowPath("the workflow's status comes with the answer: the full CLI adds it")
    final = _final_message(os.path.join(directory, "turns", str(turn["n"]), "events.jsonl"))
    engine = data["engine"]
    withheld = None
    if engine["barrier"] and not engine["seal"]:
        withheld = ("Codex's answer stays hidden until you seal your own analysis: write it "
                    f"to a file, then `sparring seal {data['id']} --file FILE`")
    review = None
    if withheld is None and turn["status"] == "completed":
        if engine["barrier"] and not engine["revealed_at"]:
            raise SlowPath("the first reveal is recorded in the session")
        review = {"text": final, "data": _structured(final)}
    started = turn.get("started_at") or turn["created_at"]
    shown = brief({
        "session": os.path.basename(directory), "status": turn["status"],
        "round": turn["round"], "turn": turn["n"], "purpose": turn["purpose"],
        "elapsed_s": round((turn.get("ended_at") or time.time()) - started, 2),
        "review": review, "review_withheld": withheld,
        "error": runner_said(turn.get("error")), "recoverable": bool(turn.get("recoverable")),
        "guard": guard_said(turn.get("guard")), "malformed_lines": 0,
        "usage": {"round": turn.get("usage"), "total": _total(data["turns"]),
                  "budget": figures(data)},
    })
    if verb == "wait":
        shown["wait_timed_out"] = False
    return shown


def _run_recorded(directory: str) -> bool:
    """Whether a runner's record (store/runs.py) is kept for the session: records exist
    only while a runner runs, so mostly there is none at all, and no hash to compute."""
    base = os.environ.get("XDG_STATE_HOME", "")
    home = base if os.path.isabs(base) else os.path.join(os.path.expanduser("~"), ".local",
                                                          "state")
    folder = os.path.join(home, "sparring", "runs")
    try:
        with os.scandir(folder) as entries:
            if not any(e.name.endswith(".json") for e in entries):
                return False
    except OSError:
        return False
    return os.path.exists(_run_record(folder, directory))


def _run_record(folder: str, directory: str) -> str:
    """store/runs.py's path_for, without loading it."""
    import hashlib

    key = hashlib.sha256(directory.encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(folder, f"{key[:32]}.json")


def _session_dir(ref: str, cwd: str) -> str:
    """The folder session.resolve finds: a session folder of this project, else the full
    CLI says why not."""
    if ref.startswith("~"):
        raise SlowPath("a path to expand")
    root = _root(cwd)
    if os.sep in ref or os.path.isdir(ref):
        candidate = ref if os.path.isabs(ref) else os.path.join(cwd, ref)
    else:
        candidate = os.path.join(root, ".sparring", "sessions", ref)
    if not os.path.isfile(os.path.join(candidate, "session.json")):
        raise SlowPath("no such session: the full CLI says so")
    real = os.path.realpath(candidate)
    sessions = os.path.dirname(real)
    if (os.path.basename(sessions) != "sessions"
            or os.path.basename(os.path.dirname(sessions)) != ".sparring"
            or not real.startswith(root.rstrip(os.sep) + os.sep)):
        raise SlowPath("not a session folder of this project: the full CLI refuses it")
    return real


def _root(cwd: str) -> str:
    """workspace.find_root, with os.path."""
    start = candidate = os.path.realpath(cwd)
    while True:
        if os.path.exists(os.path.join(candidate, ".git")) or os.path.isdir(
                os.path.join(candidate, ".sparring", "sessions")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent


def _final_message(path: str) -> str | None:
    """Codex's last message, from an ended turn's events (events.py, for the lines Codex
    writes: any other line is counted and reported by the full reader)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raw = b""
    final = None
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        if line[:1] != b"{" or line[1:2] == b"\x00":
            raise SlowPath("a line that is not a plain JSON object")
        event = loads(line.decode("utf-8", "surrogatepass"))
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise SlowPath("an event without a type")
        if event["type"] in ("item.started", "item.updated", "item.completed"):
            item = event.get("item")
            if not isinstance(item, dict):
                raise SlowPath("an item that is not an object")
            if item.get("type") == "agent_message" and event["type"] == "item.completed":
                final = str(item.get("text", ""))
    return final


def _structured(text: str | None) -> Any:
    """turns.parse_review for an answer that is not fenced: its JSON, or None."""
    if text is None:
        return None
    body = text.strip()
    if body.startswith("```"):
        raise SlowPath("a fenced answer: turns.parse_review unwraps it")
    try:
        return loads(body)
    except ValueError:
        return None


def _total(turns: list[dict[str, Any]]) -> dict[str, int]:
    total = {"input_tokens": 0, "output_tokens": 0}
    for turn in turns:
        for key in total:
            total[key] += (turn.get("usage") or {}).get(key, 0)
    return total
