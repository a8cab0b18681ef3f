"""`sparring verdict`: Claude's structured verdict on a round, and the runner's decision.

The runner, not Claude, decides whether the debate reached consensus, is
stuck, or goes on; the verdict only says where Claude stands on each point.
What follows the decision is the workflow's (the registry's `after_verdict` part).

A verdict that concedes a point without new evidence that holds is sent back once, before
anything is recorded (`decision: reconsider`): Claude says what changed its mind, or holds
its position; the same concession handed in again stands, and the report flags it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from sparring import answers, states
from sparring.errors import SparringError
from sparring.output import command
from sparring.quoting import here
from sparring.records import AnySession, DecisionRecord, Judged, Verdict
from sparring.store import sessions, workspace
from sparring.store.inputs import read_input
from sparring.store.sessions import Session, latest_turn
from sparring.store.statefile import try_locked
from sparring.workflows import registry
from sparring.workflows.structured import engine


def verdict(here: str, session: str, file: str | None, full: bool = False,
            rejudge: int | None = None) -> dict[str, Any]:
    raw = read_input(file, "--file")
    return _verdict(sessions.resolve(session, here), Path(here), raw, full, rejudge)


def _verdict(session: Session, cwd: Path, raw: bytes, full: bool,
             rejudge: int | None) -> dict[str, Any]:
    data = session.load()
    flow = registry.settings(registry.load_settings(Path(data["root"])), data["skill"])
    off = data["engine"].get("challenge_off") or (
        None if flow.get("challenge") else f"`{data['skill']}: challenge: false` in sparring.yaml")
    rules = _Rules(flow["max_rounds"], off)
    if not raw.strip():
        raise SparringError("input_empty", "the verdict is empty",
                            "write the verdict JSON to a file and pass --file FILE")
    given: Verdict = answers.load_json(raw, "verdict")
    answers.require_valid("verdict", given)
    # One verdict at a time: a second one arriving meanwhile is told so, never silently
    # replaces or is replaced (the decision it would change is recorded under the lock).
    with _one_verdict_at_a_time(session):
        with session.update() as locked:
            if rejudge is not None:
                _require_latest(session, locked, rejudge)
            round_no = _answered_round(session, locked)
            given = engine.complete(locked, round_no, given)
            engine.require_sealed_answered(locked, round_no, given)
            answers.require_valid("verdict", given,
                                  engine.verdict_problems(locked, round_no, given))
            result, changed, judged = _record(session, locked, round_no, given, rules, rejudge)
            data = locked  # as written: acted on below, outside the session lock
        if isinstance(result, list):
            return _send_back(session, data, round_no, result)
        if judged is None:
            judged = engine.judge(session, data, rules.max_rounds, rules.challenge_off)
        after = registry.get(data["skill"]).part("after_verdict")
        assert after is not None  # a workflow with structured rounds says what follows
        step = after(session, cwd, data, judged.decision, judged.known, given)
    shown = result if full else brief(result)
    extra: dict[str, Any] = {"already_judged": True} if changed is None else {}
    if isinstance(changed, dict):
        extra["rejudged"] = {"round": round_no, "before": changed["decision"]["decision"],
                             "after": result["decision"]}
    cap = {"max_rounds": rules.max_rounds} if full else {}  # the brief names it when it decides
    return {"session": session.id, **cap, **shown, **extra, "next": step}


class _Rules(NamedTuple):
    max_rounds: int
    challenge_off: str | None  # what turned off the challenge of a consensus that came cheap


def _send_back(session: Session, data: AnySession, round_no: int,
               flagged: list[dict[str, Any]]) -> dict[str, Any]:
    """The concessions Claude's verdict makes without new evidence, sent back once: nothing
    of the verdict is recorded."""
    inbox = workspace.session_inbox(data)
    return {"session": session.id, "round": round_no, "decision": "reconsider",
            "reconsider": [_reconsidered(c) for c in flagged],
            "why": "no new evidence that checks out backs it",
            "next": {"action": "verdict", "command": command(
                "verdict", session.id, "--file", f"{here(inbox)}/verdict.json")}}


def _reconsidered(concession: dict[str, Any]) -> dict[str, Any]:
    return {"point": concession["point"], "from": concession["from"], "to": concession["to"],
            "evidence": [{"cited": e["cited"], "mark": e["mark"], "new": e["new"]}
                         for e in concession["evidence"]]}


@contextlib.contextmanager
def _one_verdict_at_a_time(session: Session) -> Iterator[None]:
    try:
        with try_locked(os.path.join(session.path, "verdict")):
            yield
    except BlockingIOError:
        raise SparringError("session_busy", "another verdict for this session is being handed "
                            "in right now", f"wait for it to finish, then check "
                            f"`sparring status {session.id}` before handing in yours") from None


def _record(session: Session, data: AnySession, round_no: int, given: Verdict, rules: _Rules,
            rejudge: int | None
            ) -> tuple[DecisionRecord | list[dict[str, Any]], Judged | bool | None,
                       engine.Judgement | None]:
    """Record the verdict and its decision (held under the session lock). Returns the
    decision, what changed (None for nothing: the same verdict again; True for a first
    verdict; or the verdict and decision it replaced) and the judgement made. A different
    verdict for a judged round replaces it only with `rejudge` naming that round, before the
    next round starts, and both versions stay on record. A verdict whose concessions were
    made without new evidence, not yet sent back, is not recorded: their list is returned
    in place of the decision."""
    state = data["engine"]
    key = str(round_no)
    before = state["verdicts"].get(key)
    if before is None and rejudge is not None:
        raise SparringError("invalid_transition", f"round {round_no} has no verdict yet: "
                            "there is nothing to re-judge", "hand your verdict in without "
                            "--rejudge")
    if before is not None and _same(before, given):
        return state["decisions"][key], None, None
    if before is not None:
        _require_rejudge(round_no, state["decisions"][key], rejudge is not None)
    state["verdicts"][key] = given
    judged = engine.judge(session, data, rules.max_rounds, rules.challenge_off)
    sent = state.get("sent_back", {}).get(key, [])
    again = [c for c in engine.flagged(judged.audit, "claude", round_no)
             if c["point"] not in sent]
    if again:
        if before is None:
            del state["verdicts"][key]
        else:
            state["verdicts"][key] = before
        state["sent_back"] = {**state.get("sent_back", {}),
                              key: [*sent, *(c["point"] for c in again)]}
        return again, True, None
    result = judged.record
    if before is None:
        state["decisions"][key] = result
        return result, True, judged
    replaced: Judged = {"verdict": before, "decision": state["decisions"][key]}
    state["rejudged"] = [*state.get("rejudged", []), {
        "round": round_no, "at": time.time(), "before": replaced,
        "after": {"verdict": given, "decision": result}}]
    state["decisions"][key] = result
    return result, replaced, judged


def _same(a: Verdict, b: Verdict) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _require_rejudge(round_no: int, decided: DecisionRecord, rejudge: bool) -> None:
    # A verdict is always about the latest answered round: once the next round starts,
    # this one can no longer be re-judged (see _require_latest).
    if not rejudge:
        raise SparringError("already_judged", f"round {round_no} is already judged (decision: "
                            f"{decided['decision']}); this verdict differs from the one on "
                            "record", "if you mean to change your judgement, hand it in again "
                            f"with --rejudge {round_no}: both versions are kept and the report "
                            "shows them")


def _require_latest(session: Session, data: AnySession, rejudge: int) -> None:
    """`--rejudge ROUND` re-judges ROUND, the latest round, and only while no later round
    has started: a verdict meant for an earlier round is never taken for a later one's."""
    latest = max((int(t["round"]) for t in data["turns"]), default=0)
    if rejudge < latest:
        raise SparringError("rejudge_too_late", f"round {rejudge} can no longer be re-judged: "
                            f"round {latest} has started", f"its decision stands; judge round "
                            f"{latest} once it is answered (`sparring wait {session.id}`, then "
                            "`sparring verdict` without --rejudge)", round=rejudge,
                            latest_round=latest)
    if rejudge > latest:
        raise SparringError("invalid_transition", f"round {rejudge} has not started (the "
                            f"latest round is {latest})", f"--rejudge names a judged round: "
                            f"--rejudge {latest}")


def brief(result: DecisionRecord) -> dict[str, Any]:
    """The decision as Claude acts on it: each open point's standing in one row (its claim
    Claude has read already), the agreed points by id, a summary and the concessions made
    without evidence only when there are any; not `qualified`, which the decision says.
    `--full` (and the session's state) keep every claim, stance, evidence and round."""
    shown: dict[str, Any] = {
        **result, "open_points": [_row(point) for point in result["open_points"]],
        "agreed_points": [point["id"] for point in result["agreed_points"]]}
    shown["rejected_points"] = [point["id"] for point in result.get("rejected_points", [])]
    shown.pop("qualified", None)  # the decision says it
    for key in ("summary", "concessions_without_evidence", "rejected_points", "fallback"):
        if not shown.get(key):
            shown.pop(key, None)
    return shown


def _row(point: dict[str, Any]) -> dict[str, Any]:
    row = {"id": point["id"], "claude": (point["claude"] or {}).get("stance"),
           "codex": (point["codex"] or {}).get("stance")}
    if point.get("pending"):
        row["pending"] = True
    return row


def _answered_round(session: Session, data: AnySession) -> int:
    """The round whose Codex answer the verdict is about: the latest, completed and valid."""
    state = data["engine"]
    if state["schema"] is None:
        raise SparringError("invalid_transition", f"{data['skill']} rounds are free text, not "
                            "structured answers", "follow the workflow's own verbs (SKILL.md)")
    turn = latest_turn(data)
    if turn is not None and not states.is_terminal(turn["status"]):
        raise SparringError("session_busy", f"round {turn['round']} is running: the rounds "
                            "before it are decided, and it has no answer to judge yet",
                            f"`sparring wait {session.id}`, then judge round {turn['round']}")
    if turn is not None and state["barrier"] and turn["round"] == 1 and not state["seal"]:
        raise SparringError("seal_required", "your own analysis is not sealed yet",
                            f"`sparring wait {session.id} --seal FILE` before judging "
                            "Codex's answer")
    if turn is None or turn["status"] != states.COMPLETED or turn.get("answer") is None:
        status = turn["status"] if turn else "not started"
        raise SparringError("invalid_transition", f"there is no answered round to judge "
                            f"(latest turn: {status})", f"`sparring wait {session.id}` first; "
                            "a failed round ends the debate (report it)")
    if state["barrier"] and turn["round"] == 1 and not state["revealed_at"]:
        raise SparringError("not_revealed", "you have not read Codex's answer yet",
                            f"`sparring wait {session.id}` shows it, now that you sealed")
    return int(turn["round"])
