"""The `sparring` command line: declares options and calls the verbs. Nothing else.

Here the group, its plain verbs and `main`; what they share is in cli/options.py, the
command groups (`guard`, and `debate` and `discuss`, made from the registry) in
cli/groups.py.

Every verb prints one JSON object on stdout (`schema_version`, `ok`, `verb`,
then the verb's fields, or `error` with `code`, `message` and `hint`). Exit
status: 0 when the verb did its job (poll and wait report any turn status
with 0), 1 when it could not, 2 for a command-line mistake.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from sparring import __version__
from sparring.cli import declared
from sparring.cli.groups import groups
from sparring.cli.options import (
    CWD_OPTION,
    NEW_BUDGET_OPTION,
    SESSION_ARG,
    EnvSettingError,
    command,
    file_input,
    run_verb,
)
from sparring.cli.verb import internal_error, project_dir
from sparring.errors import SparringError
from sparring.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, emit, failure, is_text
from sparring.workflows.registry import SKILLS


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

    return run_verb("init", lambda: run(skill, project_dir(cwd), budget_tokens))


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
@click.option("--full", is_flag=True, help="Print the whole summary, not only its totals.")
def finalize(session: str, full: bool) -> int:
    """Write the session summary to SESSION_DIR/summary.json. Idempotent.

    Works after failure, timeout or stop; a running turn is stopped first.
    Prints the status, rounds, duration, total tokens and the summary's file;
    --full prints the whole summary: per-turn status, timings and tokens, codex
    path and version, and the effort/model/sandbox codex applied.
    """
    from sparring.commands.finalize import finalize as run

    return run_verb("finalize", lambda: run(session, Path.cwd(), full))


def _status(session: str | None, cwd: Path, table: bool, only_open: bool) -> int:
    """status --table: the list, as a table for a person; otherwise the declared verb."""
    from sparring.commands import status as verb

    if table and session is None:
        try:
            click.echo(verb.table(verb.status(None, project_dir(cwd), only_open)))
        except SparringError as exc:
            emit(failure("status", exc))
            return EXIT_FAILED
        return EXIT_OK
    values = {"session": session, "cwd": cwd, "only_open": only_open}
    return run_verb("status", lambda: declared.STATUS.run(values, os.getcwd()))


@cli.command()
@CWD_OPTION
@click.option("--json/--text", "as_json", default=None,
              help="One JSON object (the default when stdout is not a terminal, as for "
              "Claude), or text for a person (the default on a terminal).")
@click.option("--inbox", is_flag=True, help="Make the inbox ready for Claude to write "
              "(.sparring/inbox/ of the working directory; the skills ask for it). Without "
              "it doctor creates nothing.")
@click.option("--full", is_flag=True, help="With --inbox, print every check too (by "
              "default the skills' doctor prints only what they act on).")
def doctor(cwd: Path, as_json: bool | None, inbox: bool, full: bool) -> int:
    """Check Python, codex (found, version, every flag sparring passes, logged in), the project.

    Prints `ready` (bool: no blocking problem), a `verdict`, `checks` [{name, ok,
    level, detail, hint}] (level: ok, problem, or warning for an advisory check:
    codex_version, duplicates, updates, permissions, claude_code), the `hints` of
    the problems in the order to fix them, the `warnings`' hints, and `inbox`. Exit
    status 0 either way. `config` names the sandbox Codex would run in and where it
    came from; `permissions`, whether Claude Code approves the skills' verbs and no
    more; `updates`, whether what is installed is older than its clone; `processes`,
    the process backend in force (SPARRING_PROCESS_BACKEND). With --inbox (the skills'
    call), `checks` and `sparring` are left out unless --full: `ready`, the hints
    and the inbox are what Claude acts on.
    """
    from sparring.commands.doctor import as_text, brief
    from sparring.commands.doctor import doctor as run

    if as_json is None:
        as_json = not sys.stdout.isatty()
    if as_json:
        return run_verb("doctor", lambda: brief(run(project_dir(cwd), inbox), inbox and not full))
    import shutil

    try:
        result = run(project_dir(cwd), inbox)
    except SparringError as exc:
        click.echo(f"error: {exc.message}\n  hint: {exc.hint}", err=True)
        return EXIT_FAILED
    click.echo(as_text(result, min(shutil.get_terminal_size().columns, 100)), nl=False)
    return EXIT_OK


@cli.command()
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude's analysis (default: stdin).")
def seal(session: str, file: Path | None) -> int:
    """Seal Claude's own round-one analysis before Codex's answer is revealed.

    Taken only once Codex's round one has ended (seal_too_early before: written
    while Codex works, the analysis would lie where Codex can read it), and no
    round-one turn starts after it. Records the text, its sha256 and the time,
    and checks what Codex did in round one for any sight of the analysis or of
    sparring's records (independence: checked, void with why, or not_measured).
    Until a think-about or dual-model session is sealed, poll/wait withhold
    Codex's answer (and its reasoning summaries) and session.json holds none of
    it. A seal is never replaced; sealing the same text again is a no-op. Prints
    sealed_at, sha256, bytes, file, independence.
    """
    from sparring.commands.seal import seal as run

    return run_verb("seal", lambda: run(session, Path.cwd(), file_input(file)))


@cli.command()
@SESSION_ARG
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path),
              help="The verdict JSON (default: stdin).")
@click.option("--full", is_flag=True, help="Print every open and agreed point whole (both "
              "sides' stance, evidence and round), not one row per open point and the agreed "
              "points' ids.")
@click.option("--rejudge", type=click.IntRange(min=1), metavar="ROUND",
              help="Replace the verdict already handed in for ROUND, the latest answered "
              "round (refused once a later round has started); both versions stay on record "
              "and the report shows them.")
def verdict(session: str, file: Path | None, full: bool, rejudge: int | None) -> int:
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
    is being recorded gets session_busy.
    """
    from sparring.commands.verdict import verdict as run

    return run_verb("verdict", lambda: run(session, Path.cwd(), file_input(file), full, rejudge))


@cli.command()
@SESSION_ARG
@click.option("--synthesis", type=click.Path(dir_okay=False, path_type=Path),
              help="Claude's synthesis JSON: recommendations, open_questions, confidence "
              "{level, reason}, and optionally conclusion, observations.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the markdown, inside the project (default: the workflow's "
              "report_path).")
def report(session: str, synthesis: Path | None, out: Path | None) -> int:
    """Write the decision record: markdown, and the same facts as JSON beside it.

    Sections follow the workflow (think-about: Consensus Points, Remaining
    Disagreements, Recommendations, Consolidated Sources, Open Questions,
    Confidence; dual-model: Codex Position, Claude Position, Agreements,
    Points of Difference, Shared Conclusion), how the agreement was reached
    (the runner's audit, `agreement_audit` in the JSON; its one-line summary
    opens the record), then rounds, tokens per round and in total, timings,
    codex version and settings, the seal, guard findings.
    A DEGRADED banner leads when a participant failed, timed out or was stood
    in for, or the guard found changes. Prints report, json, outcome, degraded.
    """
    from sparring.commands.report import report as run

    return run_verb("report", lambda: run(session, Path.cwd(), synthesis, out))


@cli.command()
@click.argument("name", metavar="NAME", required=False)
@click.option("--list", "list_all", is_flag=True, help="List the templates and their variables.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the rendered text to this new file, inside the project (never "
              "over an existing one).")
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


for _verb in (declared.START, declared.RESUME, declared.POLL, declared.WAIT):
    cli.add_command(command(_verb))
_STATUS = command(declared.STATUS, callback=_status)
_STATUS.params.append(click.Option(["--table"], is_flag=True,
                                   help="Print a human-readable table instead of JSON."))
cli.add_command(_STATUS)
for _group in groups():
    cli.add_command(_group)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    bad = next((n for n, arg in enumerate(args, 1) if not is_text(arg)), None)
    if bad is not None:  # a question or a value no prompt, record or report could hold
        emit(failure("sparring", SparringError(
            "not_utf8", f"argument {bad} is not UTF-8 text",
            "write the text as UTF-8 (a long one into a file in .sparring/inbox/, handed in "
            "with its option); nothing was done", argument=bad)))
        return EXIT_FAILED
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
        return internal_error(exc)
    return result if isinstance(result, int) else EXIT_OK


