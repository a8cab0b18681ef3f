"""The `sparring` command line: declares options and calls the verbs. Nothing else.

Every verb prints one JSON object on stdout (`schema_version`, `ok`, `verb`,
then the verb's fields, or `error` with `code`, `message` and `hint`). Exit
status: 0 when the verb did its job (poll and wait report any turn status
with 0), 1 when it could not, 2 for a command-line mistake.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sparring import __version__
from sparring.answers import CODEX_ANSWER
from sparring.config import EFFORTS, SANDBOXES
from sparring.errors import SparringError
from sparring.output import emit, failure, success
from sparring.workflows import SKILLS

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

SESSION_ARG = click.argument("session", metavar="SESSION")
CWD_OPTION = click.option(
    "--cwd", type=click.Path(exists=True, file_okay=False, path_type=Path), default=".",
    show_default=True, help="Project directory (its git root holds .sparring/).")


class EnvSettingError(click.BadParameter):
    """A bad value that came from a SPARRING_* variable, not from the command line."""

    def __init__(self, variable: str, message: str, param: click.Parameter,
                 ctx: click.Context | None) -> None:
        super().__init__(message, ctx=ctx, param=param)
        self.variable = variable


if TYPE_CHECKING:
    _FloatType = click.ParamType[float]
else:  # click before 8.2 has no generic ParamType
    _FloatType = click.ParamType


class Seconds(_FloatType):
    """A limit in seconds, finite and within range (limits.py): NaN, infinities and absurd
    values are refused, from the command line and from its SPARRING_* variable alike."""

    name = "seconds"

    def __init__(self, allow_zero: bool = False) -> None:
        self.allow_zero = allow_zero

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        from sparring import limits

        try:
            return limits.seconds(value, allow_zero=self.allow_zero)
        except ValueError as exc:
            if _from_environment(param, ctx):
                assert param is not None
                variable = str(param.envvar)
                raise EnvSettingError(variable, f"{variable} (sets {param.opts[0]}): {exc}",
                                      param, ctx) from exc
            self.fail(str(exc), param, ctx)


def _from_environment(param: click.Parameter | None, ctx: click.Context | None) -> bool:
    from click.core import ParameterSource

    return (param is not None and ctx is not None and param.name is not None
            and ctx.get_parameter_source(param.name) is ParameterSource.ENVIRONMENT)


# The limits every verb that starts a codex turn takes.
LIMIT_OPTIONS = [
    click.option("--timeout", type=Seconds(), envvar="SPARRING_TIMEOUT",
                 help="Wall-clock limit of the turn, seconds (at most a day). "
                 "Default by effort: low 600, medium 1200, high 1800, xhigh 3600."),
    click.option("--stall-after", type=Seconds(), envvar="SPARRING_STALL_AFTER",
                 help="End the turn when codex prints no "
                 "event for this many seconds. Default by effort: 180/300/600/900."),
    click.option("--offline-after", type=Seconds(), envvar="SPARRING_OFFLINE_AFTER",
                 help="End the turn as network_unreachable when codex reports only "
                 "reconnecting for this many seconds. Default: 60."),
]
# The token budget (budget.py): set when a session is made, or anew by a verb starting a turn.
NEW_BUDGET_OPTION = click.option(
    "--budget-tokens", type=click.IntRange(min=1), metavar="N",
    help="The session's token budget (Codex's input + output tokens): once used, no further "
    "round starts. Default: sparring.yaml `budget_tokens`, else none.")
BUDGET_OPTION = click.option(
    "--budget-tokens", type=click.IntRange(min=1), metavar="N",
    help="Set the session's token budget to N first (to go on after budget_exhausted).")
TEMPLATE_OPTIONS = [
    click.option("--template", metavar="NAME",
                 help="Render this prompt template instead of reading a prompt "
                 "(`sparring render --list` lists them)."),
    click.option("--var", "var_pairs", multiple=True, metavar="KEY=VALUE",
                 help="A template variable (repeatable)."),
    click.option("--var-file", "var_file_pairs", multiple=True, metavar="KEY=PATH",
                 help="A template variable read from a file, for long text (repeatable)."),
    click.option("--vars-file", type=click.Path(dir_okay=False, path_type=Path),
                 help="Template variables from a YAML or JSON mapping."),
]


def run_verb(verb: str, call: Callable[[], dict[str, Any]]) -> int:
    """Run one verb and print its JSON; SparringError becomes the error object.

    Inbox files the verb read move into its session's inputs/ once it succeeded, and stay
    where they are when it failed (inputs.py)."""
    from sparring import inputs

    try:
        payload = call()
    except SparringError as exc:
        inputs.forget_taken()
        emit(failure(verb, exc), _session_named())
        return EXIT_FAILED
    except BaseException:
        inputs.forget_taken()
        raise
    inputs.archive_taken(_session_dir(payload))
    emit(success(verb, payload), _session_named() or _text(payload.get("session")))
    return EXIT_OK


def _session_named() -> str | None:
    """The SESSION the command line named, if the verb takes one (hints fill it in)."""
    context = click.get_current_context(silent=True)
    return _text(context.params.get("session")) if context else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _session_dir(payload: dict[str, Any]) -> Path | None:
    """The folder of the session a verb's output names, if any."""
    if payload.get("session_dir"):
        return Path(payload["session_dir"])
    if not payload.get("session"):
        return None
    from sparring import session as sessions

    try:
        return sessions.resolve(str(payload["session"]), Path.cwd()).dir
    except SparringError:
        return None


def turn_options(resume: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Options shared by `start` and `resume`; each reads a SPARRING_* variable too."""
    effort_help = ("Codex reasoning effort. Default: the previous round's." if resume else
                   "Codex reasoning effort. Default: sparring.yaml `effort`, else high.")
    options = [
        click.option("--effort", type=click.Choice(EFFORTS), envvar="SPARRING_EFFORT",
                     help=effort_help),
        click.option("--sandbox", type=click.Choice(SANDBOXES), envvar="SPARRING_SANDBOX",
                     help="Codex sandbox. Default: read-only (resume: the previous round's)."),
        *LIMIT_OPTIONS,
        BUDGET_OPTION,
        click.option("--prompt-file", type=click.Path(dir_okay=False, path_type=Path),
                     help="Read the prompt from this file (default: stdin)."),
        *TEMPLATE_OPTIONS,
        click.option("--schema", type=click.Choice([CODEX_ANSWER, "none"]),
                     help="JSON schema codex must answer in (validated; one re-ask). Default: "
                     "the workflow's (think-about, dual-model: codex-answer; others: none)."),
    ]
    if not resume:
        options.insert(1, click.option("--model", envvar="SPARRING_MODEL",
                                       help="Codex model. Default: codex's own configuration."))

    return apply_options(options)


def apply_options(options: list[Callable[[Any], Any]]) -> Callable[[Callable[..., Any]],
                                                                   Callable[..., Any]]:
    """One decorator applying `options` in the order listed (as --help shows them)."""
    def apply(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option(func)
        return func

    return apply


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="sparring")
def cli() -> None:
    """sparring: run Codex in the background as Claude's sparring partner.

    \b
    Typical flow:
      sparring init --skill think-about          -> {"session": ID, ...}
      sparring start ID --prompt-file round1.md  -> status running
      sparring wait ID --timeout 100             -> status completed, review
      sparring resume ID --prompt-file round2.md
      sparring finalize ID ; sparring stop ID

    Every verb prints one JSON object. SESSION is the id `init` printed or the
    session's directory. Settings come from options, SPARRING_* variables, then
    sparring.yaml at the project root.
    """


@cli.command()
@click.option("--skill", required=True, type=click.Choice(SKILLS), help="The workflow.")
@CWD_OPTION
@NEW_BUDGET_OPTION
def init(skill: str, cwd: Path, budget_tokens: int | None) -> int:
    """Create a session under the project's self-ignoring .sparring/.

    Prints `session` (the id), `session_dir`, `skill`, `root`, `cwd`, `git`, `inbox`,
    `budget_tokens`. Codex will work in --cwd; its git root (or --cwd outside git) holds
    the state.
    """
    from sparring.commands.init import init as run

    return run_verb("init", lambda: run(skill, cwd, budget_tokens))


@cli.command()
@SESSION_ARG
@turn_options(resume=False)
def start(session: str, prompt_file: Path | None, template: str | None,
          var_pairs: tuple[str, ...], var_file_pairs: tuple[str, ...], vars_file: Path | None,
          schema: str | None, **options: Any) -> int:
    """Start round one in the background and return.

    The prompt is --template rendered with its variables, or --prompt-file, or
    stdin — passed to codex byte for byte. Returns once
    codex has survived its first second (SPARRING_STARTSECS), with the same
    object as `poll`. A codex that dies in that second is an error carrying its
    `stderr_tail` (codes codex_not_found, codex_usage_error, codex_start_failed,
    or the turn's own code such as rate_limited).
    """
    from sparring.commands import start as verb

    return run_verb("start", lambda: verb.start(session, Path.cwd(), options, prompt_file,
                                                template, var_pairs, var_file_pairs, vars_file,
                                                schema))


@cli.command()
@SESSION_ARG
@turn_options(resume=True)
@click.option("--recover", is_flag=True,
              help="Re-send the interrupted round's prompt (once, when poll said recoverable).")
@click.option("--accept-changes", is_flag=True,
              help="Go on although the guard found files changed during the last turn "
              "(only after the user has seen them).")
def resume(session: str, prompt_file: Path | None, template: str | None,
           var_pairs: tuple[str, ...], var_file_pairs: tuple[str, ...], vars_file: Path | None,
           schema: str | None, recover: bool, accept_changes: bool, **options: Any) -> int:
    """Start the next round on the same Codex thread (by its thread id).

    The prompt comes from --template, --prompt-file or stdin. The model stays the thread's;
    effort and sandbox default to the previous round's. With --recover the
    interrupted round is asked again instead (allowed once per round). When the
    guard found files changed in the last turn, resume refuses (guard_violation)
    until the user has decided: `sparring guard accept SESSION` (or
    --accept-changes here) says so.
    """
    from sparring.commands import start as verb

    return run_verb("resume", lambda: verb.resume(
        session, Path.cwd(), options, prompt_file, template, var_pairs, var_file_pairs,
        vars_file, schema, recover, accept_changes))


FULL_OPTION = click.option(
    "--full", is_flag=True, help="Print every key (thread_id, settings, files, all activities, "
    "full usage and guard details), not just what a debate round needs.")


@cli.command()
@SESSION_ARG
@FULL_OPTION
def poll(session: str, full: bool) -> int:
    """Report the current turn without blocking.

    \b
    Keys: session, status (running|completed|failed|timeout|stalled|stopped),
    round, turn, purpose, elapsed_s; while running last_event_s and the last
    activities (commands, file changes, reasoning summaries, notices); once
    completed review ({data} when the answer is structured, else {text}; or
    review_withheld until you seal); on a failure error {code, message, hint}
    and recoverable; guard ({clean: true} or the changed files); usage {round,
    total} in input/output tokens, and budget {used, budget} when the session
    has a token budget. For an arch-debate or a deep-discussion
    whose Codex turn has ended, also `debate` or `discussion` (as their status
    verbs print; a discussion's `last_message` then carries Codex's answer).
    --full adds thread_id, settings, files, every activity, review.text and
    the complete usage.
    """
    from sparring.commands.poll import poll as run

    return run_verb("poll", lambda: run(session, Path.cwd(), full))


@cli.command()
@SESSION_ARG
@click.option("--timeout", type=Seconds(allow_zero=True), default=100.0, show_default=True,
              help="Return after this many seconds even if the turn still runs (0 to a day).")
@FULL_OPTION
@click.option("--seal", "seal_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Seal this file as Claude's own analysis first (what `sparring seal "
              "--file` does), then wait: one call instead of two.")
def wait(session: str, timeout: float, full: bool, seal_file: Path | None) -> int:
    """Block until the turn ends (or --timeout passes); print the poll object.

    Adds `wait_timed_out`: true when the turn was still running. The default
    stays under the two minutes a Bash tool call gets by default. With --seal
    the analysis is sealed before anything of Codex's is shown (adds `sealed`);
    if the seal is refused, nothing is shown and the seal's error is printed.
    """
    from sparring.commands.poll import wait as run

    def call() -> dict[str, Any]:
        from sparring.inputs import read_input

        analysis = None if seal_file is None else read_input(seal_file, "--seal")
        return run(session, Path.cwd(), timeout, full, analysis)

    return run_verb("wait", call)


@cli.command()
@SESSION_ARG
def stop(session: str) -> int:
    """End the running turn and codex's whole process tree. Idempotent.

    Prints the poll object (status `stopped`, or the status the turn already
    had) and `already_ended`.
    """
    from sparring.commands.stop import stop as run

    return run_verb("stop", lambda: run(session, Path.cwd()))


@cli.command()
@SESSION_ARG
def finalize(session: str) -> int:
    """Write the session summary to SESSION_DIR/summary.json. Idempotent.

    Works after failure, timeout or stop; a running turn is stopped first.
    Prints the summary: rounds, per-turn status, timings and tokens, totals,
    codex path and version, and the effort/model/sandbox codex applied.
    """
    from sparring.commands.finalize import finalize as run

    return run_verb("finalize", lambda: run(session, Path.cwd()))


@cli.command()
@click.argument("session", metavar="[SESSION]", required=False)
@CWD_OPTION
@click.option("--table", is_flag=True, help="Print a human-readable table instead of JSON.")
def status(session: str | None, cwd: Path, table: bool) -> int:
    """Show one session, or list every session of this project.

    One session: its summary (rounds, turns, tokens) and `budget` {used, budget}
    when it has a token budget.
    """
    from sparring.commands import status as verb

    if table and session is None:
        try:
            click.echo(verb.table(verb.status(None, cwd)))
        except SparringError as exc:
            emit(failure("status", exc))
            return EXIT_FAILED
        return EXIT_OK
    return run_verb("status", lambda: verb.status(session, cwd))


@cli.command()
@CWD_OPTION
def doctor(cwd: Path) -> int:
    """Check Python, codex (found, version, every flag sparring passes, logged in), the project.

    Prints `ready` (bool), a `verdict`, `checks` [{name, ok, detail, hint}] and
    the `hints` to follow, in order. Exit status 0 either way.
    """
    from sparring.commands.doctor import doctor as run

    return run_verb("doctor", lambda: run(cwd))


def _input(file: Path | None) -> bytes:
    """Bytes from --file, or from stdin when no file is given."""
    from sparring.inputs import read_input

    return read_input(file, "--file")


@cli.command()
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude's analysis (default: stdin).")
def seal(session: str, file: Path | None) -> int:
    """Seal Claude's own round-one analysis before Codex's answer is revealed.

    Records the text, its sha256 and the time. Until a think-about or dual-model
    session is sealed, poll/wait withhold Codex's round-one review (and its
    reasoning summaries). A seal is never replaced; sealing the same text again
    is a no-op. Prints sealed_at, sha256, bytes, file.
    """
    from sparring.commands.seal import seal as run

    return run_verb("seal", lambda: run(session, Path.cwd(), _input(file)))


@cli.command()
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="The verdict JSON (default: stdin).")
@click.option("--full", is_flag=True, help="Print every open and agreed point whole (both "
              "sides' stance, evidence and round), not one row per open point and the agreed "
              "points' ids.")
@click.option("--rejudge", is_flag=True, help="Replace the verdict already handed in for "
              "this round (before the next round starts); both versions stay on record and "
              "the report shows them.")
def verdict(session: str, file: Path | None, full: bool, rejudge: bool) -> int:
    """Hand in Claude's verdict on the latest round; the runner decides what follows.

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
    id, claim, claude and codex stance, pending), `agreed_points` (ids),
    `concessions_without_evidence`, and `next` (what to do, and the command).
    In a think-about debate a `continue` starts Codex's next round at once:
    `next.action` is then `wait` (if it could not start: `resume`, with `error`;
    `report` when the token budget is spent).
    The same verdict again changes nothing (`already_judged`: true); a different
    one for a judged round is refused (already_judged) unless --rejudge; a
    verdict handed in while another is being recorded gets session_busy.
    """
    from sparring.commands.verdict import verdict as run

    return run_verb("verdict", lambda: run(session, Path.cwd(), _input(file), full, rejudge))


@cli.command()
@SESSION_ARG
@click.option("--synthesis", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude's synthesis JSON: recommendations, open_questions, confidence "
              "{level, reason}, and optionally conclusion, observations.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the markdown (default: the workflow's report_path).")
def report(session: str, synthesis: Path | None, out: Path | None) -> int:
    """Write the decision record: markdown, and the same facts as JSON beside it.

    Sections follow the workflow (think-about: Consensus Points, Remaining
    Disagreements, Recommendations, Consolidated Sources, Open Questions,
    Confidence; dual-model: Codex Position, Claude Position, Agreements,
    Points of Difference, Shared Conclusion), then rounds, tokens per round and
    in total, timings, codex version and settings, the seal, guard findings.
    A DEGRADED banner leads when a participant failed, timed out or was stood
    in for, or the guard found changes. Prints report, json, outcome, degraded.
    """
    from sparring.commands.report import report as run

    return run_verb("report", lambda: run(session, Path.cwd(), synthesis, out))


@cli.command()
@click.argument("name", metavar="NAME", required=False)
@click.option("--list", "list_all", is_flag=True, help="List the templates and their variables.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the rendered text to this file.")
@click.option("--raw", is_flag=True, help="Print the rendered text itself instead of JSON.")
@click.option("--var", "var_pairs", multiple=True, metavar="KEY=VALUE",
              help="A template variable (repeatable).")
@click.option("--var-file", "var_file_pairs", multiple=True, metavar="KEY=PATH",
              help="A template variable read from a file (repeatable).")
@click.option("--vars-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Template variables from a YAML or JSON mapping.")
def render(name: str | None, list_all: bool, out: Path | None, raw: bool,
           var_pairs: tuple[str, ...], var_file_pairs: tuple[str, ...],
           vars_file: Path | None) -> int:
    """Render prompt template NAME strictly; prints {template, text}.

    A variable the template needs but was not given is the error
    template_missing_var, naming it. Values are inserted literally: `{{ x }}`
    in a value stays `{{ x }}`. --list prints every template with its variables.
    """
    from sparring.commands import render as verb

    if list_all or name is None:
        return run_verb("render", verb.listing)
    if raw:
        try:
            click.echo(verb.render(name, var_pairs, var_file_pairs, vars_file, out)["text"],
                       nl=False)
        except SparringError as exc:
            emit(failure("render", exc))
            return EXIT_FAILED
        return EXIT_OK
    return run_verb("render", lambda: verb.render(name, var_pairs, var_file_pairs, vars_file, out))


# The codex settings a debate round may set (the thread keeps its model).
debate_turn_options = apply_options([
    click.option("--effort", type=click.Choice(EFFORTS), envvar="SPARRING_EFFORT",
                 help="Codex reasoning effort for this round."),
    click.option("--model", envvar="SPARRING_MODEL",
                 help="Codex model (round one only; later rounds keep the thread's)."),
    click.option("--sandbox", type=click.Choice(SANDBOXES), envvar="SPARRING_SANDBOX",
                 help="Codex sandbox. Default: read-only."),
    *LIMIT_OPTIONS,
    BUDGET_OPTION,
])


@cli.group("debate")
def debate_group() -> None:
    """arch-debate: a folder of round files that is the decision record.

    \b
    sparring debate new DIR --file PROTOCOL.yaml   # DEBATE-PROTOCOL.md
    sparring debate round DIR --file ROUND.md      # Claude's round, then Codex answers it
    sparring debate status DIR                     # whose turn, agreed or not, what next

    Codex keeps one thread across rounds and runs read-only; the runner writes
    round-N-codex.md from its answer, and round-N-claude.md from the file Claude
    hands in. A side agrees only by opening a round with AGREED: on its first
    line; the other side must confirm in its next round.
    """


@debate_group.command("new")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.argument("question", metavar="[QUESTION]", required=False)
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="The protocol as YAML: question (required), codebase_context, options, "
              "open_questions (`-` reads stdin).")
@NEW_BUDGET_OPTION
def debate_new(directory: Path, question: str | None, file: Path | None,
               budget_tokens: int | None) -> int:
    """Scaffold DIR/DEBATE-PROTOCOL.md with the question, the rules and the protocol's
    slots; never overwrites.

    Give the question as QUESTION, or the whole protocol with --file. Prints dir,
    session, files, inbox, next.
    """
    from sparring.commands import debate as verb

    def call() -> dict[str, Any]:
        if (question is None) == (file is None):
            raise SparringError("usage_error", "give QUESTION or --file, one of them",
                                "sparring debate new DIR --file PROTOCOL.yaml")
        if file is not None:
            text, slots = verb.protocol_from(_input(file))
            return verb.new(directory, text, Path.cwd(), slots, budget_tokens)
        assert question is not None
        return verb.new(directory, question.strip(), Path.cwd(), None, budget_tokens)

    return run_verb("debate new", call)


@debate_group.command("round")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude's next round, written to round-N-claude.md before Codex answers it "
              "(`-` reads stdin). Without it, that file must already exist.")
@click.option("--stand-in", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Codex is unavailable: FILE is its round, written by Claude as devil's "
              "advocate; it is labelled and the debate is marked DEGRADED.")
@debate_turn_options
def debate_round(directory: Path, file: Path | None, stand_in: Path | None,
                 **options: Any) -> int:
    """Hand in Claude's round (--file), then run Codex's next round: it answers the
    newest round-N-claude.md.

    Round one starts the Codex thread; later rounds resume it, with only the new
    round in the prompt. Returns like `start` (status running) with `started`;
    then `sparring wait SESSION`, which prints `debate` (as `debate status DIR`)
    once Codex's round is in. When Claude's round settles the debate (it confirms
    an AGREED:), nothing starts: `started` is false and `debate` says where the
    debate stands (`debate.step`: agreed).
    """
    from sparring.commands import debate as verb

    return run_verb("debate round", lambda: verb.round_(
        directory, Path.cwd(), options, _input(file) if file is not None else None,
        _input(stand_in) if stand_in is not None else None))


@debate_group.command("status")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
def debate_status(directory: Path) -> int:
    """Whose turn, how many rounds, agreed or not, rule breaks, and what to do next.

    Writes round-N-agreed.md once an AGREED: round is confirmed by the other side,
    and DECISION-NEEDED.md (positions side by side) when the round cap passes
    without agreement. Prints step (claude|codex|agreed|stuck), agreed, proposal,
    positions, rule_breaks, degraded, next.
    """
    from sparring.commands import debate as verb

    return run_verb("debate status", lambda: verb.status(directory, Path.cwd()))


# A discussion step's codex turn: its limits (the effort comes from the arguments).
discuss_turn_options = apply_options([*LIMIT_OPTIONS, BUDGET_OPTION])


@cli.group("discuss")
def discuss_group() -> None:
    """deep-discussion: up to 10 rounds on one Codex thread, then a synthesis and a report.

    \b
    sparring discuss new --args "high CODEX topic" # effort, model, then the topic
    sparring discuss frame SESSION --file F        # YAML: TOPIC, FRAMING, CONTEXT, CLAUDE_VIEW
    sparring discuss round SESSION --file F        # YAML: response, search_results
    sparring discuss status SESSION                # markers, search requests, what next
    sparring discuss synthesis SESSION             # Codex's synthesis turn
    sparring discuss report SESSION --file F       # YAML: the synthesis sections

    Markers count only as lines of their own, outside code blocks and quotes:
    [CONSENSUS_REACHED] (consensus needs both sides, in consecutive messages)
    and [SEARCH_REQUEST: "query"] (Claude searches and passes the results on).
    """


@discuss_group.command("new")
@click.option("--args", "arguments", default="", show_default=True,
              help="The skill's arguments as typed (`-` reads them from stdin).")
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="A file holding the skill's arguments as typed (instead of --args).")
@NEW_BUDGET_OPTION
def discuss_new(arguments: str, file: Path | None, budget_tokens: int | None) -> int:
    """Parse /deep-discussion arguments and create the session.

    The effort (high, the default, or xhigh) and model (CODEX, the default, or
    NONE) words come first, in any order and case; the rest is the topic
    (`--` ends the words early). Prints session, effort, model, topic (null
    when none was given), max_rounds, inbox, next. Conflicting words, or a lone
    word naming a setting the skill does not offer (low, medium, a model
    slug), are invalid_arguments, listing the valid forms.
    """
    from sparring.commands import discuss as verb

    def call() -> dict[str, Any]:
        if file is not None or arguments == "-":
            text = _input(file).decode("utf-8", errors="replace")
        else:
            text = arguments
        return verb.new(text, Path.cwd(), budget_tokens)

    return run_verb("discuss new", call)


@discuss_group.command("frame")
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="The framing YAML (default: stdin).")
@discuss_turn_options
def discuss_frame(session: str, file: Path | None, **options: Any) -> int:
    """Record the problem framing and Claude's opening view; start Codex's round 1.

    YAML keys: TOPIC, FRAMING, CLAUDE_VIEW (required), CONTEXT. With model NONE no
    Codex runs. Returns like `start`, plus `discussion` (as `discuss status`).
    """
    from sparring.commands import discuss as verb

    return run_verb("discuss frame", lambda: verb.frame(session, Path.cwd(), _input(file),
                                                        options))


@discuss_group.command("round")
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="The round YAML (default: stdin).")
@click.option("--accept-changes", is_flag=True,
              help="Go on although the guard found files changed during the last turn "
              "(only after the user has seen them).")
@discuss_turn_options
def discuss_round(session: str, file: Path | None, accept_changes: bool,
                  **options: Any) -> int:
    """Hand in Claude's response and start Codex's next round on the same thread.

    YAML keys: response (required), search_results (for Codex's search requests).
    Model NONE: critic (Claude's labelled counter-argument, standing in for Codex)
    and response. If Codex's last round failed, the response asks it again. When
    both sides have now marked [CONSENSUS_REACHED], no round starts.
    """
    from sparring.commands import discuss as verb

    return run_verb("discuss round", lambda: verb.round_(session, Path.cwd(), _input(file),
                                                         options, accept_changes))


@discuss_group.command("status")
@SESSION_ARG
def discuss_status(session: str) -> int:
    """Rounds, the last message, consensus per side, search requests, what to do next."""
    from sparring.commands import discuss as verb

    return run_verb("discuss status", lambda: verb.status(session, Path.cwd()))


@discuss_group.command("synthesis")
@SESSION_ARG
@discuss_turn_options
def discuss_synthesis(session: str, **options: Any) -> int:
    """Ask Codex for its synthesis (agreed points, trade-offs, recommendation, open
    questions, implementation hints) on the same thread. Then `wait`."""
    from sparring.commands import discuss as verb

    return run_verb("discuss synthesis", lambda: verb.synthesis(session, Path.cwd(), options))


@discuss_group.command("report")
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude's synthesis YAML (default: stdin).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write it (default: .kkachi/{branch}/completed/"
              "deep-discussion-{epoch}.md, or deep-discussion.report_path in sparring.yaml).")
def discuss_report(session: str, file: Path | None, out: Path | None) -> int:
    """Write the report: Timestamp, Topic, Model, Effort, Rounds, Consensus, the
    synthesis, Codex's synthesis, Claude's final observations, the transcript, tokens.

    YAML keys: agreed_points, key_trade_offs, recommended_approach, open_questions,
    implementation_hints, final_observations (markdown text each).
    """
    from sparring.commands import discuss as verb

    return run_verb("discuss report", lambda: verb.report(session, Path.cwd(), _input(file),
                                                          out))


@cli.group()
def guard() -> None:
    """File-modification guard: did the tree change between two moments?

    \b
    sparring guard snapshot --out base.json   # before
    sparring guard check --baseline base.json # after: clean, changed[]
    sparring guard revert --baseline base.json
    sparring guard revert --session SESSION   # undo what a Codex turn changed
    sparring guard accept SESSION             # the user decided: the workflow goes on

    Catches tracked, untracked and ignored files, files that were already dirty,
    changes that keep size and mtime, folders swapped for symlinks, and git's own
    hooks, config and info. Never reports .sparring/. Revert never deletes: what it
    removes or replaces goes to .sparring/guard-trash/.
    """


@guard.command("snapshot")
@CWD_OPTION
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the baseline (JSON); copies go to OUT.store/. A baseline "
              "already there lends its hashes of files that did not move.")
def guard_snapshot(cwd: Path, out: Path) -> int:
    """Record the state of the tree at --cwd (its git root) into --out."""
    from sparring.commands import guard as verb

    return run_verb("guard snapshot", lambda: verb.snapshot(cwd, out))


@guard.command("check")
@click.option("--baseline", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="A file written by `guard snapshot`.")
def guard_check(baseline: Path) -> int:
    """Compare the tree with --baseline: prints `clean` and `changed` [{path, change}].

    change is added, modified or deleted. Exit status 0 whether clean or not.
    """
    from sparring.commands import guard as verb

    return run_verb("guard check", lambda: verb.check(baseline))


@guard.command("revert")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="A file written by `guard snapshot`: undo what changed since.")
@click.option("--session", "session", metavar="SESSION",
              help="Undo exactly what the guard recorded for a Codex turn of SESSION.")
@click.option("--turn", type=click.IntRange(min=1), help="With --session: that turn "
              "(default: the latest whose guard found changes).")
def guard_revert(baseline: Path | None, session: str | None, turn: int | None) -> int:
    """Undo what changed, where that is safe; never deletes anything.

    Removes added files and restores changed ones (tracked ones from git, the
    rest from the snapshot's copies), re-checking each path first; what it
    removes or replaces is moved into `trash` (.sparring/guard-trash/...).
    Prints `reverted` (with `kept`: where the removed or replaced file went)
    and `not_reverted` (with reasons: anything in doubt is left as it is).
    With --session, files the runner wrote (Codex's round files) are never
    touched, and only the paths the turn's check recorded are undone.
    """
    from sparring.commands import guard as verb

    def call() -> dict[str, Any]:
        if (baseline is None) == (session is None) or (turn is not None and session is None):
            raise SparringError("usage_error", "give --baseline FILE, or --session SESSION "
                                "(and optionally --turn N)", "see `sparring guard revert --help`")
        if session is not None:
            return verb.revert_turn(session, Path.cwd(), turn)
        assert baseline is not None
        return verb.revert(baseline)

    return run_verb("guard revert", call)


@guard.command("accept")
@SESSION_ARG
def guard_accept(session: str) -> int:
    """The user has seen the files changed during Codex's turns and goes on.

    The one way past a guard_violation, in every workflow, whether the changes
    were reverted or kept. Prints `accepted` (turn, round, changed) and `next`.
    """
    from sparring.commands import guard as verb

    return run_verb("guard accept", lambda: verb.accept(session, Path.cwd()))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = cli.main(args=args, prog_name="sparring", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        path = exc.ctx.command_path if exc.ctx else "sparring"
        verb = path.removeprefix("sparring").strip() or "sparring"
        if isinstance(exc, EnvSettingError):
            emit(failure(verb, SparringError("config_invalid", exc.message,
                                             f"fix or unset {exc.variable}")))
            return EXIT_FAILED
        emit(failure(verb, SparringError("usage_error", exc.format_message(),
                                         f"see `{path} --help`")))
        return EXIT_USAGE
    except (click.Abort, KeyboardInterrupt):
        emit(failure("sparring", SparringError(
            "interrupted", "interrupted", "run the verb again; what it had written is kept")))
        return 130
    except Exception as exc:  # a bug: still one JSON object, with what to report
        import traceback  # here only: importing it costs every verb 8 ms of start-up

        emit(failure("sparring", SparringError(
            "internal_error", f"{type(exc).__name__}: {exc}",
            "this is a sparring bug; please report it with the traceback",
            traceback=traceback.format_exc())))
        return EXIT_FAILED
    return result if isinstance(result, int) else EXIT_OK
