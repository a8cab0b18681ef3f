"""Where an arch-debate stands: whose turn, agreed or stuck, rule breaks, what to do next.

`debate status` prints it, and so does `wait` once Codex's round is in (`after_turn`, the
registry's `status` part). Once the debate is agreed it writes round-N-agreed.md; once it
is stuck, DECISION-NEEDED.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sparring import states, templates
from sparring.errors import Hint, SparringError, runner_said
from sparring.quoting import path_word
from sparring.records import AnySession
from sparring.store import locate, sessions, workspace
from sparring.store.sessions import Session, latest_turn
from sparring.turn import budget, lifecycle
from sparring.workflows import adr, markers
from sparring.workflows import report as reports
from sparring.workflows.arch_debate import WORKFLOW
from sparring.workflows.arch_debate import audit as debate_audit
from sparring.workflows.arch_debate import folder as debate
from sparring.workflows.arch_debate.go_on import no_folder
from sparring.workflows.workflow import Context

WORD_LIMIT = 500


def find_session(directory: str | Path) -> tuple[Session, dict[str, Any]]:
    """The newest arch-debate session of the folder. Only an arch-debate's session holds a
    debate, and its id begins with the workflow's name (session.create): the project's other
    sessions are not read at all, however many there are."""
    root = locate.project_root(os.fspath(directory))  # workspace.find_root's, as str
    for session in reversed(sessions.all_sessions(root)):
        if session.id.rsplit("-", 3)[0] != WORKFLOW.name:
            continue
        try:
            data = session.load()
        except SparringError:
            continue
        if (data.get("debate") or {}).get("dir") == os.fspath(directory):
            return session, data
    raise SparringError("session_not_found", f"{directory} is not a debate sparring started",
                        'start one with `sparring debate new DIR "QUESTION"`')


def status(directory: str | Path, cwd: str | Path) -> dict[str, Any]:
    project = locate.project_root(os.getcwd())
    directory = debate.where(os.path.join(cwd, directory), project)
    session, data = find_session(directory)
    if data["turns"]:
        data, _ = lifecycle.settle(session)  # a finished turn writes its round file first
    return _status(session, data, directory, project)


def after_turn(session: Session, data: dict[str, Any], cwd: str | Path) -> dict[str, Any]:
    """Where the debate stands, for poll and wait once Codex's round has ended (and for
    `status`): of the session they observed, not one found again among all the project's by
    its folder."""
    project = locate.project_root(os.getcwd())
    directory = debate.where(os.path.join(cwd, data["debate"]["dir"]), project)
    return _status(session, data, directory, project)


def _status(session: Session, data: dict[str, Any], directory: str,
            project: str) -> dict[str, Any]:
    state = debate.read(directory, project, debate.written_by_runner(data))
    settings = data["debate"]
    step = debate.next_step(state, settings["max_rounds"])
    breaks = debate.rule_breaks(state, settings["sent"], WORD_LIMIT)
    breaks += [f"Codex's round {t['round']} could not be written to its file "
               f"({t['answer_file_error']}); its answer is in {t['answer_file_kept']}"
               for t in data["turns"] if t.get("answer_file_kept")]
    written, outcome = write_outcome(session, data, directory, state, step, breaks, project)
    turn = latest_turn(data)
    return {
        "dir": str(directory), "session": session.id, "question": settings["question"],
        "rounds": state.codex_rounds, "max_rounds": settings["max_rounds"],
        "files": [r.name for r in state.rounds] + written,
        "step": step,
        "codex_turn": ({"status": states.reported(turn["status"]), "round": turn["round"],
                        "error": runner_said(turn.get("error"))} if turn else None),
        "agreed": _agreed_dict(state, directory),
        "proposal": ({"by": state.proposal.side, "file": state.proposal.name}
                     if state.proposal else None),
        "stuck": step == "stuck",
        "outcome": outcome["outcome"] if outcome else None,
        "outcome_reasons": outcome["reasons"] if outcome else [],
        "positions": debate.positions(state) if step == "stuck" else [],
        "rule_breaks": breaks,
        "degraded": reports.degraded_reasons(data) + [
            f"{r.name} is not Codex's (not written by the runner)" for r in state.rounds
            if not r.authentic],
        "next": Hint(_next(step, state, directory, session, data, outcome)),
    }


def next_step(session: Session, data: dict[str, Any], cwd: str | Path) -> Hint:
    """Where an unfinished debate picks up (`sparring status`): its folder and its `next`."""
    if "debate" not in data:  # made by `init` alone: nothing to pick up
        return Hint(no_folder(session).hint)
    found = after_turn(session, data, cwd)
    return Hint(f"the debate in {path_word(found['dir'])} (session {session.id}), "
                f"step {found['step']}: {_unread(found)}{found['next']}")


def _unread(found: dict[str, Any]) -> str:
    """Codex's latest round, which the conversation picking the debate up has not read."""
    if found["step"] != "claude" or not found["rounds"]:
        return ""
    return f"read Codex's round {found['dir']}/round-{found['rounds']}-codex.md whole, then "


def _agreed_dict(state: debate.DebateState, directory: str) -> dict[str, Any] | None:
    if not state.agreed:
        return None
    proposed, confirmed = state.agreed["proposed"], state.agreed["confirmed"]
    return {"proposed_by": proposed.side, "proposed_in": proposed.name,
            "confirmed_by": confirmed.side, "confirmed_in": confirmed.name,
            "file": os.path.join(directory, f"round-{confirmed.n}-agreed.md")}


def write_outcome(session: Session, data: AnySession, directory: str | Path,
                  state: debate.DebateState, step: str, breaks: list[str],
                  project: str | Path) -> tuple[list[str], dict[str, Any] | None]:
    """round-N-agreed.md once agreement is confirmed; DECISION-NEEDED.md once stuck, each
    with its facts as JSON beside it (the agreement audit among them); with the outcome as
    the record carries it (`agreed`, or `contested` or `unchallenged` when the audit says
    so; `stalemate` once stuck) and why."""
    if step not in ("agreed", "stuck"):
        return [], None
    directory, project = Path(directory), Path(project)
    model = reports.build(session, data, None,
                          debate_audit.compute(session, data, state, project))
    model["degraded"] += [f"{r.name} is not Codex's (not written by the runner)"
                          for r in state.rounds if not r.authentic]
    reports.prose_outcome(model, "agreed" if step == "agreed" else None, "stalemate",
                          debate.STUCK)
    question = data["debate"]["question"]
    if step == "agreed":
        assert state.agreed is not None
        proposed, confirmed = state.agreed["proposed"], state.agreed["confirmed"]
        path = directory / f"round-{confirmed.n}-agreed.md"
        text = templates.render("arch-debate/agreed", {
            "ROUND": confirmed.n, "QUESTION": question, "R": model,
            "PROPOSED_BY": debate.NAMES[proposed.side], "PROPOSED_IN": proposed.name,
            "CONFIRMED_BY": debate.NAMES[confirmed.side], "CONFIRMED_IN": confirmed.name,
            "BRIEF": markers.after_agreed(proposed.text)})
    else:
        path = directory / debate.DECISION_NEEDED
        text = templates.render("arch-debate/decision-needed", {
            "QUESTION": question, "R": model, "ROUNDS": debate.positions(state),
            "STUCK": debate.STUCK, "RULE_BREAKS": breaks})
    if not os.path.lexists(path):  # written once; a link there is never followed
        reports.write(path, adr.document(model, text), model, root=project)
    return ([path.name, path.with_suffix(".json").name],
            {"outcome": model["outcome"], "reasons": model["outcome_reasons"]})


def _next(step: str, state: debate.DebateState, directory: str, session: Session,
          data: dict[str, Any], outcome: dict[str, Any] | None = None) -> str:
    """What to do next, from the session as status read it (what it may write meanwhile,
    an outcome's report, changes neither its budget nor its inbox)."""
    turn = latest_turn(data)
    if turn is not None and not states.is_terminal(turn["status"]):
        return f"Codex is writing its round: `sparring wait {session.id}`, then this status again"
    if step == "agreed" and outcome and outcome["reasons"]:
        return (f"agreed, but {'; '.join(outcome['reasons'])}: show the user the agreed brief "
                "and tell them so, then commit the debate folder")
    if step == "agreed":
        return "agreed: show the user the agreed brief and commit the debate folder"
    if step == "stuck":
        return f"{debate.STUCK}: show the user {debate.DECISION_NEEDED} and let them decide"
    spent = budget.reached(data)
    if spent is not None:
        return (f"the token budget is spent ({spent['used']:,} of {spent['budget']:,} tokens): "
                "no further Codex round starts; show the user where the debate stands; to go "
                f"on, they can raise it with --budget-tokens N on `sparring debate round "
                f"{path_word(directory)}`")
    if step == "codex":
        return f"`sparring debate round {path_word(directory)}` runs Codex's next round"
    last = state.last
    wanted = f"round-{last.n if last else 0}-claude.md"
    file = f"{workspace.session_inbox(data)}/round.md"
    hand_in = f"`sparring debate round {path_word(directory)} --file {path_word(file)}`"
    if state.proposal is not None and state.proposal.side == "codex":
        return (f"Codex opened with AGREED: — write your round ({wanted}) to {file}: "
                f"open it with AGREED: and restate the brief to confirm (or answer its points "
                f"if you do not agree), then {hand_in}")
    return f"write your round ({wanted}) to {file}, then {hand_in}"


def verb(context: Context, directory: str | Path) -> dict[str, Any]:
    """`sparring debate status DIR`."""
    return status(directory, context.cwd_text)
