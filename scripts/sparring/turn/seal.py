"""Taking Claude's seal: its round-one analysis on record, once Codex's round one has ended
(turn/barrier.py says why), with the check of what Codex did in that round
(turn/independence.py) and Codex's withheld answers put on record with it."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from sparring import ledger, states
from sparring.errors import SparringError
from sparring.store import sessions
from sparring.store.sessions import SEALED_FILE, Session, local_time
from sparring.store.statefile import write_private
from sparring.turn import independence, lifecycle, turns


def seal(ref: str, cwd: str | Path, content: bytes) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    if not content.strip():
        raise SparringError("input_empty", "the analysis to seal is empty",
                            "write your analysis to a file and pass --file FILE")
    if session.load()["turns"]:
        lifecycle.settle(session)  # a turn whose runner died is recorded as ended first
    digest = hashlib.sha256(content).hexdigest()
    text = content.decode("utf-8", "replace")
    # The check reads Codex's round one and perhaps the whole project: not under the lock
    # every verb of the session waits on. Taken again there if a turn came or went since.
    before = session.load()
    check = None
    if not before["engine"]["seal"]:
        _require_round_one_over(session, before)
        _require_choice(before, text)
        check = independence.check(session, before, text)
    with session.update() as data:
        state = data["engine"]
        existing = state["seal"]
        if existing and existing["sha256"] != digest:
            raise SparringError("already_sealed", f"another analysis was sealed at "
                                f"{local_time(existing['sealed_at'])}", "a seal cannot be "
                                "replaced: that is what makes it a seal; continue with the "
                                "debate")
        if existing is None:
            if check is None or _turns(data) != _turns(before):
                check = independence.check(session, data, text)
            _take(session, data, content, digest, check)
        kept = state["seal"]
        assert kept is not None  # sealed now, or before with the same content
        found = independence.verdict(state.get("independence"))
    return {"session": session.id, "sealed": True, **kept,
            "already_sealed": existing is not None, "independence": said(found)}


def _require_choice(data: dict[str, Any], text: str) -> None:
    """Where the question names options, the analysis names a first choice among them and a
    confidence, blind, as Codex's round one did: a seal without them is refused, unsealed."""

    given = ledger.options(data)
    if not given:
        return
    choice, confidence = ledger.first_choice(text)
    found = ledger.choice_problems(choice, given, "Choice")
    if confidence is None:
        found.append("Confidence: say how sure you are, 0 to 100, on a line of its own")
    if found:
        raise SparringError("analysis_incomplete", "the analysis does not name what the "
                            f"question asks of a first view: {'; '.join(found)}",
                            "add the lines (`Choice: …`, `Confidence: …`) and seal again; "
                            "nothing was sealed", problems=found)


def _turns(data: dict[str, Any]) -> list[tuple[int, str]]:
    return [(t["n"], t["status"]) for t in data["turns"]]


def _take(session: Session, data: dict[str, Any], content: bytes, digest: str,
          check: dict[str, Any]) -> None:
    """The seal, under the session lock: refused unless Codex's round one has ended and its
    answer is unseen; then the analysis, the check, and the answers withheld till now."""
    state = data["engine"]
    if state["revealed_at"] or any(t["round"] > 1 for t in data["turns"]):
        raise SparringError("invalid_transition", "Codex's answer was already revealed; "
                            "sealing now would prove nothing", "continue with `sparring "
                            "verdict`")
    _require_round_one_over(session, data)
    path = Path(session.path, SEALED_FILE)
    write_private(path, content, witness=True)  # a record: see store/witness.py
    state["seal"] = {"sha256": digest, "sealed_at": time.time(), "bytes": len(content),
                     "file": str(path)}
    state["independence"] = check
    turns.keep_withheld(session, data)


def said(verdict: dict[str, Any]) -> dict[str, Any]:
    """The check's verdict as a verb prints it: its state, and why when it is not `checked`
    (the report says how it was checked)."""
    if verdict["state"] == "checked":
        return {"state": "checked"}
    return {"state": verdict["state"], "why": verdict["why"]}


def _require_round_one_over(session: Session, data: dict[str, Any]) -> None:
    """A seal is taken only once Codex's round one has ended: until then the analysis would
    lie where Codex, at work, can read it."""
    if not data["turns"]:
        raise SparringError("seal_too_early", "Codex's round one has not started: your "
                            "analysis is sealed once it has ended", f"start round one, wait "
                            f"for it with `sparring wait {session.id}`, and only then write "
                            "your analysis and seal it")
    if not states.is_terminal(data["turns"][-1]["status"]):
        raise SparringError("seal_too_early", "Codex's round one is still running: your "
                            "analysis is sealed once it has ended", f"`sparring wait "
                            f"{session.id}` until its status is not running (its answer stays "
                            "hidden), then seal; written now, your analysis would lie where "
                            "Codex, at work, can read it")
