"""sparring's own verbs, declared once: one row each (sparring/params.py's `Verb`), from
which cli/main.py builds the command line, --help and docs/runner.md's tables. Each names
its function in sparring.commands (`module:function`), which is called with the working
folder and the values of its arguments and options by name. A workflow's own verbs are
declared in its package, the same way.
"""

from __future__ import annotations

from sparring.params import (
    CWD,
    FULL,
    NEW_BUDGET,
    PROMPT,
    SESSION,
    TEMPLATE,
    Argument,
    Group,
    Option,
    Verb,
)
from sparring.workflows.registry import SKILLS

FILE = "(default: stdin)"

INIT = Verb("init", "init:init", """\
Create a session under the project's self-ignoring .sparring/.

Prints `session` (the id), `session_dir`, `skill`, `root`, `cwd`, `git`, `inbox`,
`budget_tokens`. Codex will work in --cwd; its git root (or --cwd outside git) holds
the state.""", (
    Option("--skill", "choice", "The workflow.", choices=SKILLS, required=True), CWD,
    NEW_BUDGET))

START = Verb("start", "start:start", """\
Start round one in the background and return.

The prompt is --template rendered with its variables, or --prompt-file, or
stdin — passed to codex byte for byte. Returns once
codex has survived its first second (SPARRING_STARTSECS), with the same
object as `poll`. A codex that dies in that second is an error carrying its
`stderr_tail` (codes codex_not_found, codex_usage_error, codex_start_failed,
or the turn's own code such as rate_limited).

Codex runs in the sandbox the user allows: SPARRING_SANDBOX in their shell, else
`sandbox:` in ~/.config/sparring/config.yaml, else read-only. --sandbox and
sparring.yaml may only narrow it (asking for more: sandbox_not_allowed). The
output's `sandbox` says which one runs and where it came from.

think-about and dual-model test a consensus that came cheap (no point ever
disputed, or one side made every concession) with one challenge turn first;
--no-challenge turns it off for this session (as `challenge: false` in the
workflow's section of sparring.yaml does for all), and the outcome then says
unchallenged.""", (
    SESSION, Group("codex-turn"), *PROMPT,
    Option("--no-challenge", "flag", "Run no challenge turn in this session (think-about, "
           "dual-model); the report says none ran.")))

RESUME = Verb("resume", "start:resume", """\
Start the next round on the same Codex thread (by its thread id).

The prompt comes from --template, --prompt-file or stdin. The model stays the thread's;
effort and sandbox default to the previous round's (the sandbox never wider than
the user allows now; see `start`). With --recover the
interrupted round is asked again instead (allowed once per round). When the
guard found files changed in the last turn, resume refuses (guard_violation)
until the user has decided: `sparring guard accept SESSION` (or
--accept-changes here) says so.""", (
    SESSION, Group("codex-turn", later=True), *PROMPT,
    Option("--recover", "flag", "Re-send the interrupted round's prompt (once, when poll said "
           "recoverable)."),
    Option("--accept-changes", "flag", "Go on although the guard found files changed during "
           "the last turn (only after the user has seen them).")))

POLL = Verb("poll", "poll:poll", """\
Report the current turn without blocking.

\b
Keys: session, status (running|completed|failed|timeout|stalled|stopped),
round, turn, purpose, elapsed_s; while running last_event_s and the last
activities (commands, file changes, reasoning summaries, notices); once
completed review ({data} when the answer is structured, else {text}; or
review_withheld until you seal); on a failure error {code, message, hint}
and recoverable; guard ({clean: true} or the changed files); usage {round,
total} in input/output tokens, and budget {used, budget} when the session
has a token budget. Until you seal, a completed round shows no usage, and
its guard only when files changed. For an arch-debate or a deep-discussion
whose Codex turn has ended, also `debate` or `discussion` (as their status
verbs print; a discussion's `last_message` then carries Codex's answer).
--full adds thread_id, settings, files, every activity, review.text and
the complete usage.""", (SESSION, FULL))

WAIT = Verb("wait", "poll:wait", """\
Block until the turn ends (or --timeout passes); print the poll object.

Adds `wait_timed_out`: true when the turn was still running (absent
otherwise). The default stays under the two minutes a Bash tool call gets by
default; a call given Claude Code's longest Bash timeout (600000 ms) can wait
--timeout 570 and cover a long turn in one call.

While the turn runs, what Codex does is printed to stderr as it happens (the
JSON stays alone on stdout): a line per command it runs, file it changes,
search, tool call or reconnect notice, each with the time since the turn
began and the turn's tokens so far, a line after a minute without one, and a
last line with how the turn stands, its tokens and how many lines were left
out. The tokens show only once Codex's answer may be shown (after the seal).
At most 20 lines of at most 100 characters, each a shell comment (`# codex …`,
`# sparring …`): Codex's text in them is cut short, on one line, with every
control character replaced by `?`; its reasoning is never printed. Nothing is
printed for a turn that had ended before the call, nor with --quiet.

With --seal (once Codex's round one has ended) the analysis is sealed before
anything of Codex's is shown (adds `sealed` and the check's `independence`); if the seal
is refused, nothing is shown and the seal's error is printed.""", (
    SESSION,
    Option("--timeout", "seconds", "Return after this many seconds even if the turn still "
           "runs (0 to a day).", least=0, default=100.0, show_default=True),
    FULL,
    Option("--seal", "file", "Seal this file as Claude's own analysis first (what `sparring "
           "seal --file` does, once Codex's round one has ended), then wait: one call "
           "instead of two.", dest="seal_file"),
    Option("--quiet", "flag", "Print no progress lines on stderr.")))

STATUS = Verb("status", "status:status", """\
Show one session, or list every session of this project.

One session: its summary (rounds, turns, tokens) and `budget` {used, budget}
when it has a token budget. A session not finalized also shows `question` and
`next`: the step its record says comes next, to pick it up in a new conversation.""", (
    Argument("session", metavar="[SESSION]", required=False), CWD,
    Option("--open", "flag", "List only the sessions not finalized yet that sparring itself "
           "wrote (a session folder planted in .sparring or committed in a clone is left "
           "out), each with its question and next step (what picking one up needs).",
           dest="only_open"),
    Option("--table/--json", "flag", "Text for a person: the sessions as a table, one session "
           "as its facts and a line per turn (the default on a terminal), or one JSON object "
           "(the default when stdout is not a terminal, as for Claude).", dest="table")))

STOP = Verb("stop", "stop:stop", """\
End the running turn and codex's whole process tree. Idempotent.

Prints the poll object (status `stopped`, or the status the turn already
had) and `already_ended`.""", (SESSION,))

FINALIZE = Verb("finalize", "finalize:finalize", """\
Write the session summary to SESSION_DIR/summary.json. Idempotent.

Works after failure, timeout or stop; a running turn is stopped first.
Prints the status, rounds, duration, total tokens and the summary's file;
--full prints the whole summary: per-turn status, timings and tokens, codex
path and version, and the effort/model/sandbox codex applied.""", (
    SESSION, Option("--full", "flag", "Print the whole summary, not only its totals.")))

DOCTOR = Verb("doctor", "doctor:doctor", """\
Check Python, codex (found, version, every flag sparring passes, logged in), the project.

Prints `ready` (bool: no blocking problem), a `verdict`, `checks` [{name, ok,
level, detail, hint}] (level: ok, problem, or warning for an advisory check:
codex_version, duplicates, updates, permissions, claude_code), the `hints` of
the problems in the order to fix them, the `warnings`' hints, and `inbox`. Exit
status 0 when ready, 1 when not. `config` names the sandbox Codex would run in and where it
came from; `permissions`, whether Claude Code approves the skills' verbs and no
more; `updates`, whether what is installed is older than its clone; `processes`,
the process backend in force (SPARRING_PROCESS_BACKEND). With --inbox (the skills'
call), `checks` and `sparring` are left out unless --full: `ready`, the hints
and the inbox are what Claude acts on.""", (
    CWD,
    Option("--json/--text", "flag", "One JSON object (the default when stdout is not a "
           "terminal, as for Claude), or text for a person (the default on a terminal).",
           dest="as_json"),
    Option("--inbox", "flag", "Make the inbox ready for Claude to write (.sparring/inbox/ of "
           "the working directory; the skills ask for it). Without it doctor creates "
           "nothing."),
    Option("--full", "flag", "With --inbox, print every check too (by default the skills' "
           "doctor prints only what they act on).")))

SEAL = Verb("seal", "seal:seal", """\
Seal Claude's own round-one analysis before Codex's answer is revealed.

Taken only once Codex's round one has ended (seal_too_early before: written
while Codex works, the analysis would lie where Codex can read it), and no
round-one turn starts after it. Records the text, its sha256 and the time,
and checks what Codex did in round one for any sight of the analysis or of
sparring's records (independence: checked, void with why, or not_measured).
Until a think-about or dual-model session is sealed, poll/wait withhold
Codex's answer (and its reasoning summaries) and session.json holds none of
it. A seal is never replaced; sealing the same text again is a no-op. Prints
sealed_at, sha256, bytes, file, independence.""", (
    SESSION, Option("--file", "file", f"Claude's analysis {FILE}.")))

VERDICT = Verb("verdict", "verdict:verdict", """\
Hand in Claude's verdict on the latest round; the runner decides what follows.

\b
The verdict is JSON (schema: schemas/claude-verdict.schema.json):
  {"position": "...",
   "points": [{"id": "X-1", "class": "genuine_disagreement", "stance": "disagree",
               "evidence": ["src/app.py:42"], "note": "..."},
              {"id": "C-1", "class": "claude_only", "stance": "agree",
               "claim": "a new point of Claude's", "evidence": []}],
   "convergence": {"state": "continue|agree|stalemate", "reason": "..."},
   "proposed_summary": null, "approve_summary": null, "message": "..."}
Every point Codex made this round must be classified. Prints `decision`
(consensus | stalemate | continue), `reasons`, `open_points` (one row each:
id, claude and codex stance, pending), `agreed_points` (ids), `summary` and
`concessions_without_evidence` when there are any, and `next` (what to do,
and the command, which names files relative to where it runs); --full
prints every point whole (claim, stances, evidence, rounds).
In a think-about debate a `continue` starts Codex's next round at once:
`next.action` is then `wait` (if it could not start: `resume`, with `error`;
`report` when the token budget is spent).
The same verdict again changes nothing (`already_judged`: true); a different
one for a judged round is refused (already_judged) unless --rejudge ROUND names
that round, which is refused (rejudge_too_late) once a later round has started;
`rejudged` says which round was re-judged. A verdict handed in while another
is being recorded gets session_busy.""", (
    SESSION, Option("--file", "file", f"The verdict JSON {FILE}."),
    Option("--full", "flag", "Print every open and agreed point whole (both sides' stance, "
           "evidence and round), not one row per open point and the agreed points' ids."),
    Option("--rejudge", "count", "Replace the verdict already handed in for ROUND, the "
           "latest answered round (refused once a later round has started); both versions "
           "stay on record and the report shows them.", least=1, metavar="ROUND")))

REPORT = Verb("report", "report:report", """\
Write the decision record: markdown, and the same facts as JSON beside it.

Sections follow the workflow (think-about: Consensus Points, Remaining
Disagreements, Recommendations, Consolidated Sources, Open Questions,
Confidence; dual-model: Codex Position, Claude Position, Agreements,
Points of Difference, Shared Conclusion), how the agreement was reached
(the runner's audit, `agreement_audit` in the JSON; its one-line summary
opens the record), then rounds, tokens per round and in total, timings,
codex version and settings, the seal, guard findings.
A DEGRADED banner leads when a participant failed, timed out or was stood
in for, or the guard found changes. Prints report, json, outcome, degraded.""", (
    SESSION,
    Option("--synthesis", "file", "Claude's synthesis JSON: recommendations, open_questions, "
           "confidence {level, reason}, and optionally conclusion, observations."),
    Option("--out", "file", "Where to write the markdown, inside the project (default: the "
           "workflow's report_path).")))

RENDER = Verb("render", "render:render", """\
Render prompt template NAME strictly; prints {template, text}.

A variable the template needs but was not given is the error
template_missing_var, naming it. Values are inserted literally: `{{ x }}`
in a value stays `{{ x }}`. --list prints every template with its variables.""", (
    Argument("name", metavar="NAME", required=False),
    Option("--list", "flag", "List the templates and their variables.", dest="list_all"),
    Option("--out", "file", "Also write the rendered text to this new file, inside the "
           "project (never over an existing one)."),
    Option("--raw", "flag", "Print the rendered text itself instead of JSON."),
    *TEMPLATE[1:]))

GUARD = """\
File-modification guard: did the tree change between two moments?

\b
sparring guard snapshot --out base.json   # before
sparring guard check --baseline base.json # after: clean, changed[]
sparring guard revert --baseline base.json
sparring guard revert --session SESSION   # undo what a Codex turn changed
sparring guard accept SESSION             # the user decided: the workflow goes on

Catches tracked, untracked and ignored files, files that were already dirty,
changes that keep size and mtime, folders swapped for symlinks, and git's own
hooks, config and info. Never reports .sparring/. Revert never deletes: what it
removes or replaces goes to .sparring/guard-trash/."""

GUARD_SNAPSHOT = Verb("guard snapshot", "snapshot:snapshot", """\
Record the state of the tree at --cwd (its git root) into --out.""", (
    CWD,
    Option("--out", "file", "Where to write the baseline (JSON), inside the project "
           "(.sparring/inbox/ keeps it out of git); copies go to OUT.store/. A baseline "
           "sparring wrote there before lends its hashes of files that did not move.",
           required=True)))

GUARD_CHECK = Verb("guard check", "guard:check", """\
Compare the tree with --baseline: prints `clean` and `changed` [{path, change}].

change is added, modified or deleted. Exit status 0 whether clean or not.""", (
    Option("--baseline", "file", "A file written by `guard snapshot`.", required=True),))

GUARD_REVERT = Verb("guard revert", "revert:revert", """\
Undo what changed, where that is safe; never deletes anything.

Removes added files and restores changed ones (tracked ones from git, the
rest from the snapshot's copies), re-checking each path first; what it
removes or replaces is moved into `trash` (.sparring/guard-trash/...).
Prints `reverted` (with `kept`: where the removed or replaced file went)
and `not_reverted` (with reasons: anything in doubt is left as it is).
With --session, files the runner wrote (Codex's round files) are never
touched, and only the paths the turn's check recorded are undone (for a
turn whose check failed: what changed since its snapshot). git's
own files (.git/config, hooks) and the protected files (AGENTS.md,
.claude/, ...) are touched only from a baseline sparring wrote itself:
a turn's, or one `guard snapshot` wrote into .sparring/ (the inbox).""", (
    Option("--baseline", "file", "A file written by `guard snapshot`: undo what changed "
           "since."),
    Option("--session", help="Undo exactly what the guard recorded for a Codex turn of "
           "SESSION.", metavar="SESSION"),
    Option("--turn", "count", "With --session: that turn (default: the latest whose guard "
           "found changes, or could not check it).", least=1)))

GUARD_ACCEPT = Verb("guard accept", "accept:accept", """\
The user has seen the files changed during Codex's turns and goes on.

The one way past a guard_violation, in every workflow, whether the changes
were reverted or kept. Prints `accepted` (turn, round, changed) and `next`.""", (SESSION,))

VERBS = (INIT, START, RESUME, POLL, WAIT, STATUS, STOP, FINALIZE, DOCTOR, SEAL, VERDICT,
         REPORT, RENDER, GUARD_SNAPSHOT, GUARD_CHECK, GUARD_REVERT, GUARD_ACCEPT)
PEOPLE = ("doctor", "status")  # listed first in `sparring --help`: what a person types
GROUPS = {"guard": GUARD}  # the help of each group of sparring's own verbs
