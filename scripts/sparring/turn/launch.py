"""Starting and resuming a Codex turn: the service behind `start`, `resume` and the workflows.

`start` opens round one, `resume` follows the thread (or asks an interrupted round again);
files changed during an earlier turn stop both until the user accepts them. Their caller
says what to run again once the user has accepted files changed during an earlier turn
(`again`, rebuilt from the session's state, never read back from a record). Both return
once codex has run for a short start window (or ended sooner), so a codex that dies at
once — a rejected flag, a missing binary, a bad config — is reported as a failed start
with its stderr, not as `running`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from sparring import codex, config, disk, limits, process, states, templates
from sparring.codex import rollout, sandbox
from sparring.errors import CODES, Hint, SparringError, guard_hint, turn_hint
from sparring.process import spawn
from sparring.records import TurnRecord
from sparring.store import lastrun, runs, sessions
from sparring.store.inputs import read_input, template_variables
from sparring.store.locate import BASELINE_FILE
from sparring.store.sessions import Session, find_turn
from sparring.store.statefile import swapped
from sparring.turn import budget, lifecycle, turns, view
from sparring.turn.brief import brief
from sparring.turn.summary import ran_with

_START_POLL_S = 0.05
_START_CAP_S = 30.0


def start_window() -> float:
    """Seconds codex must survive to count as started (Supervisor's `startsecs`)."""
    raw = os.environ.get("SPARRING_STARTSECS", "1.0")
    try:
        return limits.seconds(raw, allow_zero=True, most=limits.MAX_START_WINDOW)
    except ValueError as exc:
        raise SparringError("config_invalid", f"SPARRING_STARTSECS: {exc}",
                            "fix or unset SPARRING_STARTSECS") from exc


def read_prompt(prompt_file: Path | None, stdin: BinaryIO | None = None) -> bytes:
    """The prompt bytes, exactly as given, from a file or from stdin. A file too large to
    hold a prompt codex accepts is refused by its size, before anything of it is read."""
    try:  # a character is at most four bytes of UTF-8: more bytes cannot be a prompt
        data = read_input(prompt_file, "--prompt-file", stdin, 4 * codex.MAX_PROMPT_CHARS)
    except SparringError as exc:
        if exc.code != "file_too_large":
            raise
        raise SparringError(
            "prompt_too_large", f"{exc.message}: more than the {codex.MAX_PROMPT_CHARS:,} "
            "characters codex accepts", "shorten the prompt and run the command again; "
            "nothing was started and the session is as it was", size=exc.details.get("size"),
            limit=codex.MAX_PROMPT_CHARS) from None
    if not data.strip():
        raise SparringError("prompt_empty", "the prompt is empty",
                            "write the prompt to a file and pass --prompt-file FILE")
    return data


class Prompt(NamedTuple):
    text: bytes
    # name, the question it asked and the constraints it set, for reports
    template: dict[str, Any] | None = None


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
    variables = template_variables(pairs, file_pairs, vars_file)
    question = variables.get("QUESTION") or variables.get("TOPIC")
    asked = {"name": template, "question": question}
    if variables.get("CONSTRAINTS"):  # what the debate took as fixed, or assumed: reported
        asked["constraints"] = variables["CONSTRAINTS"]
    if variables.get("OPTIONS"):  # the options both sides' blind first choices name
        asked["options"] = variables["OPTIONS"]
    return Prompt(templates.render(template, variables).encode(), asked)


def start(ref: str, cwd: Path, options: dict[str, Any], prompt: Prompt,
          schema: str | None = None, answer_file: str | None = None,
          challenge_off: str | None = None) -> dict[str, Any]:
    """Round one. `challenge_off`: why no challenge turn may test a consensus that comes
    cheap (the option that said so), for a workflow whose rounds are structured."""
    session = sessions.resolve(ref, cwd)
    data, _ = lifecycle.agreed(session)  # session.json shows what its runners run
    if not _can_start(data):
        raise SparringError("invalid_transition", f"session {session.id} has already started",
                            f"continue it with `sparring resume {session.id}`")
    if challenge_off and not data["engine"].get("schema"):
        raise SparringError("usage_error", f"{challenge_off}: a {data['skill']} session has "
                            "no challenge turn (only think-about and dual-model run one)",
                            f"drop {challenge_off.split()[-1]}")
    codex.check_prompt(prompt.text)
    budget.require(session, options.get("budget_tokens"))
    file_settings = config.load(Path(data["root"]))
    chosen = _sandbox(data, options.get("sandbox"), file_settings.get("sandbox"))
    settings = config.resolve_turn(_given(data, options, chosen), file_settings)
    start_window()  # a bad SPARRING_STARTSECS is refused before anything starts
    process.mechanism()  # and so is a SPARRING_PROCESS_BACKEND this system lacks
    schema = _schema_for(data, schema)
    executable = codex.find_executable()
    found = _supported(data, executable)
    argv = turns.codex_argv(executable, data, settings, thread_id=None, schema=schema)
    with session.update() as locked:
        if not _can_start(locked):  # another `start` won the race while we looked up codex
            raise SparringError("invalid_transition", f"session {session.id} has already "
                                "started", f"continue it with `sparring resume {session.id}`")
        turn = turns.new_turn(session, locked, round_no=1, purpose="round", settings=settings,
                              prompt=prompt.text, argv=argv,
                              thread_id=None, schema=schema, template=prompt.template,
                              answer_file=answer_file)
        turn["sandbox"] = chosen.to_dict()
        if challenge_off:
            locked["engine"]["challenge_off"] = challenge_off
    return _launch(session, turn["n"], executable, found)


def resume(ref: str, cwd: Path, options: dict[str, Any], given: Prompt | None,
           recover: bool = False, schema: str | None = None, accept_changes: bool = False,
           answer_file: str | None = None, purpose: str = "round", *,
           again: str | None = None, fresh_thread: bool = False) -> dict[str, Any]:
    """The next round (or with `recover` the interrupted one again, its prompt). `again`:
    the command to run again once the user accepted changed files, when it is not this
    `resume` itself (a workflow's own verb that resumed for it). `fresh_thread`: the round
    runs on a new thread of its own, which knows nothing of the debate (a challenge); the
    session's thread stays the one later rounds resume."""
    session = sessions.resolve(ref, cwd)
    previous, data = _resumable(session, session.load(), recover)
    if not recover:  # asking the same round again reveals nothing new
        _require_seal(session, data)
    budget.require(session, options.get("budget_tokens"))  # a recovery spends tokens too
    _check_guard(session, data, accept_changes, again)
    if recover:
        if given is not None:
            raise SparringError("usage_error", "--recover re-sends the interrupted round's "
                                "prompt; do not give another", "drop --prompt-file or --recover")
        given = Prompt(turns.prompt_of(session, previous, data["root"],
                                       "the interrupted round's prompt"),
                       previous.get("template"))
        schema = schema or previous.get("schema") or "none"
        answer_file = answer_file or previous.get("answer_file")
    assert given is not None
    codex.check_prompt(given.text, "the interrupted round's prompt" if recover else "the prompt")
    settings, chosen = _resume_settings(data, previous, options)
    start_window()
    process.mechanism()
    schema = _schema_for(data, schema)
    executable = codex.find_executable()
    found = _supported(data, executable)
    thread = _thread_for(data, previous, recover, fresh_thread)
    argv = turns.codex_argv(executable, data, settings, thread_id=thread, schema=schema)
    prompt = given
    with session.update() as locked:
        if locked["turns"][-1]["n"] != previous["n"]:
            raise SparringError("session_busy", "another turn started meanwhile",
                                f"check it with `sparring poll {session.id}`")
        turn = turns.new_turn(
            session, locked, settings=settings, prompt=prompt.text, thread_id=thread,
            round_no=_round_after(locked, previous, recover),
            purpose=_purpose(previous, recover, purpose),
            argv=argv,
            recovers=previous["n"] if recover else None, schema=schema,
            template=prompt.template, answer_file=answer_file,
        )
        turn["sandbox"] = chosen.to_dict()
    return _launch(session, turn["n"], executable, found)


def _supported(data: dict[str, Any], executable: str) -> str | None:
    """The version of the codex about to run, refused (`codex_too_old`) when older than
    sparring drives: the session's record of it when that is the same codex, else asked
    (codex.version: its npm package's metadata, else `codex --version`)."""
    known = data.get("codex") or {}
    found = known.get("version") if known.get("path") == executable else None
    found = found or codex.version(executable)
    codex.require_supported(executable, found)
    return found


def _thread_for(data: dict[str, Any], previous: TurnRecord, recover: bool,
                fresh: bool) -> str | None:
    """The thread a turn resumes: the session's; none for a fresh one; and the interrupted
    round's own when it ran on a thread of its own (a challenge asked again)."""
    if fresh:
        return None
    own = any(t["round"] == previous["round"] and t["purpose"] == "challenge"
              for t in data["turns"])
    if recover and own:
        return previous.get("thread_id")
    return str(data["thread_id"])


def _purpose(previous: TurnRecord, recover: bool, given: str) -> str:
    if not recover:
        return given
    # A recovered synthesis is still the synthesis, not a round of the transcript.
    return "synthesis" if previous["purpose"] == "synthesis" else "recovery"


def unaccepted_violations(data: dict[str, Any]) -> list[TurnRecord]:
    """Turns whose guard found changed files the user has not yet accepted."""
    return [t for t in data["turns"]
            if (t.get("guard") or {}).get("violation") and not t["guard"].get("accepted")]


class GuardStop(NamedTuple):
    """Turns whose changed files the user has not yet accepted, as a stop says them."""

    message: str  # the last such turn's violation
    changed: list[dict[str, Any]]  # the files every one of them changed
    hint: str  # what to do (errors.guard_hint; the last one's baseline when its check failed)


def guard_stop(session: Session, data: dict[str, Any], then: str) -> GuardStop | None:
    """Why the loop stops on changed files, and what carries on (`then`) once the user has
    decided; None when no turn's changes wait for the user."""
    found = unaccepted_violations(data)
    if not found:
        return None
    last = found[-1]
    return GuardStop(last["guard"]["violation"]["message"],
                     [c for t in found for c in t["guard"]["changed"]],
                     guard_hint(last["guard"], session.id,
                                session.turn_path(last["n"], BASELINE_FILE), then))


def _check_guard(session: Session, data: dict[str, Any], accept: bool,
                 again: str | None) -> None:
    """Changed files stop the loop until the user says go on (every such turn counts, also
    one whose round was then re-asked)."""
    stop = guard_stop(session, data, again or f"run this `sparring resume {session.id}` again")
    if stop is None:
        return
    if not accept:
        raise SparringError("guard_violation", stop.message, stop.hint, changed=stop.changed)
    with session.update() as locked:
        for turn in unaccepted_violations(locked):
            turn["guard"]["accepted"] = True


def _schema_for(data: dict[str, Any], given: str | None) -> str | None:
    """The answer schema: as given (`none` for free text), else the workflow's own."""
    if given == "none":
        return None
    return given or data["engine"]["schema"]


def _can_start(data: dict[str, Any]) -> bool:
    """Round one may start when nothing ran yet, or when every try ended before codex
    opened a thread (nothing to resume)."""
    return not data["turns"] or (not data.get("thread_id") and all(
        states.is_terminal(t["status"]) for t in data["turns"]))


def _round_after(data: dict[str, Any], previous: TurnRecord, recover: bool) -> int:
    """The round a new turn belongs to: a round without an answer is asked again, not skipped
    (the engine judges rounds in order and would otherwise judge a stale one)."""
    answered = any(t["round"] == previous["round"] and t["status"] == states.COMPLETED
                   for t in data["turns"])
    return int(previous["round"]) + (0 if recover or not answered else 1)


def _require_seal(session: Session, data: dict[str, Any]) -> None:
    """In a sealed workflow nothing goes on until Claude's own analysis is on record."""
    state = data["engine"]
    if state["barrier"] and not state["seal"]:
        raise SparringError("seal_required", "your own analysis is not sealed yet",
                            f"`sparring wait {session.id} --seal FILE` first: a later round "
                            "would otherwise show you Codex's view before yours is on record")


def _resumable(session: Session, data: dict[str, Any], recover: bool
               ) -> tuple[TurnRecord, dict[str, Any]]:
    """The ended turn to follow, and the session as it is now (after any repair)."""
    lifecycle.current_turn(session, data)  # there is one
    data, previous = lifecycle.require_idle(session, data)
    assert previous is not None
    if not data.get("thread_id"):
        raise SparringError("no_thread", "codex never opened a thread in this session"
                            + _because(previous), f"nothing to resume: start round one again "
                            f"with `sparring start {session.id}` (after `sparring doctor` if "
                            "codex failed at once)")
    if recover and not previous.get("recoverable"):
        code = "recovery_exhausted" if previous.get("recovers") else "invalid_transition"
        raise SparringError(code, f"round {previous['round']} cannot be recovered: "
                            f"{_not_recoverable(previous)}", "report what you have, or resume "
                            "with a new prompt")
    return previous, data


def _because(turn: TurnRecord) -> str:
    error = turn.get("error") or {}
    return f" (its last turn: {turn['status']}, {error['code']}: {error.get('message', '')})" \
        if error.get("code") else f" (its last turn: {turn['status']})"


def _not_recoverable(turn: TurnRecord) -> str:
    """Why `--recover` cannot ask this turn again, naming what really went wrong."""
    error = turn.get("error") or {}
    if turn["status"] == states.COMPLETED:
        return "it completed; there is nothing to ask again"
    if turn.get("recovers") is not None:
        return (f"it already was the one recovery of round {turn['round']}, and it "
                f"{turn['status']} too ({error.get('code', 'no error code')})")
    if not turn.get("thread_id"):
        return (f"codex opened no thread for it ({error.get('code', turn['status'])}: "
                f"{error.get('message', '')})")
    return (f"it {turn['status']} with {error.get('code', 'no error code')} "
            f"({error.get('message', '')}), which asking again would not cure")


def _resume_settings(data: dict[str, Any], previous: TurnRecord, options: dict[str, Any]
                     ) -> tuple[config.TurnSettings, sandbox.Sandbox]:
    """As the settings table says of a later round (config.Setting.resume): what the thread
    keeps, what the previous round's carries unless given, and what is chosen afresh. The
    sandbox, carried, is decided under what the user allows now (codex does not restore it
    on resume)."""
    kept = config.TurnSettings.from_record(previous["settings"])
    file_settings = config.load(Path(data["root"]))
    chosen = _sandbox(data, options.get("sandbox"), file_settings.get("sandbox"),
                      _carried(previous))
    given = _given(data, options, chosen)
    for row in config.TURN_SETTINGS:
        if row.resume == config.KEPT or (row.resume == config.CARRIED
                                         and given.get(row.name) is None):
            given[row.name] = kept[row.name]
    return config.resolve_turn(given, file_settings), chosen


def _given(data: dict[str, Any], options: dict[str, Any], chosen: sandbox.Sandbox
           ) -> dict[str, Any]:
    """The settings a turn is given: the options, the sandbox decided, and codex's switches
    as the user's config file keeps them (read with the sandbox, for every turn); the
    project's folders are its root and working folder, as given and as resolved."""
    folders = [str(f) for place in (data["root"], data["cwd"])
               for f in (Path(place).absolute(), Path(place).resolve())]
    return {**options, "sandbox": chosen.mode, **sandbox.switches(chosen.allowed, folders)}


def _sandbox(data: dict[str, Any], flag: str | None, project_file: str | None,
             previous: sandbox.Request | None = None) -> sandbox.Sandbox:
    """The sandbox the next turn runs in: what the user allows now, narrowed by a request."""
    root = Path(data["root"])
    allowed = sandbox.allowance(root, Path(data["cwd"]))
    return sandbox.decide(allowed, flag, project_file, previous, root / config.CONFIG_FILE)


def _carried(previous: TurnRecord) -> sandbox.Request | None:
    """The previous round's sandbox, when something narrowed it; a round that ran in what the
    user allowed follows what they allow now (they may have changed it in between)."""
    source = (previous.get("sandbox") or {}).get("source")
    if source in ("default", "environment", "user_config"):
        return None
    return sandbox.Request(previous["settings"]["sandbox"], "previous_round")


def _record_codex(session: Session, executable: str, found: str | None) -> None:
    """The codex the session runs, and its version (for the report), once it changed;
    written once the start window has passed, as nothing but codex's own start should stand
    between `start` and its first request."""
    if session.load()["codex"] == {"path": executable, "version": found}:
        return
    with session.update() as locked:
        locked["codex"] = {"path": executable, "version": found}


def _launch(session: Session, n: int, executable: str, found: str | None) -> dict[str, Any]:
    identity = _runner(session, n)
    with session.update() as data:
        find_turn(data, n)["runner"] = identity.to_dict()
    _wait_for_start(session, n)
    data, turn, seen = lifecycle.observe(session)  # what start says: the turn at the window
    _record_codex(session, executable, found)
    if turn["status"] == states.FAILED:
        raise _failed_start(turn)
    # Briefer than `wait`, and without Codex's answer even if it came within the start
    # window: `wait` shows it (once), with the guard, the tokens and everything else a
    # round needs. The sandbox is shown at every start.
    shown = brief(view.to_dict(session, data, turn, seen), review=False)
    ran, warnings = _codex_shown(data, turn, seen.thread_id, found)
    shown_ran = {"codex": ran} if turn["n"] == 1 else {}  # at start; a round after, if changed
    found_warnings = {"warnings": warnings} if warnings else {}
    return {**{key: value for key, value in shown.items() if key not in _LEFT_TO_WAIT},
            "sandbox": turn.get("sandbox"), **shown_ran, **found_warnings,
            "next": Hint(f"`sparring wait {session.id}`")}


def _codex_shown(data: dict[str, Any], turn: TurnRecord, thread_id: str | None,
                 found: str | None) -> tuple[str, list[str]]:
    """The codex this turn runs, in a line ("gpt-5.5, effort high (codex 0.171.0)"): the
    model and effort its rollout recorded once the turn began, else what sparring passed (no
    model is codex's default); and a warning when they are not what the previous round, or
    the user's last debate, ran with."""

    recorded = rollout.turn_context(thread_id or turn.get("thread_id"),
                                    since=float(turn["created_at"]))
    now = ran_with({**turn, "ran": recorded})
    line = (f"{now['model'] or 'the default model'}, effort {now['effort']} (codex "
            f"{found or 'of unknown version'}{'' if recorded else '; not recorded yet'})")
    if not recorded:
        return line, []
    before = [t for t in data["turns"] if t["n"] < turn["n"] and t.get("ran")]
    if before:
        was = ran_with(before[-1])
        if (was["model"], was["effort"]) == (now["model"], now["effort"]):
            return line, []
        return line, [f"Codex runs {now['model']}, effort {now['effort']}; round "
                      f"{before[-1]['round']} ran {was['model']}, effort {was['effort']}"]
    last = data["codex_before"] if "codex_before" in data else lastrun.read()
    if last and last.get("session") == data["id"]:  # this very turn ended already
        last = None
    earlier = lastrun.differs(now, last)
    return line, [earlier] if earlier else []


# What the `wait` after a start prints, and a start need not.
_LEFT_TO_WAIT = ("elapsed_s", "guard", "usage", "last_event_s", "activities")


def _wait_for_start(session: Session, n: int) -> TurnRecord:
    window, begun = start_window(), time.monotonic()
    while True:
        data, _ = lifecycle.settle(session)  # a runner that dies is recorded, not waited on
        turn = find_turn(data, n)
        if states.is_terminal(turn["status"]):
            return turn
        started = turn.get("started_at")
        if started and time.time() - started >= window:
            return turn
        if time.monotonic() - begun > _START_CAP_S + window:
            return turn
        time.sleep(_START_POLL_S)


def _failed_start(turn: TurnRecord) -> SparringError:
    """The turn's recorded error, as start's own: its hint is spelled as the runner's words
    only when it is the one the runner gives for its code (errors.turn_hint), as
    errors.runner_said prints a turn's error; any other is printed as the data it is."""
    error = dict(turn["error"] or {})
    code = str(error.pop("code", "codex_start_failed"))
    message = str(error.pop("message", "codex failed to start"))
    hint = str(error.pop("hint", "run `sparring doctor`"))
    own = hint == turn_hint(code, error.get("retry_at"))
    if code == "codex_crashed" or code not in CODES:
        code = "codex_start_failed"
    failed = SparringError(code, message, hint, turn=turn["n"], status=turn["status"], **error)
    failed.hint_is_data = not own
    return failed


def _runner(session: Session, n: int) -> process.Identity:
    """Start the runner for turn `n` in its own session, its output in the turn's log. Its
    record (store/runs.py) is written first, and names it before this returns."""
    try:
        runs.begin(session.path, find_turn(session.load(), n))
    except runs.Busy as busy:
        raise lifecycle.disagree(session, busy.run, f"turn {busy.run.turn} is still being run "
                                 "by sparring's runner, yet the session file let another turn "
                                 "start") from None
    identity = _spawn_runner(session, n)
    with runs.change(session.path) as run:
        if run.get("turn") == n:
            run["runner"] = identity.to_dict()
    return identity


def _spawn_runner(session: Session, n: int) -> process.Identity:
    """The turn's runner (turn/runner.py), a new isolated interpreter (spawn.program)."""
    log = session.turn_path(n, turns.RUNNER_LOG)
    try:
        child = spawn.background(
            spawn.program("sparring.turn.runner", session.path, str(n)),
            cwd=session.path, stdin=None, stdout=log, stderr=log, under=session.root,
        )
    except disk.FolderSwapped as exc:  # the turn's folder, swapped since start made it
        raise swapped(exc) from None
    return process.identity_of(child.pid)
