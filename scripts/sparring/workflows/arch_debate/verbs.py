"""`sparring debate new|round|status`: arch-debate's own verbs, in a folder of round files
(declared in __init__.py; each is called with the Context the command line gives it).

Codex keeps one thread across rounds (round one starts it, later rounds
resume it), so each prompt carries only Claude's newest round, never the
growing transcript. Codex runs read-only; the runner writes its round file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sparring import paths, templates
from sparring.errors import Hint, SparringError
from sparring.quoting import path_word
from sparring.records import AnySession
from sparring.store import workspace
from sparring.store.inputs import mapping as inputs_mapping
from sparring.store.inputs import project_root, read_input
from sparring.store.sessions import Session
from sparring.turn import launch, lifecycle
from sparring.turn.brief import lean_status
from sparring.workflows.arch_debate import folder as debate
from sparring.workflows.arch_debate import status as debate_status
from sparring.workflows.arch_debate.go_on import go_on
from sparring.workflows.arch_debate.status import WORD_LIMIT, find_session
from sparring.workflows.sessions import create as new_session
from sparring.workflows.workflow import Context

# What the reply that settled a debate need not repeat (Claude has it, or acts on the rest).
_REPEATED = ("session", "question", "codex_turn")

PROTOCOL_SLOTS = {"codebase_context": "CODEBASE_CONTEXT", "options": "OPTIONS",
                  "open_questions": "OPEN_QUESTIONS"}


def new(context: Context, directory: Path, question: str | None, file: Path | None,
        budget_tokens: int | None) -> dict[str, Any]:
    """`debate new DIR QUESTION` or `debate new DIR --file PROTOCOL.yaml`."""
    if (question is None) == (file is None):
        raise SparringError("usage_error", "give QUESTION or --file, one of them",
                            "sparring debate new DIR --file PROTOCOL.yaml")
    if file is not None:
        text, slots = protocol_from(read_input(file, "--file"))
        return _new(context, directory, text, slots, budget_tokens)
    assert question is not None
    return _new(context, directory, question.strip(), None, budget_tokens)


def _new(context: Context, directory: Path, question: str, slots: dict[str, str] | None,
         budget_tokens: int | None) -> dict[str, Any]:
    """Scaffold DIR/DEBATE-PROTOCOL.md: the question, the rules, and the protocol's slots
    (codebase context, options, open questions) when given."""
    project = project_root()
    if not question.strip():
        raise SparringError("input_empty", "the debate needs a question",
                            "give it in the protocol file's `question:`")
    directory = debate.locate(context.cwd / directory, project)
    existing = debate.read(directory, project)
    if os.path.lexists(directory / debate.PROTOCOL) or existing.rounds or existing.misplaced:
        raise SparringError("debate_exists", f"{directory} already holds a debate",
                            f"continue it with `sparring debate status "
                            f"{path_word(directory)}`, or pick a new folder")
    root = workspace.find_root(directory.parent if not directory.exists() else directory)
    max_rounds = context.settings(root)["max_rounds"]
    debate.locate(directory, project, create=True)
    filled = {PROTOCOL_SLOTS[k]: v for k, v in (slots or {}).items() if v.strip()}
    _write_new(directory / debate.PROTOCOL, templates.render("arch-debate/protocol", {
        "QUESTION": question, "MAX_ROUNDS": max_rounds, "WORD_LIMIT": WORD_LIMIT,
        **filled}), project)
    session = new_session(context, root, root, budget_tokens, {"debate": {
        "dir": str(directory), "question": question, "sent": {}, "max_rounds": max_rounds}})
    inbox = workspace.inbox_dir(context.cwd)
    return {"dir": str(directory), "session": session.id, "question": question,
            "files": [debate.PROTOCOL], "inbox": str(inbox),
            "next": Hint(f"write your opening round (round 0) to {inbox}/round.md, then "
                         f"`sparring debate round {path_word(directory)} --file "
                         f"{path_word(f'{inbox}/round.md')}`")}


def protocol_from(raw: bytes) -> tuple[str, dict[str, str]]:
    """The question and the protocol's slots from a YAML (or JSON) mapping."""
    given = inputs_mapping(raw, "protocol", ("question",), (*PROTOCOL_SLOTS, "question"))
    return given["question"].strip(), {k: given.get(k, "") for k in PROTOCOL_SLOTS}


def _write_new(path: Path, text: str, project: Path) -> None:
    # never over a file that appeared meanwhile, never through a link (paths.write)
    paths.write(path, text, project, "the debate folder", mode=0o666)


def round_(context: Context, directory: Path, file: Path | None, stand_in: Path | None,
           options: dict[str, Any]) -> dict[str, Any]:
    """Record Claude's round (--file, when given), then run Codex's next round, or write the
    labelled stand-in round in its place. Once the debate is agreed or stuck, nothing
    starts."""
    claude = None if file is None else read_input(file, "--file")
    standing_in = None if stand_in is None else read_input(stand_in, "--stand-in")
    return _round(directory, context.cwd, options, claude, standing_in)


def _round(directory: Path, cwd: Path, options: dict[str, Any], claude: bytes | None,
           stand_in: bytes | None) -> dict[str, Any]:
    project = project_root()
    directory = debate.locate(cwd / directory, project)
    session, data = find_session(directory)
    data, _ = lifecycle.require_idle(session, data)
    if claude is not None:
        _write_claude_round(directory, data, claude, project)
    state = debate.read(directory, project, debate.written_by_runner(data))
    step = debate.next_step(state, data["debate"]["max_rounds"])
    if step in ("agreed", "stuck"):
        if claude is not None:  # Claude's round settled it: that is the answer
            settled = debate_status.status(directory, cwd)
            return {"session": session.id, "started": False, "debate": lean_status(
                {k: v for k, v in settled.items() if k not in _REPEATED})}
        raise SparringError("invalid_transition", f"the debate is {step}; there is no next "
                            "round", f"see `sparring debate status {path_word(directory)}`")
    n = state.codex_rounds + 1
    if step == "claude":
        wanted = f"round-{state.last.n if state.last else 0}-claude.md"
        file = f"{workspace.session_inbox(data)}/round.md"
        raise SparringError("round_missing", f"{wanted} has not been written yet",
                            f"write your round to {file} and run `sparring debate round "
                            f"{path_word(directory)} --file {path_word(file)}`")
    claude_round = state.rounds[-1]
    codex_file = directory / f"round-{n}-codex.md"
    if stand_in is not None:
        _record_sent(session, directory, claude_round, n, project)
        return _stand_in(session, directory, codex_file, n, stand_in, project)
    variables = {"ROUND": n, "FIRST_TURN": not data.get("thread_id"),
                 "DEBATE_DIR": str(directory), "CLAUDE_ROUND": _unseen(state, data),
                 "CLAUDE_AGREED": claude_round.agrees, "WORD_LIMIT": WORD_LIMIT,
                 "PROTOCOL": debate.read_file(directory / debate.PROTOCOL, project)}
    prompt = launch.Prompt(
        templates.render("arch-debate/codex-round", variables).encode(),
        {"name": "arch-debate/codex-round", "question": data["debate"]["question"]})
    # Round one opens the thread; if it never did (codex died at start), open it now.
    if not data.get("thread_id"):
        result = launch.start(session.path, cwd, options, prompt, schema="none",
                              answer_file=str(codex_file))
    else:
        result = launch.resume(session.path, cwd, options, prompt, schema="none",
                               answer_file=str(codex_file), again=go_on(session, data))
    # Only now has Codex been sent the round: until then it may still be handed in again.
    _record_sent(session, directory, claude_round, n, project)
    # Where the debate stands comes with `wait`, once Codex's round is in.
    return {**result, "started": True}


def _write_claude_round(directory: Path, data: AnySession, raw: bytes, project: Path) -> None:
    """Claude's next round file, written by the runner from what Claude handed in. A round
    Codex has not read yet may be handed in again (it is replaced); one it read may not."""
    text = paths.text_of(raw, "your round")
    if not text.strip():
        raise SparringError("input_empty", "the round is empty",
                            "write your round to a file and pass it with --file")
    state = debate.read(directory, project, debate.written_by_runner(data))
    last = state.last
    if last is not None and last.side == "claude":
        if last.name in data["debate"]["sent"] or state.agreed:
            raise SparringError("invalid_transition", f"{last.name} is already written and "
                                "read; it is Codex's turn",
                                f"`sparring debate round {path_word(directory)}` "
                                "(without --file)")
        # not read by Codex yet: the newer version counts
        paths.write(last.path, text, project, "the debate folder", replace=True, mode=0o666)
        return
    if state.agreed or debate.next_step(state, data["debate"]["max_rounds"]) == "stuck":
        raise SparringError("invalid_transition", "the debate is over; no round is due",
                            f"see `sparring debate status {path_word(directory)}`")
    _write_new(directory / f"round-{last.n if last else 0}-claude.md", text, project)


def _unseen(state: debate.DebateState, data: AnySession) -> str:
    """What Codex has not read on its thread: Claude's newest round, preceded by any rounds
    written while Codex was unavailable (a stand-in and the round answering it). Written for
    Codex, it names no side: Claude is the other analyst, and a stand-in's note is left out."""
    delivered = {os.path.basename(answer_file.rstrip(os.sep)) for t in data["turns"]
                 if t.get("answer_sha256") and (answer_file := t.get("answer_file"))}
    last_seen = max((i for i, r in enumerate(state.rounds) if r.name in delivered), default=-1)
    unseen = state.rounds[last_seen + 1:]  # from round 0 when Codex has answered nothing
    if len(unseen) == 1:
        return unseen[0].text
    parts = ["(Rounds written while you were unavailable, then the other analyst's newest "
             "round.)"]
    for item in unseen:
        label = ("written in your place by the other analyst (a stand-in)"
                 if item.side == "codex" else "the other analyst")
        text = item.text.removeprefix(debate.STAND_IN_NOTE).strip()
        parts.append(f"### Round {item.n}, {label}\n\n{text}")
    return "\n\n".join(parts) + "\n"


def _record_sent(session: Session, directory: Path, claude_round: debate.Round, n: int,
                 project: Path) -> None:
    """What Codex reads is recorded, so a later edit of it shows up as a rule break."""
    with session.update() as data:
        sent = data["debate"]["sent"]
        sent[claude_round.name] = debate.digest(claude_round.text)
        if n == 1:
            protocol = debate.read_file(directory / debate.PROTOCOL, project)
            sent[debate.PROTOCOL] = debate.digest(protocol)


def _stand_in(session: Session, directory: Path, codex_file: Path, n: int,
              text: bytes, project: Path) -> dict[str, Any]:
    if not text.strip():
        raise SparringError("input_empty", "the stand-in round is empty",
                            "write the devil's-advocate round to a file and pass --stand-in FILE")
    body = f"{debate.STAND_IN_NOTE}\n\n{paths.text_of(text, 'the stand-in round').strip()}\n"
    _write_new(codex_file, body, project)
    with session.edit() as data:
        record = data["debate"]
        record["stand_ins"] = [*record.get("stand_ins", []), n]
        record["written"] = {**record.get("written", {}), codex_file.name: debate.digest(body)}
        data["degraded_notes"] = [*data.get("degraded_notes", []), [
            n, "Codex was unavailable; Claude wrote this round as devil's advocate"]]
    return {"session": session.id, "stand_in": True, "file": str(codex_file),
            "debate": debate_status.status(directory, directory)}


