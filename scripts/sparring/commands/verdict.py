"""`sparring verdict`: Claude's structured verdict on a round, and the runner's decision.

The runner, not Claude, decides whether the debate reached consensus, is
stuck, or goes on; the verdict only says where Claude stands on each point.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from sparring import answers, config, engine, ledger, states
from sparring import session as sessions
from sparring.commands.start import unaccepted_violations
from sparring.errors import SparringError
from sparring.session import Session, latest_turn
from sparring.state import write_private


def verdict(ref: str, cwd: Path, raw: bytes, full: bool = False) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    data = session.load()
    round_no = _answered_round(session, data)
    if not raw.strip():
        raise SparringError("input_empty", "the verdict is empty",
                            "write the verdict JSON to a file and pass --file FILE")
    given = answers.load_json(raw, "verdict")
    answers.require_valid("verdict", given)
    answers.require_valid("verdict", given, engine.verdict_problems(data, round_no, given))
    max_rounds = config.workflow(config.load(Path(data["root"])), data["skill"])["max_rounds"]
    with session.update() as locked:
        engine.state(locked)["verdicts"][str(round_no)] = given
        known = engine.ledger_for(locked)
        decision = ledger.decide(known, max_rounds)
        result = engine.decision_dict(decision, known)
        engine.state(locked)["decisions"][str(round_no)] = result
    step = _guard_stop(session, data) or _next_step(
        session, data["skill"], decision, known, given, _inbox(data))
    if step["action"] == "resume" and data["skill"] == "think-about":
        step = _continue(session, cwd, step)
    shown = result if full else brief(result)
    return {"session": session.id, "max_rounds": max_rounds, **shown, "next": step}


def brief(result: dict[str, Any]) -> dict[str, Any]:
    """The decision as Claude acts on it: each open point's standing in one row, the agreed
    points by id. `--full` (and the session's state) keep every stance, evidence and round."""
    return {**result,
            "open_points": [_row(point) for point in result["open_points"]],
            "agreed_points": [point["id"] for point in result["agreed_points"]]}


def _row(point: dict[str, Any]) -> dict[str, Any]:
    row = {"id": point["id"], "claim": point["claim"],
           "claude": (point["claude"] or {}).get("stance"),
           "codex": (point["codex"] or {}).get("stance")}
    if point.get("pending"):
        row["pending"] = True
    return row


def _continue(session: Session, cwd: Path, step: dict[str, Any]) -> dict[str, Any]:
    """The debate goes on: start Codex's next round now (one call less a round). If it cannot
    start, the verdict still stands and `next` is the resume command, with the reason."""
    from sparring.commands import start as turns_verbs

    try:
        prompt = turns_verbs.prompt_from(None, "think-about/round2+",
                                         vars_file=Path(step["vars_file"]))
        started = turns_verbs.resume(session.id, cwd, {}, prompt, False, None, False)
    except SparringError as error:
        return {**step, "started": False, "error": error.to_dict()}
    return {"action": "wait", "started": True, "round": started["round"], "kind": step["kind"],
            "vars_file": step["vars_file"], "command": f"sparring wait {session.id}"}


def _answered_round(session: Session, data: dict[str, Any]) -> int:
    """The round whose Codex answer the verdict is about: the latest, completed and valid."""
    state = engine.state(data)
    if state["schema"] is None:
        raise SparringError("invalid_transition", f"{data['skill']} rounds are free text, not "
                            "structured answers", "follow the workflow's own verbs (SKILL.md)")
    turn = latest_turn(data)
    if turn is None or turn["status"] != states.COMPLETED or turn.get("answer") is None:
        status = turn["status"] if turn else "not started"
        raise SparringError("invalid_transition", f"there is no answered round to judge "
                            f"(latest turn: {status})", f"`sparring wait {session.id}` first; "
                            "a failed round ends the debate (report it)")
    if state["barrier"] and turn["round"] == 1:
        if not state["seal"]:
            raise SparringError("seal_required", "your own analysis is not sealed yet",
                                f"`sparring seal {session.id} --file FILE` before judging "
                                "Codex's answer")
        if not state["revealed_at"]:
            raise SparringError("not_revealed", "you have not read Codex's answer yet",
                                f"`sparring wait {session.id}` shows it, now that you sealed")
    return int(turn["round"])


def _guard_stop(session: Session, data: dict[str, Any]) -> dict[str, Any] | None:
    """Files changed during a Codex turn: the loop stops here, whatever the decision."""
    found = unaccepted_violations(data)
    if not found:
        return None
    violation = found[-1]["guard"]["violation"]
    return {"action": "stop", "reason": violation["message"],
            "changed": [c for t in found for c in t["guard"]["changed"]],
            "hint": violation["hint"],
            "command": f"sparring report {session.id} --synthesis {_inbox(data)}/synthesis.json"}


def _inbox(data: dict[str, Any]) -> str:
    """Where Claude writes the files the next commands name (its Write tool may write there)."""
    return shlex.quote(str(data.get("inbox") or "INBOX"))


def _next_step(session: Session, skill: str, decision: ledger.Decision, known: ledger.Ledger,
               given: dict[str, Any], inbox: str) -> dict[str, Any]:
    report = {"action": "report", "write": f"{inbox}/synthesis.json",
              "command": f"sparring report {session.id} --synthesis {inbox}/synthesis.json"}
    if skill == "dual-model":
        # One round, then the synthesis; a deeper dive on the same thread is optional.
        follow = {"POINTS_OF_DIFFERENCE": engine.next_vars(known, decision, given)[
            "DISAGREED_POINTS"]}
        path = _write_vars(session, decision.round + 1, follow)
        return {**report, "optional": {
            "action": "resume", "vars_file": str(path), "write": f"{inbox}/follow-up.md",
            "command": f"sparring resume {session.id} --template dual-model/continue "
                       f"--vars-file {shlex.quote(str(path))} "
                       f"--var-file FOLLOW_UP={inbox}/follow-up.md"}}
    if decision.decision != "continue":
        return report
    path = _write_vars(session, decision.round + 1, engine.next_vars(known, decision, given))
    return {"action": "resume", "kind": decision.kind, "vars_file": str(path),
            "command": f"sparring resume {session.id} --template think-about/round2+ "
                       f"--vars-file {shlex.quote(str(path))}"}


def _write_vars(session: Session, round_no: int, variables: dict[str, Any]) -> Path:
    path = session.dir / f"round-{round_no}-vars.json"
    write_private(path, json.dumps(variables, ensure_ascii=False, indent=2))
    return path
