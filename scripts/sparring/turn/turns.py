"""Turns: creating one, deciding how it ended, and telling the truth about it.

How a turn ended is decided once, from what is on disk (Codex's JSONL, its
exit code, why we ended it) and recorded under the session lock. Whoever
notices the end first records it — the background runner normally, or a
`poll` that finds the runner gone — and terminal statuses never change.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from sparring import answers, claude, codex, disk, evidence, ledger, moves, paths, states
from sparring.codex import MAX_PROMPT_CHARS, PROMPT_TOO_LARGE, events, rollout
from sparring.config import OFFLINE_AFTER, TurnSettings
from sparring.errors import CODES, TURN_HINTS, SparringError, turn_hint
from sparring.fence import unfence
from sparring.process import spawn
from sparring.records import TurnRecord
from sparring.store import lastrun
from sparring.store.locate import EVENTS_FILE, PROMPT_FILE, STDERR_FILE
from sparring.store.sessions import Session, find_turn
from sparring.store.statefile import swapped, write_private
from sparring.turn import activity, barrier
from sparring.turn.view import final_text as final_text  # the one reader, for workflows
from sparring.turn.view import last_activity, seen

PROMPT = PROMPT_FILE
EVENTS = EVENTS_FILE
STDERR = STDERR_FILE
RUNNER_LOG = "runner.log"

# What Codex says when the provider refuses for a limit: a 429, a rate or quota, the ChatGPT
# plan's usage limit ("You’ve hit your usage limit … try again at 4:57 PM"), a gateway's
# concurrency limit. And when the thread outgrew the model's context window.
_RATE_LIMIT = re.compile(r"\b429\b|rate.?limit|quota|too many requests|usage.?limit|"
                         r"concurrency.?limit", re.I)
_CONTEXT_FULL = re.compile(r"context window|context_length_exceeded|maximum context length",
                           re.I)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_AT = re.compile(r"try again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? )?"
                 r"(\d{1,2}):(\d{2}) ?([AP]M)", re.I)
_IN = re.compile(r"try again in ((?:\d+(?:\.\d+)?\s*(?:seconds?|secs?|s|minutes?|mins?|m|"
                 r"hours?|h|days?|d)\b[\s,]*(?:and\s+)?)+)", re.I)
_UNIT = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)", re.I)
_NO_ROLLOUT = "no rollout found"
# Codes after which the same prompt on the same thread may well succeed.
_RECOVERABLE = frozenset({"turn_timeout", "turn_stalled", "rate_limited", "turn_failed",
                          "codex_protocol_error", "codex_crashed", "runner_died",
                          "network_unreachable"})


class Outcome(NamedTuple):
    status: str
    error: dict[str, Any] | None


def codex_argv(executable: str, data: Mapping[str, Any], settings: TurnSettings, *,
               thread_id: str | None, schema: str | None) -> list[str]:
    """The request to Codex for one turn of the session, as argv: a new thread in the
    session's folder, or the thread `thread_id` resumed; `schema` names the answer's."""
    return codex.exec_argv(
        executable, cwd=Path(data["cwd"]), settings=settings, thread_id=thread_id,
        output_schema=answers.schema_path(schema) if schema else None)


def new_turn(
    session: Session,
    data: dict[str, Any],
    *,
    round_no: int,
    purpose: str,
    settings: TurnSettings,
    prompt: bytes,
    argv: list[str],
    thread_id: str | None,
    recovers: int | None = None,
    schema: str | None = None,
    template: dict[str, Any] | None = None,
    answer_file: str | None = None,
) -> TurnRecord:
    """Append a `starting` turn to `data` (held under the session lock) and write its prompt."""
    barrier.require_open(data, round_no)
    n = len(data["turns"]) + 1
    directory, outputs = Path(session.turn_dir(n)), Path(session.output(n, EVENTS)).parent
    try:  # from the session's folder down, no link is followed (disk.py)
        disk.folders(Path(session.path, "turns"), under=session.path)
        _set_aside(directory)
        _set_aside(outputs)
        disk.folders(directory, under=session.path)
    except disk.FolderSwapped as exc:
        raise swapped(exc) from None
    disk.folders(outputs)
    write_private(directory / PROMPT, prompt)
    turn: TurnRecord = {
        "n": n, "round": round_no, "purpose": purpose, "status": states.STARTING,
        "created_at": time.time(), "started_at": None, "ended_at": None,
        "settings": settings.record(),
        "argv": argv, "thread_id": thread_id, "recovers": recovers, "schema": schema,
        "template": template, "answer": None, "guard": None, "answer_file": answer_file,
        "runner": None, "codex": None, "stop_requested": False,
        "exit_code": None, "end_reason": None, "error": None, "recoverable": False,
        "usage_cumulative": None, "usage": None,
        "prompt_bytes": len(prompt), "prompt_sha256": hashlib.sha256(prompt).hexdigest(),
        "claude_model": claude.model(),
    }
    data["turns"].append(turn)
    return turn


def prompt_of(session: Session, turn: TurnRecord, root: str | Path, what: str) -> bytes:
    """The prompt turn `turn` was made with, as its record says it was: read through
    paths.py (the turn's folder is in the project, within reach of a workspace-write Codex,
    another session's too, and a link put in place of the prompt would hand codex any file
    the user can read), and only if it still hashes to the record's digest. A prompt that
    changed since is never sent: `state_corrupt`, naming it."""
    path = session.turn_path(turn["n"], PROMPT)
    data = paths.read(path, Path(root), what, 4 * MAX_PROMPT_CHARS).data
    if hashlib.sha256(data).hexdigest() != turn.get("prompt_sha256"):
        raise SparringError(
            "state_corrupt", f"{what} ({path}) is not the one sparring wrote for turn "
            f"{turn['n']}: it changed since, and is not sent", "nothing was started; "
            "look at the file (a Codex turn of another session may have written it), and "
            "send the round again with a prompt of your own (`sparring resume SESSION "
            "--prompt-file FILE`), or start a new session", path=path)
    return data


def _set_aside(directory: Path) -> None:
    """A folder for turn N that session.json does not list (it was edited by hand, or a
    start stopped before the session was saved) is renamed, never reused: nothing written
    there is lost."""
    if not directory.exists():
        return
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(100):
        aside = directory.with_name(f"{directory.name}.unlisted-{stamp}-{attempt}")
        if not aside.exists():
            directory.rename(aside)
            return
    raise FileExistsError(directory)


def deadline_passed(session: Session, turn: TurnRecord, now: float) -> str | None:
    """`timeout` or `stalled` when the turn is past one of its limits, else None."""
    started = float(turn.get("started_at") or turn["created_at"])
    if now - started > turn["settings"]["timeout"]:
        return "timeout"
    if now - last_activity(session, turn) > turn["settings"]["stall_after"]:
        return "stalled"
    return None


FollowUp = Callable[[dict[str, Any], TurnRecord], None]


def record_end(
    session: Session, n: int, *, exit_code: int | None, end_reason: str | None,
    guard: Mapping[str, Any] | None = None, follow_up: FollowUp | None = None,
) -> TurnRecord:
    """Decide and record how turn `n` ended; a turn already ended is left as it is.

    `follow_up(data, turn)` runs under the same lock, so a turn queued by it (a
    re-ask) appears together with the end it answers: `wait` never sees a gap.
    """
    view = seen(session, n)
    stderr_tail = spawn.read_tail(Path(session.output(n, STDERR)))
    with session.update() as data:
        turn = find_turn(data, n)
        if states.is_terminal(turn["status"]):
            return turn.copy()
        if turn["stop_requested"]:
            end_reason = "stopped"
        thread_id = view.thread_id or turn["thread_id"]
        outcome = classify(view, exit_code, end_reason, stderr_tail, turn)
        schema, answer_file = turn.get("schema"), turn.get("answer_file")
        if outcome.status == states.COMPLETED and schema:
            outcome = _check_answer(data, turn, schema, view.final_message)
            if turn.get("answer") is not None:
                _note_reconsider(session, data, turn)
        states.move(
            turn, outcome.status, guard=guard, ended_at=time.time(), exit_code=exit_code,
            end_reason=end_reason, error=outcome.error, thread_id=thread_id,
            recoverable=_recoverable(outcome, thread_id, turn),
            usage_cumulative=view.usage, usage=round_usage(data, turn, view.usage, thread_id),
        )
        if thread_id and not data.get("thread_id") and _thread_kept(outcome):
            data["thread_id"] = thread_id
        _note_ran(session, data, turn, thread_id)
        if outcome.status == states.COMPLETED and answer_file:
            _deliver(session, Path(data["root"]), turn, answer_file, view.final_message or "")
        if follow_up is not None:
            follow_up(data, turn)
        return turn.copy()


def _note_ran(session: Session, data: dict[str, Any], turn: TurnRecord,
              thread_id: str | None) -> None:
    """What codex ran this turn with, from its rollout (`ran`: the model, effort and
    sandbox it recorded, only those it recorded: none stands for what sparring passed); the
    user's earlier debate's, once, for the report (`codex_before`); and this turn's, as the
    user's latest (store/lastrun.py)."""

    ran = rollout.turn_context(thread_id, since=float(turn["created_at"]))
    turn["ran"] = ran
    if not ran:
        return
    before = lastrun.read()
    if "codex_before" not in data:
        data["codex_before"] = before if before and before["session"] != session.id else None
    lastrun.write(ran, session.id, str(data["root"]), time.time())


def _thread_kept(outcome: Outcome) -> bool:
    """Whether codex keeps the thread it opened: not when it refused the very first prompt
    (no rollout is written), so round one can start afresh instead of resuming nothing."""
    return (outcome.error or {}).get("code") != "prompt_too_large"


def _deliver(session: Session, root: Path, turn: TurnRecord, path: str, text: str) -> None:
    """Write Codex's answer to `path`, where the workflow wants it (codex itself runs
    read-only).

    Never over a file that appeared meanwhile, never through a link (a folder swapped for
    one during the turn), never outside the project (paths.write): then the answer stays in
    the turn's folder and the turn says so.
    """
    body = unfence(text).rstrip("\n") + "\n"
    turn["answer_sha256"] = hashlib.sha256(body.encode("utf-8")).hexdigest()
    try:
        paths.write(path, body, root, "Codex's round file", mode=0o666,
                    make_folders=False)  # a folder moved away is not made again
    except (OSError, SparringError) as exc:  # it exists already, or its folder moved: keep
        # the answer anyway
        kept = session.turn_path(turn["n"], "answer.md")
        write_private(kept, body)
        turn["answer_file_kept"] = str(kept)
        turn["answer_file_error"] = f"{type(exc).__name__}: {exc}"


def _check_answer(data: dict[str, Any], turn: TurnRecord, schema: str,
                  text: str | None) -> Outcome:
    """A structured answer must match `schema`, the one codex was given, and the debate's
    rules. A valid one goes on record, unless it is withheld (keep_withheld)."""
    answer = events.parse_review(text)
    found = (answers.problems(schema, answer) if answer is not None
             else ["the answer is not JSON"])
    if not found:
        found = ledger.answer_problems(data, turn["round"], answer)
    if found:
        return Outcome(states.FAILED, _error(
            "invalid_answer", f"codex's answer breaks its schema: {'; '.join(found)}",
            problems=found))
    if barrier.withheld(data) is None:
        _keep(data, turn, answer)
    return Outcome(states.COMPLETED, None)


def _note_reconsider(session: Session, data: dict[str, Any], turn: TurnRecord) -> None:
    """The points Codex's answer concedes without new evidence that holds (moves.py): they
    are sent back to it once a round (the runner queues the reconsideration), before the
    other side reads the answer."""
    round_no = int(turn["round"])
    asked = any(t["round"] == round_no and t["purpose"] == "reconsider" for t in data["turns"])
    if round_no == 1 or asked:
        return

    entries = moves.entries_of([*ledger.records(data, round_no - 1), (turn["answer"], None)])
    checker = evidence.Checker(Path(data["root"]), activity.record(session, data))
    flagged = [c for c in moves.concessions(entries, checker)
               if c["side"] == "codex" and c["round"] == round_no and c["flag"]]
    if flagged:
        turn["reconsider"] = [{"point": c["point"], "from": c["from"], "to": c["to"],
                               "evidence": [{"cited": e["cited"], "mark": e["mark"],
                                             "why": e["why"]} for e in c["evidence"]]}
                              for c in flagged]


def _keep(data: dict[str, Any], turn: TurnRecord, answer: Any) -> None:
    turn["answer"] = answer
    summary = ledger.proposed_summary_id(data, turn["round"], answer)
    if summary is not None:
        turn["summary_id"] = summary  # the id Claude's verdict approves it by, shown with it


def keep_withheld(session: Session, data: dict[str, Any]) -> None:
    """Codex's answers that were withheld until Claude's seal go on record now (call under
    the session lock, once sealed): until then session.json, which lies in the project where
    Claude reads without asking, held no word of them. Read again from the turn's events,
    which lie out of the project, and checked again as they were when the turn ended."""
    for turn in data["turns"]:
        schema = turn.get("schema")
        if turn["status"] == states.COMPLETED and schema and turn.get("answer") is None:
            view = seen(session, turn["n"])
            if _check_answer(data, turn, schema, view.final_message).status != \
                    states.COMPLETED:
                raise SparringError(
                    "state_corrupt", f"Codex's answer of turn {turn['n']} no longer reads as "
                    "it did when the turn ended (its events changed, or are gone)",
                    f"nothing was sealed; look at {session.output(turn['n'], EVENTS)}, or "
                    "start a new session", path=session.output(turn["n"], EVENTS))


def classify(
    view: events.TurnView,
    exit_code: int | None,
    end_reason: str | None,
    stderr_tail: str,
    turn: TurnRecord,
) -> Outcome:
    settings = turn["settings"]
    if end_reason == "stopped":
        return Outcome(states.STOPPED, stopped_error())
    if end_reason == "timeout":
        return Outcome(states.TIMEOUT, _error(
            "turn_timeout", f"codex ran past the {settings['timeout']:.0f} s turn timeout and "
            "was ended"))
    if end_reason == "stalled":
        return Outcome(states.STALLED, _error(
            "turn_stalled", f"codex printed no event for {settings['stall_after']:.0f} s and "
            "was ended"))
    if end_reason == "offline":
        return Outcome(states.FAILED, _offline_error(view, settings))
    if view.failure:  # a turn.failed is a failure, whatever else came and however codex exited
        return Outcome(states.FAILED, _turn_failure(view.failure))
    if view.completed:
        return _completed(view)
    if view.legacy and not view.events:
        return Outcome(states.FAILED, _error(
            "codex_too_old", "codex printed its events as codex 0.42 and older did "
            f"(`{{\"id\", \"msg\"}}` lines), which sparring does not read; it needs codex "
            f"{codex.MINIMUM_VERSION} or newer", stderr_tail=stderr_tail))
    return Outcome(states.FAILED, _process_failure(exit_code, end_reason, stderr_tail))


def _offline_error(view: events.TurnView, settings: dict[str, Any]) -> dict[str, Any]:
    last = view.notices[-1] if view.notices else "Reconnecting..."
    waited = settings.get("offline_after", OFFLINE_AFTER)
    return _error(
        "network_unreachable", f"codex could not reach its model provider: for {waited:g} s "
        f"it only reported reconnecting (last: {last}) and was ended")


def stopped_error() -> dict[str, Any]:
    return _error("turn_stopped", "the turn was stopped on request")


def spawn_error(executable: str, exc: OSError) -> dict[str, Any]:
    if isinstance(exc, (FileNotFoundError, PermissionError)):
        return _error("codex_not_found", f"cannot run {executable}: {exc.strerror}")
    return _error("codex_start_failed", f"cannot run {executable}: {exc}")


def _completed(view: events.TurnView) -> Outcome:
    if view.final_message is None or not view.final_message.strip():
        return Outcome(states.FAILED, _error(
            "codex_protocol_error", "codex completed the turn without an answer"))
    return Outcome(states.COMPLETED, None)


def _turn_failure(message: str) -> dict[str, Any]:
    if _CONTEXT_FULL.search(message):
        return _error("context_window_exceeded", message)
    if _RATE_LIMIT.search(message):
        retry_at = retry_time(message, time.time())
        if retry_at is None:
            return _error("rate_limited", message)
        return {**_error("rate_limited", message), "retry_at": retry_at,
                "hint": turn_hint("rate_limited", retry_at)}
    return _error("turn_failed", message)


def retry_time(message: str, now: float) -> str | None:
    """When Codex says the limit lifts, in sparring's own words (errors.RETRY_AT): "try
    again at 4:57 PM" (codex's clock, which is this machine's), "at Aug 8th, 2026 12:30 PM",
    "in 11.054s", "in 3 days 6 hours 57 minutes" (from `now`, to the next minute)."""
    at = _AT.search(message)
    if at is not None:
        month, day, year, hour, minute, half = at.groups()
        if not 1 <= int(hour) <= 12 or int(minute) > 59:
            return None
        clock = f"{int(hour)}:{minute} {half.upper()} (local time)"
        if month is None:
            return clock
        name = month[:1].upper() + month[1:].lower()
        return f"{name} {int(day)}, {year} {clock}" if name in _MONTHS else None
    wait = _IN.search(message)
    if wait is None:
        return None
    seconds = sum(float(n) * _SECONDS[unit[0].lower()] for n, unit in _UNIT.findall(wait[1]))
    then = time.localtime(now + seconds + 59)  # the minute it will have passed by
    clock = f"{int(time.strftime('%I', then))}:{time.strftime('%M %p', then)} (local time)"
    if time.strftime("%Y%m%d", then) == time.strftime("%Y%m%d", time.localtime(now)):
        return clock
    return f"{_MONTHS[then.tm_mon - 1]} {then.tm_mday}, {then.tm_year} {clock}"


_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _process_failure(exit_code: int | None, end_reason: str | None, tail: str) -> dict[str, Any]:
    if exit_code == 2:
        return _error("codex_usage_error", "codex rejected the command line sparring built",
                      stderr_tail=tail)
    if PROMPT_TOO_LARGE in tail or "Input exceeds the maximum length" in tail:
        return _error("prompt_too_large", "codex refused the prompt as too long (at most "
                      f"{MAX_PROMPT_CHARS:,} characters)", stderr_tail=tail)
    if _NO_ROLLOUT in tail:
        return _error("thread_not_found", "codex has no record of this session's thread",
                      stderr_tail=tail)
    if end_reason == "runner_died":
        return _error("runner_died", "sparring's background runner ended before the turn did; "
                      "codex is gone and left no final event", stderr_tail=tail)
    how = f"exited with code {exit_code}" if exit_code is not None and exit_code >= 0 else (
        f"was killed by signal {-exit_code}" if exit_code is not None else "ended")
    return _error("codex_crashed", f"codex {how} before finishing the turn", stderr_tail=tail)


def _error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """A turn's error as its record keeps it; its hint is the one printed (TURN_HINTS)."""
    assert code in CODES, code
    return {"code": code, "message": message, "hint": TURN_HINTS[code], **extra}


def _recoverable(outcome: Outcome, thread_id: str | None, turn: TurnRecord) -> bool:
    if outcome.error is None or not thread_id or turn.get("recovers") is not None:
        return False
    return outcome.error["code"] in _RECOVERABLE


def round_usage(
    data: dict[str, Any], turn: TurnRecord, cumulative: dict[str, int] | None,
    thread_id: str | None,
) -> dict[str, int] | None:
    """This turn's tokens: Codex's cumulative thread usage minus the previous turn's (at its
    end; while it runs, for `wait`'s progress lines, from what the rollout says so far)."""
    if cumulative is None:
        return None
    baseline: dict[str, int] = {}
    for earlier in data["turns"]:
        if earlier["n"] >= turn["n"]:
            break
        if earlier.get("thread_id") == thread_id and earlier.get("usage_cumulative"):
            baseline = earlier["usage_cumulative"]
    return {key: max(0, value - baseline.get(key, 0)) for key, value in cumulative.items()}


