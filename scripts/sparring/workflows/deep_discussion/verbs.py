"""`sparring discuss new|frame|round|status|synthesis|report`: deep-discussion's own verbs
(declared in __init__.py; each is called with the Context the command line gives it).

Up to `max_rounds` (default 10) rounds on one Codex thread at the chosen
effort. The runner reads the markers from both sides' messages, hands search
requests to Claude, and declares consensus only when both sides said so.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sparring import templates
from sparring.errors import Hint, SparringError
from sparring.quoting import path_word
from sparring.records import AnySession
from sparring.store import workspace
from sparring.store.inputs import mapping, read_input
from sparring.store.sessions import Session
from sparring.turn import launch, lifecycle
from sparring.turn.brief import lean_status
from sparring.workflows import adr
from sparring.workflows import report as reports
from sparring.workflows.deep_discussion import audit as discussion_audit
from sparring.workflows.deep_discussion import status as discussion_status
from sparring.workflows.deep_discussion import transcript as discussion
from sparring.workflows.deep_discussion.go_on import go_on
from sparring.workflows.deep_discussion.status import codex_rounds, load
from sparring.workflows.sessions import create as new_session
from sparring.workflows.workflow import Context

SYNTHESIS_SECTIONS = ("agreed_points", "key_trade_offs", "recommended_approach",
                      "open_questions", "implementation_hints")

# What a round's reply need not repeat: it never changes within a discussion.
_REPEATED = ("session", "topic", "effort", "model", "codex_turn")


def new(context: Context, arguments: str, file: Path | None,
        budget_tokens: int | None) -> dict[str, Any]:
    """The skill's arguments from --args (`-`: stdin) or --file."""
    if file is not None or arguments == "-":
        arguments = read_input(file, "--file").decode("utf-8", errors="replace")
    effort, model, topic = discussion.parse_arguments(arguments)
    cwd = context.cwd
    root = workspace.find_root(cwd)
    max_rounds = context.settings(root)["max_rounds"]
    sections: dict[str, Any] = {"discussion": {
        "effort": effort, "model": model, "max_rounds": max_rounds, "topic": None,
        "topic_given": topic, "messages": [], "opened_at": time.time()}}
    if model == "NONE":
        sections["degraded_notes"] = [
            [None, "model NONE: no Codex; Claude argued both sides, each labelled"]]
    session = new_session(context, root, cwd.resolve(), budget_tokens, sections)
    inbox = workspace.inbox_dir(cwd)
    source = ("TOPIC is the `topic` the user gave" if topic else
              "no topic was given: take TOPIC from the conversation")
    return {"session": session.id, "effort": effort, "model": model, "topic": topic,
            "max_rounds": max_rounds, "inbox": str(inbox),
            "next": Hint(f"frame the problem ({source}): write TOPIC, FRAMING, CONTEXT and "
                         f"CLAUDE_VIEW as YAML to {inbox}/frame.yaml, then `sparring discuss "
                         f"frame {session.id} --file {path_word(f'{inbox}/frame.yaml')}`")}


def frame(context: Context, session: str, file: Path | None,
           options: dict[str, Any]) -> dict[str, Any]:
    """The framing YAML from --file (default: stdin)."""
    return _frame(session, context.cwd, read_input(file, "--file"), options)


def _frame(ref: str, cwd: Path, raw: bytes, options: dict[str, Any]) -> dict[str, Any]:
    session, data = load(ref, cwd)
    if data["discussion"]["topic"] is not None:
        raise SparringError("invalid_transition", "this discussion is already framed",
                            f"go on with `sparring discuss round {session.id}`")
    given = mapping(raw, "framing", ("TOPIC", "FRAMING", "CLAUDE_VIEW"))
    started: dict[str, Any] = {}
    if data["discussion"]["model"] != "NONE":
        variables = {**given, "EFFORT": data["discussion"]["effort"],
                     "MAX_ROUNDS": data["discussion"]["max_rounds"]}
        prompt = launch.Prompt(
            templates.render("deep-discussion/first", variables).encode(),
            {"name": "deep-discussion/first", "question": given["TOPIC"]})
        # Codex's turn first: if it cannot start, nothing is recorded and framing can be
        # handed in again.
        started = launch.start(session.path, cwd, _effort(data, options), prompt,
                               schema="none")
    with session.update() as locked:
        locked["discussion"].update(topic=given["TOPIC"], framing=given["FRAMING"],
                                    context=given.get("CONTEXT", ""))
        locked["discussion"]["messages"].append(
            {"round": 1, "speaker": "claude", "text": given["CLAUDE_VIEW"]})
    # Codex's round runs: `wait` prints where the discussion stands once it has answered.
    return {"session": session.id, **started}


def round_(context: Context, session: str, file: Path | None, accept_changes: bool,
           options: dict[str, Any]) -> dict[str, Any]:
    """The round YAML from --file (default: stdin)."""
    return _round(session, context.cwd, read_input(file, "--file"), options, accept_changes)


def _round(ref: str, cwd: Path, raw: bytes, options: dict[str, Any],
           accept_changes: bool) -> dict[str, Any]:
    session, data = load(ref, cwd)
    data, _ = lifecycle.require_idle(session, data)
    settings = data["discussion"]
    if settings["topic"] is None:
        raise SparringError("invalid_transition", "frame the problem first",
                            f"`sparring discuss frame {session.id}`")
    messages = discussion.transcript(session, data)
    if discussion.consensus(messages) or codex_rounds(messages) >= settings["max_rounds"]:
        raise SparringError("invalid_transition", "the discussion is over (consensus or the "
                            "round cap)", f"`sparring discuss synthesis {session.id}`")
    if settings["model"] == "NONE":
        return _none_round(session, messages, raw, cwd)
    given = mapping(raw, "round", ("response",))
    # Codex's last round failed (stopped, timed out...): this response asks it again.
    retry = messages[-1].speaker == "claude"
    round_no = messages[-1].round if retry else messages[-1].round + 1
    message = {"round": round_no, "speaker": "claude", "text": given["response"],
               "search_results": given.get("search_results", "")}
    if not retry and discussion.consensus(
            [*messages, discussion.Message(round_no, "claude", given["response"])]):
        _add_messages(session, [message])  # Claude confirms Codex's consensus: no new round
        return _lean_status(session.path, cwd)
    variables = {"ROUND": round_no, "MAX_ROUNDS": settings["max_rounds"],
                 "CLAUDE_RESPONSE": given["response"],
                 "SEARCH_RESULTS": given.get("search_results", "")}
    prompt = launch.Prompt(templates.render("deep-discussion/round", variables).encode(),
                           {"name": "deep-discussion/round", "question": settings["topic"]})
    resumed = launch.resume(session.path, cwd, _effort(data, options), prompt,
                            schema="none", accept_changes=accept_changes,
                            again=go_on(session, data))
    _add_messages(session, [message], replace_round=round_no if retry else 0)
    return resumed  # `wait` prints where the discussion stands once Codex has answered


def _none_round(session: Session, messages: list[discussion.Message], raw: bytes,
                cwd: Path) -> dict[str, Any]:
    """Model NONE: Claude's labelled critic answers, then (optionally) Claude responds."""
    last = messages[-1]
    given = mapping(raw, "round", ("critic",) if last.speaker == "claude" else ("response",))
    new = []
    if last.speaker == "claude":
        new.append({"round": last.round, "speaker": "critic", "text": given["critic"]})
    if given.get("response"):
        new.append({"round": last.round + 1, "speaker": "claude", "text": given["response"]})
    _add_messages(session, new)
    return _lean_status(session.path, cwd)


def _add_messages(session: Session, new: list[dict[str, Any]], replace_round: int = 0) -> None:
    with session.update() as locked:
        kept = locked["discussion"]["messages"]
        if replace_round:  # a retried round replaces Claude's message of that round
            kept[:] = [m for m in kept if not (m["round"] == replace_round
                                               and m["speaker"] == "claude")]
        kept.extend(new)


def _status(ref: str, cwd: str | Path) -> dict[str, Any]:
    return discussion_status.status(ref, cwd)


def _lean_status(ref: str, cwd: Path) -> dict[str, Any]:
    """Where the discussion stands after a round with no Codex turn, as a round prints it:
    without what Claude knows already or what is empty (`discuss status` prints all)."""
    found = _status(ref, cwd)
    return {"session": found["session"], **lean_status(
        {k: v for k, v in found.items() if k not in _REPEATED})}


def synthesis(context: Context, session: str, options: dict[str, Any]) -> dict[str, Any]:
    return _synthesis(session, context.cwd, options)


def _synthesis(ref: str, cwd: Path, options: dict[str, Any]) -> dict[str, Any]:
    session, data = load(ref, cwd)
    data, _ = lifecycle.require_idle(session, data)
    settings = data["discussion"]
    if settings["model"] == "NONE":
        report = f"{workspace.session_inbox(session.load())}/report.yaml"
        return {**_status(ref, cwd), "next": Hint(
            f"write your synthesis to {report}, then `sparring discuss report {session.id} "
            f"--file {path_word(report)}`")}
    messages = discussion.transcript(session, data)
    outcome = "consensus" if discussion.consensus(messages) else "no consensus"
    prompt = launch.Prompt(templates.render("deep-discussion/synthesis", {
        "TOPIC": settings["topic"], "OUTCOME": outcome}).encode(),
        {"name": "deep-discussion/synthesis", "question": settings["topic"]})
    return launch.resume(session.path, cwd, _effort(data, options), prompt,
                         schema="none", purpose="synthesis", again=go_on(session, data))


def report(context: Context, session: str, file: Path | None, out: Path | None
           ) -> dict[str, Any]:
    """Claude's synthesis YAML from --file (default: stdin)."""
    return _report(context, session, read_input(file, "--file"), out)


def _report(context: Context, ref: str, raw: bytes, out: Path | None) -> dict[str, Any]:
    session, data = load(ref, context.cwd)
    given = mapping(raw, "synthesis", (*SYNTHESIS_SECTIONS, "final_observations"))
    messages = discussion.transcript(session, data)
    settings = data["discussion"]
    model = reports.build(session, data, None, discussion_audit.compute(session, data, given))
    reports.prose_outcome(model, "consensus" if discussion.consensus(messages) else None,
                          "no consensus")
    now = time.time()
    pattern = None if out is not None else context.settings(Path(data["root"]))["report_path"]
    text = adr.document(model, templates.render("deep-discussion/report", {"R": model, "D": {
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(now)),
        "topic": settings["topic"], "framing": settings.get("framing", ""),
        "model": settings["model"], "effort": settings["effort"],
        "rounds": codex_rounds(messages), "consensus": discussion.consensus(messages),
        "transcript": [m.to_dict() for m in messages], "synthesis": given,
        "codex_synthesis": discussion.codex_synthesis(session, data)}}))
    path, _ = reports.publish(data, out, pattern, text, model, {"epoch": str(int(now))})
    reports.remember(session, path, text, model)
    return {"session": session.id, "report": str(path), "degraded": bool(model["degraded"]),
            "consensus": discussion.consensus(messages), "outcome": model["outcome"],
            "outcome_reasons": model["outcome_reasons"], "rounds": codex_rounds(messages)}


def _effort(data: AnySession, options: dict[str, Any]) -> dict[str, Any]:
    return {**options, "effort": options.get("effort") or data["discussion"]["effort"]}
