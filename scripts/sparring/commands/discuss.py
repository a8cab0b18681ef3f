"""`sparring discuss new|frame|round|status|synthesis|report`: deep-discussion.

Up to `max_rounds` (default 10) rounds on one Codex thread at the chosen
effort. The runner reads the markers from both sides' messages, hands search
requests to Claude, and declares consensus only when both sides said so.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from sparring import config, discussion, states, templates, view, workspace
from sparring import report as reports
from sparring import session as sessions
from sparring.commands import start as turns_verbs
from sparring.errors import SparringError
from sparring.session import Session, latest_turn
from sparring.state import write_atomic

SYNTHESIS_SECTIONS = ("agreed_points", "key_trade_offs", "recommended_approach",
                      "open_questions", "implementation_hints")


def new(arguments: str, cwd: Path) -> dict[str, Any]:
    effort, model = discussion.parse_arguments(arguments)
    root = workspace.find_root(cwd)
    max_rounds = config.workflow(config.load(root), "deep-discussion")["max_rounds"]
    session = sessions.create(root, "deep-discussion", cwd.resolve())
    with session.update() as data:
        data["discussion"] = {"effort": effort, "model": model, "max_rounds": max_rounds,
                              "topic": None, "messages": [], "opened_at": time.time()}
        if model == "NONE":
            data.setdefault("degraded_notes", []).append(
                [None, "model NONE: no Codex; Claude argued both sides, each labelled"])
    return {"session": session.id, "effort": effort, "model": model, "max_rounds": max_rounds,
            "next": f"frame the problem: `sparring discuss frame {session.id}` with TOPIC, "
                    "FRAMING, CONTEXT and CLAUDE_VIEW as YAML on stdin"}


def frame(ref: str, cwd: Path, raw: bytes, options: dict[str, Any]) -> dict[str, Any]:
    session, data = _load(ref, cwd)
    if data["discussion"]["topic"] is not None:
        raise SparringError("invalid_transition", "this discussion is already framed",
                            f"go on with `sparring discuss round {session.id}`")
    given = _mapping(raw, ("TOPIC", "FRAMING", "CLAUDE_VIEW"), "framing")
    started: dict[str, Any] = {}
    if data["discussion"]["model"] != "NONE":
        variables = {**given, "EFFORT": data["discussion"]["effort"],
                     "MAX_ROUNDS": data["discussion"]["max_rounds"]}
        prompt = turns_verbs.Prompt(
            templates.render("deep-discussion/first", variables).encode(),
            {"name": "deep-discussion/first", "question": given["TOPIC"]})
        # Codex's turn first: if it cannot start, nothing is recorded and framing can be
        # handed in again.
        started = turns_verbs.start(str(session.dir), cwd, _effort(data, options), prompt,
                                    schema="none")
    with session.update() as locked:
        locked["discussion"].update(topic=given["TOPIC"], framing=given["FRAMING"],
                                    context=given.get("CONTEXT", ""))
        locked["discussion"]["messages"].append(
            {"round": 1, "speaker": "claude", "text": given["CLAUDE_VIEW"]})
    return {**started, "discussion": status(ref, cwd)}


def round_(ref: str, cwd: Path, raw: bytes, options: dict[str, Any],
           accept_changes: bool = False) -> dict[str, Any]:
    session, data = _load(ref, cwd)
    data, _ = view.require_idle(session, data)
    settings = data["discussion"]
    if settings["topic"] is None:
        raise SparringError("invalid_transition", "frame the problem first",
                            f"`sparring discuss frame {session.id}`")
    messages = discussion.transcript(session, data)
    if discussion.consensus(messages) or _codex_rounds(messages) >= settings["max_rounds"]:
        raise SparringError("invalid_transition", "the discussion is over (consensus or the "
                            "round cap)", f"`sparring discuss synthesis {session.id}`")
    if settings["model"] == "NONE":
        return _none_round(session, messages, raw, cwd)
    given = _mapping(raw, ("response",), "round")
    # Codex's last round failed (stopped, timed out...): this response asks it again.
    retry = messages[-1].speaker == "claude"
    round_no = messages[-1].round if retry else messages[-1].round + 1
    message = {"round": round_no, "speaker": "claude", "text": given["response"]}
    if not retry and discussion.consensus(
            [*messages, discussion.Message(round_no, "claude", given["response"])]):
        _add_messages(session, [message])  # Claude confirms Codex's consensus: no new round
        return status(str(session.dir), cwd)
    variables = {"ROUND": round_no, "MAX_ROUNDS": settings["max_rounds"],
                 "CLAUDE_RESPONSE": given["response"],
                 "SEARCH_RESULTS": given.get("search_results", "")}
    prompt = turns_verbs.Prompt(templates.render("deep-discussion/round", variables).encode(),
                                {"name": "deep-discussion/round", "question": settings["topic"]})
    resumed = turns_verbs.resume(str(session.dir), cwd, _effort(data, options), prompt,
                                 schema="none", accept_changes=accept_changes)
    _add_messages(session, [message], replace_round=round_no if retry else 0)
    return {**resumed, "discussion": status(str(session.dir), cwd)}


def _none_round(session: Session, messages: list[discussion.Message], raw: bytes,
                cwd: Path) -> dict[str, Any]:
    """Model NONE: Claude's labelled critic answers, then (optionally) Claude responds."""
    last = messages[-1]
    given = _mapping(raw, ("critic",) if last.speaker == "claude" else ("response",), "round")
    new = []
    if last.speaker == "claude":
        new.append({"round": last.round, "speaker": "critic", "text": given["critic"]})
    if given.get("response"):
        new.append({"round": last.round + 1, "speaker": "claude", "text": given["response"]})
    _add_messages(session, new)
    return status(str(session.dir), cwd)


def _add_messages(session: Session, new: list[dict[str, Any]], replace_round: int = 0) -> None:
    with session.update() as locked:
        kept = locked["discussion"]["messages"]
        if replace_round:  # a retried round replaces Claude's message of that round
            kept[:] = [m for m in kept if not (m["round"] == replace_round
                                               and m["speaker"] == "claude")]
        kept.extend(new)


def status(ref: str, cwd: Path) -> dict[str, Any]:
    session, data = _load(ref, cwd)
    if data["turns"]:
        view.observe(session)
        data = session.load()
    settings = data["discussion"]
    messages = discussion.transcript(session, data) if settings["topic"] else []
    latest_other = next((m for m in reversed(messages) if m.speaker != "claude"), None)
    latest_claude = next((m for m in reversed(messages) if m.speaker == "claude"), None)
    turn = latest_turn(data)
    reached = discussion.consensus(messages)
    return {
        "session": session.id, "topic": settings["topic"], "effort": settings["effort"],
        "model": settings["model"], "rounds": _codex_rounds(messages),
        "max_rounds": settings["max_rounds"],
        "codex_turn": ({"status": states.reported(turn["status"]), "round": turn["round"],
                        "purpose": turn["purpose"], "error": turn.get("error")}
                       if turn else None),
        "last_message": messages[-1].to_dict() if messages else None,
        "consensus": {"claude": bool(latest_claude and latest_claude.consensus),
                      "other_side": bool(latest_other and latest_other.consensus),
                      "reached": reached},
        "search_requests": latest_other.to_dict()["search_requests"] if latest_other else [],
        "degraded": reports.degraded_reasons(data),
        "next": _next(session, settings, messages, turn, reached),
    }


def _next(session: Session, settings: dict[str, Any], messages: list[discussion.Message],
          turn: dict[str, Any] | None, reached: bool) -> str:
    sid = session.id
    if settings["topic"] is None:
        return f"frame the problem: `sparring discuss frame {sid}`"
    if turn is not None and not states.is_terminal(turn["status"]):
        return f"Codex is answering: `sparring wait {sid}`, then `sparring discuss status {sid}`"
    if reached or _codex_rounds(messages) >= settings["max_rounds"]:
        why = "consensus reached" if reached else f"round cap ({settings['max_rounds']}) reached"
        return f"{why}: `sparring discuss synthesis {sid}`, then `sparring discuss report {sid}`"
    if settings["model"] == "NONE":
        return (f"write the critic's answer (and your next response) as YAML `critic:` / "
                f"`response:` on stdin to `sparring discuss round {sid}`")
    if messages and messages[-1].speaker == "claude":
        return (f"Codex has not answered yet: `sparring wait {sid}` (a failed turn: "
                "`resume --recover`)")
    return (f"answer Codex: `sparring discuss round {sid}` with `response:` (and "
            "`search_results:` for its search requests) as YAML on stdin")


def synthesis(ref: str, cwd: Path, options: dict[str, Any]) -> dict[str, Any]:
    session, data = _load(ref, cwd)
    data, _ = view.require_idle(session, data)
    settings = data["discussion"]
    if settings["model"] == "NONE":
        return {**status(ref, cwd), "next": f"write the report: `sparring discuss report {ref}`"}
    messages = discussion.transcript(session, data)
    outcome = "consensus" if discussion.consensus(messages) else "no consensus"
    prompt = turns_verbs.Prompt(templates.render("deep-discussion/synthesis", {
        "TOPIC": settings["topic"], "OUTCOME": outcome}).encode(),
        {"name": "deep-discussion/synthesis", "question": settings["topic"]})
    return turns_verbs.resume(str(session.dir), cwd, _effort(data, options), prompt,
                              schema="none", purpose="synthesis")


def report(ref: str, cwd: Path, raw: bytes, out: Path | None) -> dict[str, Any]:
    session, data = _load(ref, cwd)
    given = _mapping(raw, (*SYNTHESIS_SECTIONS, "final_observations"), "synthesis")
    messages = discussion.transcript(session, data)
    settings = data["discussion"]
    model = reports.build(session, data, None)
    now = time.time()
    path = reports.destination(data, out, {"epoch": str(int(now))})
    text = templates.render("deep-discussion/report", {"R": model, "D": {
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(now)),
        "topic": settings["topic"], "framing": settings.get("framing", ""),
        "model": settings["model"], "effort": settings["effort"],
        "rounds": _codex_rounds(messages), "consensus": discussion.consensus(messages),
        "transcript": [m.to_dict() for m in messages], "synthesis": given,
        "codex_synthesis": discussion.codex_synthesis(session, data)}})
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    write_atomic(path.with_suffix(".json"), json.dumps(model, ensure_ascii=False, indent=2))
    with session.update() as locked:
        if str(path) not in locked.setdefault("reports", []):
            locked["reports"].append(str(path))
    return {"session": session.id, "report": str(path), "degraded": bool(model["degraded"]),
            "consensus": discussion.consensus(messages), "rounds": _codex_rounds(messages)}


def _load(ref: str, cwd: Path) -> tuple[Session, dict[str, Any]]:
    session = sessions.resolve(ref, cwd)
    data = session.load()
    if "discussion" not in data:
        raise SparringError("invalid_transition", f"{session.id} is not a deep-discussion",
                            "start one with `sparring discuss new --args -`")
    return session, data


def _codex_rounds(messages: list[discussion.Message]) -> int:
    return sum(1 for m in messages if m.speaker != "claude")


def _effort(data: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    return {**options, "effort": options.get("effort") or data["discussion"]["effort"]}


def _mapping(raw: bytes, required: tuple[str, ...], what: str) -> dict[str, Any]:
    """A YAML (or JSON) mapping from stdin with the required keys, each non-empty text."""
    import yaml

    try:
        data = yaml.safe_load(raw.decode("utf-8", errors="replace"))
    except yaml.YAMLError as exc:
        raise SparringError("usage_error", f"the {what} is not valid YAML: {exc}",
                            f"give a YAML mapping with {', '.join(required)}") from exc
    if not isinstance(data, dict):
        raise SparringError("input_empty" if data is None else "usage_error",
                            f"the {what} must be a YAML mapping",
                            f"give a YAML mapping with {', '.join(required)}")
    missing = [k for k in required if not str(data.get(k) or "").strip()]
    if missing:
        raise SparringError("usage_error", f"the {what} lacks {', '.join(missing)}",
                            f"give a YAML mapping with {', '.join(required)}")
    return {str(k): str(v) for k, v in data.items() if v is not None}
