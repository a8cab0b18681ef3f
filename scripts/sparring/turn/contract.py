"""The poll/wait object's keys, with what each means, in one place.

docs/runner.md's table is generated from this list (docs/generate.py), and
tests/test_contract.py checks it against what `poll` and `wait` really print, so a
key added or dropped in view.py fails a test until it is written down here.
"""

from __future__ import annotations

from sparring.states import REPORTED

# Why a turn ran: a workflow's round, the one recovery of a failed round, the runner's one
# re-ask of an answer that broke its schema, a deep-discussion's synthesis.
PURPOSES = ("round", "recovery", "reask", "reconsider", "challenge", "synthesis")


def _one_of(values: tuple[str, ...]) -> str:
    """`a`, `b` or `c`."""
    quoted = [f"`{value}`" for value in values]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}"

# (key, printed when, meaning). "always" is every poll/wait; "--full" only with --full.
POLL_KEYS: tuple[tuple[str, str, str], ...] = (
    ("session", "always", "the session id"),
    ("session_dir", "--full", "the session's folder under `.sparring/sessions/`"),
    ("skill", "--full", "the workflow"),
    ("status", "always", _one_of(REPORTED)),
    ("round", "always", "the round number"),
    ("turn", "always", "the turn number in the session (a re-ask or a recovery is a turn too)"),
    ("purpose", "always", _one_of(PURPOSES)),
    ("thread_id", "--full", "Codex's thread, once it has opened one"),
    ("elapsed_s", "always", "seconds since the turn started (to its end, once ended)"),
    ("last_event_s", "while running", "seconds since Codex's last event"),
    ("activities", "while running", "what Codex did: commands (with exit codes), file "
     "changes, reasoning summaries, notices; the last 5 (--full: 20)"),
    ("activities_total", "--full", "how many activities there were in all"),
    ("review", "once completed", "Codex's answer: `data` when it is JSON, else `text` "
     "(--full: both); `summary_id`, the id (`S-n`) of the summary it proposes, which a verdict "
     "approves it by; an answer longer than 20,000 characters is cut there: `text` is its "
     "start and `cut` says `shown_chars`, `total_chars` and the file that holds it whole "
     "(`whole_in`); the status, the guard's verdict and the tokens are printed before it"),
    ("review_withheld", "completed, until sealed", "why the answer stays hidden: Claude has not "
     "sealed its own analysis yet; until then `review` is null and the brief object leaves out "
     "`usage`, and `guard` while it is clean (`wait --seal` prints them)"),
    ("usage", "always", "`round` (this turn's tokens: Codex reports cumulative thread usage, "
     "this is the difference) and `total` (the session's; left out of the brief object while "
     "it is the round's); input and output tokens (--full: also cached and reasoning)"),
    ("error", "on a failure", "`{code, message, hint}`, plus `stderr_tail` when Codex wrote one; "
     "printed right after `status`, with `recoverable`"),
    ("recoverable", "on a failure", "whether `sparring resume SESSION --recover` is worth one "
     "try"),
    ("settings", "--full", "effort, model, sandbox, timeout, stall_after and offline_after of "
     "the turn"),
    ("guard", "once ended", "`{clean: true}`, or the files that changed during the turn, the "
     "baseline and the violation"),
    ("malformed_lines", "when any", "lines Codex printed that were not JSON events"),
    ("files", "--full", "paths of the turn's prompt, and of what its codex printed (events, "
     "stderr: out of the project) once its answer may be shown"),
    ("wait_timed_out", "wait, when it ran out", "true: `wait` returned while the turn still ran"),
    ("sealed", "wait --seal", "true: the analysis was sealed before anything was shown"),
    ("independence", "wait --seal", "the runner's check of Codex's round one: `{state: "
     "checked}`, or `void` (Codex saw Claude's analysis or sparring's records) or "
     "`not_measured`, with `why`"),
    ("debate", "arch-debate, once ended", "where the debate stands (as `debate status DIR`, "
     "without its folder, files, round cap, a stuck debate's positions (DECISION-NEEDED.md "
     "holds them) and what is empty; --full: all)"),
    ("discussion", "deep-discussion, once ended", "where the discussion stands (as `discuss "
     "status`, without its round cap and what is empty; --full: all); its `last_message` "
     "carries Codex's answer"),
)
