"""`sparring start` and `sparring resume`: launch a turn in the background.

Both return once codex has run for a short start window (or ended sooner),
so a codex that dies at once — a rejected flag, a missing binary, a bad
config — is reported as a failed start with its stderr, not as `running`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sparring import answers, codex, config, engine, runner, states, templates, turns, view
from sparring import session as sessions
from sparring.errors import SparringError
from sparring.inputs import read_input
from sparring.session import Session, find_turn

_START_POLL_S = 0.05
_START_CAP_S = 30.0


def start_window() -> float:
    """Seconds codex must survive to count as started (Supervisor's `startsecs`)."""
    return float(os.environ.get("SPARRING_STARTSECS", "1.0"))


def read_prompt(prompt_file: Path | None, stdin: BinaryIO | None = None) -> bytes:
    """The prompt bytes, exactly as given, from a file or from stdin."""
    data = read_input(prompt_file, "--prompt-file", stdin)
    if not data.strip():
        raise SparringError("prompt_empty", "the prompt is empty",
                            "write the prompt to a file and pass --prompt-file FILE")
    return data


@dataclass(frozen=True)
class Prompt:
    text: bytes
    template: dict[str, Any] | None = None  # name, and the question it asked, for reports


def prompt_from(prompt_file: Path | None, template: str | None, pairs: tuple[str, ...] = (),
                file_pairs: tuple[str, ...] = (), vars_file: Path | None = None,
                stdin: BinaryIO | None = None) -> Prompt:
    """The prompt from a rendered template, a file, or stdin — exactly one of them."""
    if template is None:
        if pairs or file_pairs or vars_file:
            raise SparringError("usage_error", "--var, --var-file and --vars-file need --template",
                                "add --template NAME (see `sparring render --list`)")
        return Prompt(read_prompt(prompt_file, stdin))
    if prompt_file is not None:
        raise SparringError("usage_error", "give --template or --prompt-file, not both",
                            "drop one of them")
    variables = templates.collect(pairs, file_pairs, vars_file)
    question = variables.get("QUESTION") or variables.get("TOPIC")
    return Prompt(templates.render(template, variables).encode(),
                  {"name": template, "question": question})


def start(ref: str, cwd: Path, options: dict[str, Any], prompt: Prompt,
          schema: str | None = None, answer_file: str | None = None) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    data = session.load()
    if data["turns"]:
        raise SparringError("invalid_transition", f"session {session.id} has already started",
                            f"continue it with `sparring resume {session.id}`")
    settings = config.resolve_turn(options, config.load(Path(data["root"])))
    schema = _schema_for(data, schema)
    executable = _codex_for(session, data)
    request = codex.TurnRequest(cwd=Path(data["cwd"]), effort=settings.effort,
                                sandbox=settings.sandbox, model=settings.model,
                                output_schema=answers.schema_path(schema) if schema else None)
    with session.update() as locked:
        if locked["turns"]:  # another `start` won the race while we looked up codex
            raise SparringError("invalid_transition", f"session {session.id} has already "
                                "started", f"continue it with `sparring resume {session.id}`")
        turn = turns.new_turn(session, locked, round_no=1, purpose="round", settings=settings,
                              prompt=prompt.text, argv=codex.exec_argv(executable, request),
                              thread_id=None, schema=schema, template=prompt.template,
                              answer_file=answer_file)
    return _launch(session, turn["n"])


def resume(ref: str, cwd: Path, options: dict[str, Any], prompt: Prompt | None,
           recover: bool = False, schema: str | None = None,
           accept_changes: bool = False, answer_file: str | None = None,
           purpose: str = "round") -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    data = session.load()
    previous = _resumable(session, data, recover)
    _check_guard(session, previous, accept_changes)
    if recover:
        if prompt is not None:
            raise SparringError("usage_error", "--recover re-sends the interrupted round's "
                                "prompt; do not give another", "drop --prompt-file or --recover")
        prompt = Prompt(session.turn_file(previous["n"], turns.PROMPT).read_bytes(),
                        previous.get("template"))
        schema = schema or previous.get("schema") or "none"
        answer_file = answer_file or previous.get("answer_file")
    assert prompt is not None
    settings = _resume_settings(data, previous, options)
    schema = _schema_for(data, schema)
    executable = _codex_for(session, data)
    request = codex.TurnRequest(cwd=Path(data["cwd"]), effort=settings.effort,
                                sandbox=settings.sandbox, model=settings.model,
                                thread_id=data["thread_id"],
                                output_schema=answers.schema_path(schema) if schema else None)
    with session.update() as locked:
        if locked["turns"][-1]["n"] != previous["n"]:
            raise SparringError("session_busy", "another turn started meanwhile",
                                f"check it with `sparring poll {session.id}`")
        turn = turns.new_turn(
            session, locked, settings=settings, prompt=prompt.text, thread_id=data["thread_id"],
            round_no=previous["round"] if recover else previous["round"] + 1,
            purpose=_purpose(previous, recover, purpose),
            argv=codex.exec_argv(executable, request),
            recovers=previous["n"] if recover else None, schema=schema,
            template=prompt.template, answer_file=answer_file,
        )
    return _launch(session, turn["n"])


def _purpose(previous: dict[str, Any], recover: bool, given: str) -> str:
    if not recover:
        return given
    # A recovered synthesis is still the synthesis, not a round of the transcript.
    return "synthesis" if previous["purpose"] == "synthesis" else "recovery"


def _check_guard(session: Session, previous: dict[str, Any], accept: bool) -> None:
    """A round that changed the user's files stops the loop until the user says go on."""
    violation = (previous.get("guard") or {}).get("violation")
    if not violation or previous["guard"].get("accepted"):
        return
    if not accept:
        raise SparringError("guard_violation", violation["message"], violation["hint"] +
                            "; once the user has decided, `sparring resume "
                            f"{session.id} --accept-changes ...` goes on",
                            changed=previous["guard"]["changed"])
    with session.update() as locked:
        find_turn(locked, previous["n"])["guard"]["accepted"] = True


def _schema_for(data: dict[str, Any], given: str | None) -> str | None:
    """The answer schema: as given (`none` for free text), else the workflow's own."""
    if given == "none":
        return None
    return given or engine.state(data)["schema"]


def _resumable(session: Session, data: dict[str, Any], recover: bool) -> dict[str, Any]:
    previous = view.current_turn(session, data)
    if not states.is_terminal(previous["status"]):
        _, previous, _ = view.observe(session)  # it may have ended with its runner
    if not states.is_terminal(previous["status"]):
        raise SparringError("session_busy", f"round {previous['round']} is still running",
                            f"wait for it with `sparring wait {session.id}` or end it with "
                            f"`sparring stop {session.id}`")
    data = session.load()
    if not data.get("thread_id"):
        raise SparringError("no_thread", "codex never opened a thread in this session",
                            "nothing to resume; run the round again in a new session "
                            "(`sparring init`), then `sparring start`")
    if recover and not previous.get("recoverable"):
        code = "recovery_exhausted" if previous.get("recovers") else "invalid_transition"
        raise SparringError(code, f"round {previous['round']} ({previous['status']}) cannot be "
                            "recovered", "report what you have, or resume with a new prompt")
    return previous


def _resume_settings(data: dict[str, Any], previous: dict[str, Any],
                     options: dict[str, Any]) -> config.TurnSettings:
    # A thread keeps its model: switching models mid-thread makes codex inject a
    # large model-switch message. Effort and sandbox carry over unless given.
    kept = previous["settings"]
    file_settings = config.load(Path(data["root"]))
    effort = options.get("effort") or kept["effort"]
    merged = {**options, "effort": effort, "model": kept["model"],
              "sandbox": options.get("sandbox") or kept["sandbox"]}
    return config.resolve_turn(merged, file_settings)


def _codex_for(session: Session, data: dict[str, Any]) -> str:
    executable = codex.find_executable()
    if data["codex"].get("path") != executable:
        found = codex.version(executable)
        with session.update() as locked:
            locked["codex"] = {"path": executable, "version": found}
    return executable


def _launch(session: Session, n: int) -> dict[str, Any]:
    identity = runner.launch(session, n)
    with session.update() as data:
        find_turn(data, n)["runner"] = identity.to_dict()
    turn = _wait_for_start(session, n)
    data, turn, seen = view.observe(session)
    if turn["status"] == states.FAILED:
        raise _failed_start(turn)
    return view.to_dict(session, data, turn, seen)


def _wait_for_start(session: Session, n: int) -> dict[str, Any]:
    window, begun = start_window(), time.monotonic()
    while True:
        turn = find_turn(session.load(), n)
        if states.is_terminal(turn["status"]):
            return turn
        started = turn.get("started_at")
        if started and time.time() - started >= window:
            return turn
        if time.monotonic() - begun > _START_CAP_S + window:
            return turn
        time.sleep(_START_POLL_S)


def _failed_start(turn: dict[str, Any]) -> SparringError:
    error = dict(turn["error"] or {})
    code = error.pop("code", "codex_start_failed")
    if code == "codex_crashed":
        code = "codex_start_failed"
    message = error.pop("message", "codex failed to start")
    hint = error.pop("hint", "run `sparring doctor`")
    return SparringError(code, message, hint, turn=turn["n"], status=turn["status"], **error)
