"""The one user-facing error type, and the stable error codes.

Every failure a user can cause ends as one `SparringError`, caught in one
place (`cli.main`) and printed as one JSON object. The codes are part of the
output contract: SKILL.md files branch on them, so a code is never renamed.
"""

from __future__ import annotations

import re
from typing import Any

from sparring.quoting import shell_word

# Stable error codes. Keep this list in sync with README "Error codes" and
# tests/test_contract.py, which pins it.
CODES: dict[str, str] = {
    "usage_error": "a command-line argument is missing or invalid",
    "config_invalid": "sparring.yaml or an environment setting is invalid",
    "codex_not_found": "the codex executable was not found",
    "codex_too_old": "the codex found is older than the oldest release sparring drives",
    "codex_usage_error": "codex rejected an argument we passed (exit 2)",
    "codex_start_failed": "codex exited within its first second",
    "codex_crashed": "codex ended without finishing the turn",
    "codex_protocol_error": "codex ended the turn without a usable answer",
    "turn_failed": "codex reported turn.failed",
    "rate_limited": "the model provider refused the request for rate, quota, usage or "
                    "concurrency limits",
    "context_window_exceeded": "the thread no longer fits the model's context window",
    "turn_timeout": "the turn exceeded its wall-clock timeout and was ended",
    "turn_stalled": "codex sent no event for too long and was ended",
    "network_unreachable": "codex only reported reconnecting for too long and was ended",
    "turn_stopped": "the turn was stopped on request",
    "runner_died": "the background runner died before recording the turn",
    "thread_not_found": "codex has no rollout for the session's thread id",
    "session_not_found": "no session with that id or directory",
    "session_busy": "a turn of this session is still running",
    "invalid_transition": "the session is not in a state that allows this verb",
    "no_thread": "the session has no codex thread to resume",
    "recovery_exhausted": "the turn was already recovered once",
    "state_corrupt": "a state file could not be read; it was left as it was",
    "state_version_unsupported": "a state file was written by a newer sparring",
    "prompt_empty": "no prompt was given",
    "prompt_too_large": "the prompt is longer than codex accepts; nothing was started",
    "file_not_found": "a file named on the command line does not exist",
    "path_outside_project": "a path named on the command line or in sparring.yaml leads "
                            "outside the project",
    "path_is_link": "a path named, or a folder on its way, is a symbolic link; none is followed",
    "path_too_long": "a path named has a name longer than a folder can hold, or is longer than "
                     "a path can be",
    "path_protected": "sparring does not write there: git's, Claude Code's or Codex's own "
                      "files, its own records, or a file it did not write",
    "not_a_file": "a file handed in is not a regular file (a FIFO, socket, device or folder)",
    "file_too_large": "a file handed in is larger than sparring reads; nothing was read",
    "input_changed": "a file changed while sparring read it; nothing was done",
    "not_utf8": "a text file (or stdin) is not UTF-8; it is refused, never rewritten",
    "not_writable": "sparring could not write where it needed to",
    "git_failed": "git could not report the state of the repository",
    "template_not_found": "no template has that name",
    "template_missing_var": "a template needs a variable that was not given",
    "invalid_answer": "codex's answer does not match the schema, even after one re-ask",
    "verdict_invalid": "Claude's verdict is not valid JSON or breaks its schema or rules",
    "synthesis_invalid": "Claude's synthesis is not valid JSON or breaks its schema",
    "input_empty": "the file or stdin given to the verb is empty",
    "sealed_point_unanswered": "the verdict on round one leaves a point of the sealed analysis "
                               "unanswered (neither linked, carried nor withdrawn)",
    "seal_required": "Claude must seal its own analysis before Codex's is revealed",
    "seal_too_early": "Codex's round one has not ended: Claude's analysis is sealed after it",
    "already_sealed": "a different analysis was already sealed for this session",
    "analysis_incomplete": "the analysis to seal lacks what the question asks of a first view: "
                           "a choice among its options and a confidence",
    "already_judged": "the round already has a different verdict; --rejudge replaces it",
    "rejudge_too_late": "a later round has started: that round's verdict can no longer change",
    "not_revealed": "Codex's answer has not been read yet",
    "guard_violation": "files in the working tree changed during Codex's turn",
    "sandbox_not_allowed": "a flag, sparring.yaml or the previous round asks for a wider Codex "
                           "sandbox than the user allows",
    "budget_exhausted": "the session has used its token budget; no further Codex turn starts",
    "runtime_missing": "the pack's runtime is not installed (printed by the skill launcher)",
    "runtime_in_project": "SPARRING_PYTHON, SPARRING_PLUGIN_DATA, XDG_DATA_HOME, HOME or PATH "
                          "would make the skill "
                          "launcher run a program that lies in the project (printed by the "
                          "launcher)",
    "runtime_build_failed": "the Claude Code plugin could not make its runtime on first use "
                            "(printed by the skill launcher); nothing half-built is used",
    "platform_unsupported": "native Windows is not supported yet; sparring runs in WSL",
    "debate_exists": "the folder already holds a debate; it is never overwritten",
    "round_missing": "the round the next step answers has not been written yet",
    "invalid_arguments": "the skill's arguments are not one of the valid forms",
    "report_exists": "the report's file exists and belongs to something else",
    "interrupted": "the verb was interrupted (Ctrl-C)",
    "internal_error": "sparring hit a bug; the traceback is included",
}


class Hint(str):
    """What the runner itself tells the caller to do, in its own words: made only of what
    sparring made (its commands, session ids, its own paths, fixed inbox names), never of
    data (file names, Codex's or Claude's text, a question, a folder named in a file). Only
    a Hint's `sparring …` commands are spelled for the caller (output.spell_commands); any
    other text, whatever key it sits under, is printed exactly as it is."""

    __slots__ = ()


# What to do about each error a turn can end with, by its code: what poll, wait and status
# print is rebuilt from here, never read back from the turn's record, which lies in the
# project (a clone can hold one, a widened sandbox can rewrite one). turn/turns.py records
# the same words.
TURN_HINTS: dict[str, str] = {
    "turn_stopped": "resume the session when you want another round",
    "turn_timeout": "report what you have; retry once with `sparring resume SESSION --recover "
                    "--effort <lower>` or raise --timeout",
    "turn_stalled": "run `sparring resume SESSION --recover` once; if it stalls again, check "
                    "codex's network and `sparring doctor`",
    "network_unreachable": "check the network (a proxy, a VPN, the provider's base_url in "
                           "Codex's config.toml); once `codex exec` reaches the provider "
                           "again, `sparring resume SESSION --recover` asks the round once more",
    "rate_limited": "wait, then `sparring resume SESSION --recover`; check the plan and quota "
                    "of the account codex uses",
    "context_window_exceeded": "report what you have: this Codex thread is full, and asking "
                               "again on it fails the same way; a new session opens a new "
                               "thread",
    "codex_too_old": "upgrade codex: `npm install -g @openai/codex@latest`, then run "
                     "`sparring doctor`",
    "turn_failed": "see the message; `sparring resume SESSION --recover` retries the round "
                   "once on the same thread",
    "codex_not_found": "install it with `npm install -g @openai/codex`, or set SPARRING_CODEX "
                       "to the codex executable",
    "codex_start_failed": "run `sparring doctor`",
    "codex_protocol_error": "run `sparring resume SESSION --recover` to ask again",
    "codex_usage_error": "run `sparring doctor`: this codex may be too old or too new",
    "prompt_too_large": "shorten what goes into the prompt and run the command again; asking "
                        "again with the same prompt fails the same way",
    "thread_not_found": "CODEX_HOME changed or the thread was removed; start a new session",
    "runner_died": "retry once with `sparring resume SESSION --recover`",
    "codex_crashed": "read stderr_tail; `sparring doctor` checks the installation",
    "invalid_answer": "a re-ask on the same thread follows once; if that fails too the round "
                      "is failed",
}


def turn_hint(code: str, retry_at: Any = None) -> str | None:
    """The hint the runner gives a turn that ended with `code` (TURN_HINTS); a rate limit
    Codex gave a time for says to wait until then (`retry_at`, as turns.retry_time made
    it: sparring's own words, never Codex's text)."""
    if code == "rate_limited" and isinstance(retry_at, str) and RETRY_AT.fullmatch(retry_at):
        return (f"wait until {retry_at}, when Codex says the limit lifts, then `sparring "
                "resume SESSION --recover`; check the plan and quota of the account codex uses")
    return TURN_HINTS.get(code)


# The times turns.retry_time makes, and no other text: a turn's record is read back from a
# file in the project, and only such a time is spelled into a hint. (re costs no round's
# call anything: json, which every call loads, loads it.)
RETRY_AT = re.compile(r"(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}, "
                      r"\d{4} )?\d{1,2}:\d{2} [AP]M \(local time\)")


def runner_said(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """A turn's error read back from its record: its hint is spelled as the runner's own
    words (commands ready to run) only when it is the one the runner gives for the error's
    code (turn_hint), rebuilt from there; any other (a refusal with its own details, a note
    that no re-ask follows) is printed as the data it now is."""
    if not record:
        return record
    hint = turn_hint(str(record.get("code")), record.get("retry_at"))
    return {**record, "hint": Hint(hint)} if hint == record.get("hint") else record


def violation_hint(session_id: str, then: str | None = None, *,
                   unchecked: str | None = None) -> str:
    """What Claude does about files changed during a Codex turn: the same words whenever
    they are printed, made from the session's id (its folder's name) alone. `then`: the
    command that carries on, when the verb that found the violation knows it. `unchecked`:
    the baseline of a turn whose check failed, so that lists no file (guard_hint)."""
    after = f"then {then}" if then else "it prints the next step"
    trash = "what it removes or replaces is kept in .sparring/guard-trash"
    if unchecked is None:
        look = (f"stop and show the user the changed files. To undo them: `sparring guard "
                f"revert --session {session_id}` ({trash}; files the runner wrote are never "
                "touched)")
    else:
        look = (f"stop and tell the user the guard could not check codex's turn. `sparring "
                f"guard check --baseline {shell_word(unchecked)}` lists what changed since the "
                f"turn began (the user's own edits since too); `sparring guard revert --session "
                f"{session_id}` undoes all of it ({trash}; files the runner wrote are never "
                "touched)")
    return (f"{look}. Once the user has decided (undone or kept), `sparring guard accept "
            f"{session_id}`; {after}")


def guard_hint(guard: dict[str, Any], session_id: str, baseline: str,
               then: str | None = None) -> str:
    """violation_hint for a turn's guard record: one that lists no changed file is a turn
    whose check failed, and the hint names that turn's `baseline` instead."""
    return violation_hint(session_id, then,
                          unchecked=None if guard.get("changed") else baseline)


def guard_said(guard: dict[str, Any] | None, session_id: str,
               baseline: str) -> dict[str, Any] | None:
    """A turn's guard record read back: its violation's hint rebuilt (guard_hint), the
    changed files it lists printed as the data they are."""
    if not guard or not guard.get("violation"):
        return guard
    return {**guard, "violation": {**guard["violation"],
                                   "hint": Hint(guard_hint(guard, session_id, baseline))}}


class SparringError(Exception):
    """A failure the user can act on: a stable code, a message, a next step."""

    def __init__(self, code: str, message: str, hint: str = "", **details: object) -> None:
        if code not in CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.hint_is_data = False  # read back from a record: printed, never spelled as a command
        self.details = details

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"code": self.code, "message": self.message,
                                   "hint": self.hint if self.hint_is_data else Hint(self.hint)}
        data.update(self.details)
        return data
