"""Where a deep-discussion stands: rounds, the last message, consensus per side, what next.

`discuss status` prints it, and so does `wait` once Codex's round is in (`after_turn`, the
registry's `status` part).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring import states
from sparring.errors import Hint, SparringError, runner_said
from sparring.quoting import path_word
from sparring.records import DiscussionRecord, TurnRecord
from sparring.store import sessions, workspace
from sparring.store.sessions import Session, latest_turn
from sparring.turn import budget, lifecycle
from sparring.workflows import report as reports
from sparring.workflows.deep_discussion import transcript as discussion
from sparring.workflows.workflow import Context


def status(ref: str, cwd: str | Path, picking_up: bool = False) -> dict[str, Any]:
    session, data = load(ref, cwd)
    if data["turns"]:
        data, _ = lifecycle.settle(session)
    settings = data["discussion"]
    messages = discussion.transcript(session, data) if settings["topic"] else []
    latest_other = next((m for m in reversed(messages) if m.speaker != "claude"), None)
    latest_claude = next((m for m in reversed(messages) if m.speaker == "claude"), None)
    turn = latest_turn(data)
    reached = discussion.consensus(messages)
    return {
        "session": session.id, "topic": settings["topic"], "effort": settings["effort"],
        "model": settings["model"], "rounds": codex_rounds(messages),
        "max_rounds": settings["max_rounds"],
        "codex_turn": ({"status": states.reported(turn["status"]), "round": turn["round"],
                        "purpose": turn["purpose"], "error": runner_said(turn.get("error"))}
                       if turn else None),
        "last_message": messages[-1].to_dict() if messages else None,
        "consensus": {"claude": bool(latest_claude and latest_claude.consensus),
                      "other_side": bool(latest_other and latest_other.consensus),
                      "reached": reached},
        "search_requests": latest_other.to_dict()["search_requests"] if latest_other else [],
        "degraded": reports.degraded_reasons(data),
        "next": Hint(_next(session, settings, messages, turn, reached, picking_up)),
    }


def after_turn(session: Session, data: dict[str, Any], cwd: str | Path) -> dict[str, Any]:
    """Where the discussion stands, for poll and wait once Codex's round has ended (its
    `last_message` carries Codex's answer)."""
    return status(session.id, cwd)


def next_step(session: Session, data: dict[str, Any], cwd: str | Path) -> Hint:
    """Where an unfinished discussion picks up (`sparring status`)."""
    return Hint(status(session.id, cwd, picking_up=True)["next"])


def _next(session: Session, settings: DiscussionRecord, messages: list[discussion.Message],
          turn: TurnRecord | None, reached: bool, picking_up: bool = False) -> str:
    sid = session.id
    inbox = workspace.session_inbox(session.load())
    frame, report, answer = (f"{inbox}/{name}" for name in ("frame.yaml", "report.yaml",
                                                           "round.yaml"))
    if settings["topic"] is None:
        return f"frame the problem: `sparring discuss frame {sid} --file {path_word(frame)}`"
    if turn is not None and not states.is_terminal(turn["status"]):
        return f"Codex is answering: `sparring wait {sid}`, then `sparring discuss status {sid}`"
    spent = budget.reached(session.load())
    if spent is not None and settings["model"] != "NONE":
        return (f"the token budget is spent ({spent['used']:,} of {spent['budget']:,} tokens): "
                f"no further Codex turn starts, its synthesis neither; write your synthesis to "
                f"{report} and `sparring discuss report {sid} --file {path_word(report)}` "
                f"(to go on instead, the user can raise the budget with "
                f"--budget-tokens N on `sparring discuss round {sid}`)")
    if reached or codex_rounds(messages) >= settings["max_rounds"]:
        why = "consensus reached" if reached else f"round cap ({settings['max_rounds']}) reached"
        return (f"{why}: `sparring discuss synthesis {sid}`, then write your synthesis to "
                f"{report} and `sparring discuss report {sid} --file {path_word(report)}`")
    if settings["model"] == "NONE":
        return (f"write the critic's answer (and your next response) as YAML `critic:` / "
                f"`response:` to {answer}, then `sparring discuss round {sid} --file "
                f"{path_word(answer)}`")
    if messages and messages[-1].speaker == "claude":
        return (f"Codex has not answered yet: `sparring wait {sid}` (a failed turn: "
                "`resume --recover`)")
    answer_it = (f"write `response:` (and `search_results:` for its search requests) as YAML "
                 f"to {answer}, then `sparring discuss round {sid} --file {path_word(answer)}`")
    if picking_up:  # a new conversation has not read Codex's round yet
        return (f"Codex's round {codex_rounds(messages)} is in: `sparring wait {sid}` shows it "
                f"again (`discussion.last_message`); answer it: {answer_it}")
    return f"answer Codex: {answer_it}"


def load(ref: str, cwd: str | Path) -> tuple[Session, dict[str, Any]]:
    session = sessions.resolve(ref, cwd)
    data = session.load()
    if "discussion" not in data:
        raise SparringError("invalid_transition", f"{session.id} is not a deep-discussion",
                            "start one with `sparring discuss new --args -`")
    return session, data


def codex_rounds(messages: list[discussion.Message]) -> int:
    return sum(1 for m in messages if m.speaker != "claude")


def verb(context: Context, session: str) -> dict[str, Any]:
    """`sparring discuss status SESSION`: here, not in verbs.py (see arch_debate/status.py's
    verb)."""
    return status(session, context.cwd_text)
