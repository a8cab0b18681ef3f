"""What follows Claude's verdict on a structured round (`sparring verdict`'s `next`).

think-about goes on at once: a `continue` starts Codex's next round (one call less a
round). dual-model has one round, then the synthesis; a deeper dive on the same thread is
optional, and starts at once when the verdict's `message` says what Codex should look
into. Either way, files changed during a Codex turn stop the loop here, whatever the
decision, until the user decides. A consensus that came cheap is first tested by one
challenge turn on a fresh thread (engine.judge), started here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sparring import ledger
from sparring.errors import Hint, SparringError
from sparring.output import command
from sparring.quoting import here
from sparring.records import AnySession, Verdict, untyped
from sparring.store import workspace
from sparring.store.sessions import Session
from sparring.store.statefile import write_private
from sparring.turn import launch
from sparring.workflows.structured import engine


def think_about(session: Session, cwd: Path, data: AnySession, decision: ledger.Decision,
                known: ledger.Ledger, given: Verdict) -> dict[str, Any]:
    inbox = workspace.session_inbox(data)
    if decision.kind == "challenge":
        return _challenge(session, cwd, data, decision, known, inbox)
    if decision.decision != "continue":
        step = _report_step(session, inbox)
    else:
        path = _write_vars(session, decision.round + 1,
                           engine.next_vars(known, decision, given))
        step = _resume_step(session, decision, "think-about/round2+", path)
    stop = _guard_stop(session, data, step)
    if stop is not None:
        return stop
    if step["action"] != "resume":
        return step
    return _continue(session, cwd, step, inbox, "think-about/round2+", path)


def dual_model(session: Session, cwd: Path, data: AnySession, decision: ledger.Decision,
               known: ledger.Ledger, given: Verdict) -> dict[str, Any]:
    """One round, then the synthesis; a deeper dive on the same thread is optional, unless
    both sides have agreed."""
    inbox = workspace.session_inbox(data)
    if decision.kind == "challenge":
        return _challenge(session, cwd, data, decision, known, inbox)
    if decision.decision in engine.AGREEMENT:
        report = _report_step(session, inbox)
        return _guard_stop(session, data, report) or report
    follow = {"POINTS_OF_DIFFERENCE": engine.open_bullets(known)}
    if decision.decision == "continue" and given.get("message"):
        return _dive(session, cwd, data, decision, inbox, {
            **follow, "FOLLOW_UP": engine.carried(given["message"], engine.MESSAGE_LIMIT)})
    path = _write_vars(session, decision.round + 1, follow)
    # The command names both files: what Claude writes (FOLLOW_UP), and the runner's.
    step = {**_report_step(session, inbox), "optional": {
        "action": "resume",
        "command": command("resume", session.id, "--template", "dual-model/continue",
                           "--vars-file", here(str(path)), "--var-file",
                           f"FOLLOW_UP={here(inbox)}/follow-up.md")}}
    return _guard_stop(session, data, step) or step


def _dive(session: Session, cwd: Path, data: AnySession, decision: ledger.Decision,
          inbox: str, variables: dict[str, Any]) -> dict[str, Any]:
    """The verdict's `message` says what Codex should look into: the deeper dive starts now,
    on the same thread (one call less a round than a separate `resume`)."""
    path = _write_vars(session, decision.round + 1, variables)
    step = _resume_step(session, decision, "dual-model/continue", path)
    return _guard_stop(session, data, step) or _continue(session, cwd, step, inbox,
                                                         "dual-model/continue", path)


def _challenge(session: Session, cwd: Path, data: AnySession, decision: ledger.Decision,
               known: ledger.Ledger, inbox: str) -> dict[str, Any]:
    """The consensus came cheap: one challenge turn, on a fresh thread, argues the strongest
    case against it; its points join the debate. If it cannot start, the report is next
    (and says the consensus is unchallenged)."""
    again = {"action": "challenge", "command": command(
        "verdict", session.id, "--file", f"{here(inbox)}/verdict.json")}
    stop = _guard_stop(session, data, again)
    if stop is not None:
        return stop
    path = _write_vars(session, decision.round + 1,
                       engine.challenge_vars(data, known, decision))
    try:
        prompt = launch.prompt_from(None, "challenge", vars_file=path)
        started = launch.resume(session.id, cwd, {}, prompt, False, None, False,
                                purpose="challenge", fresh_thread=True)
    except SparringError as error:
        return {**_report_step(session, inbox), "started": False, "kind": "challenge",
                "error": error.to_dict()}
    return {"action": "wait", "started": True, "round": started["round"], "kind": "challenge",
            "command": command("wait", session.id)}


def _resume_step(session: Session, decision: ledger.Decision, template: str,
                 path: Path) -> dict[str, Any]:
    """Codex's next round, on the variables written for it (`path`), as a command."""
    return {"action": "resume", "kind": decision.kind,
            "command": command("resume", session.id, "--template", template,
                               "--vars-file", here(str(path)))}


def _continue(session: Session, cwd: Path, step: dict[str, Any], inbox: str,
              template: str, path: Path) -> dict[str, Any]:
    """The debate goes on: start Codex's next round now, on the variables at `path`. If it
    cannot start, the verdict still stands and `next` is the resume command, with the
    reason; when the token budget is spent, `next` is the report."""
    try:
        prompt = launch.prompt_from(None, template, vars_file=path)
        started = launch.resume(session.id, cwd, {}, prompt, False, None, False)
    except SparringError as error:
        if error.code == "budget_exhausted":
            return {**_report_step(session, inbox), "started": False, "error": error.to_dict()}
        return {**step, "started": False, "error": error.to_dict()}
    return {"action": "wait", "started": True, "round": started["round"], "kind": step["kind"],
            "command": command("wait", session.id)}


def _guard_stop(session: Session, data: AnySession,
                step: dict[str, Any]) -> dict[str, Any] | None:
    """Files changed during a Codex turn: the loop stops here, whatever the decision, until
    the user decides; `after` is what comes next once they have."""
    stop = launch.guard_stop(session, untyped(data), "carry on with `after`")
    if stop is None:
        return None
    # The reason and the changed files name files Codex chose: data, printed as they are.
    return {"action": "stop", "reason": stop.message, "changed": stop.changed,
            "hint": Hint(stop.hint), "command": command("guard", "accept", session.id),
            "after": step}


def _report_step(session: Session, inbox: str) -> dict[str, Any]:
    return {"action": "report", "command": command("report", session.id, "--synthesis",
                               f"{here(inbox)}/synthesis.json")}


def _write_vars(session: Session, round_no: int, variables: dict[str, Any]) -> Path:
    path = Path(session.path, f"round-{round_no}-vars.json")
    write_private(path, json.dumps(variables, ensure_ascii=False, indent=2))
    return path
