"""The `sparring` command line: click, built from the verbs' declarations (cli/verbs.py for
sparring's own, each workflow's package for its own: sparring/params.py's `Verb`), and
`main`. The one parser: nothing else reads a command line.

Every verb prints one JSON object on stdout (`schema_version`, `ok`, `verb`, then the
verb's fields, or `error` with `code`, `message` and `hint`); a few print text for a person
on a terminal or when asked (`status`, `doctor`, `render --raw`), and bare `sparring` its
help. Exit status: 0 when the verb did its job (poll and wait report any turn status with
0; doctor only when ready), 1 when it could not, 2 for a command-line mistake.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from sparring import __version__, params
from sparring.cli import verb as verbs_run
from sparring.cli.verbs import GROUPS, PEOPLE, VERBS
from sparring.errors import SparringError
from sparring.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, emit, failure, is_text
from sparring.params import Argument, Group, Option, Verb
from sparring.workflows import registry
from sparring.workflows.workflow import Workflow

HELP = """sparring: Claude and Codex work through a hard technical question; this
command is the runner the skills call, and two verbs are for you.

\b
For you, in your project:
  sparring doctor            is everything ready for a debate? what to fix first
  sparring status            your sessions, as a table (--open: unfinished only)
  sparring status SESSION    one session: rounds, tokens, the step that comes next
In Claude Code: /think-about, /dual-model, /arch-debate, /deep-discussion.
Install, update or remove: python3 <your sparring clone>/install.py --project
DIR (or --user); the same with --uninstall removes it.

\b
For the skills, the runner's verbs (each prints one JSON object):
  sparring init --skill think-about          -> {"session": ID, ...}
  sparring start ID --prompt-file round1.md  -> status running
  sparring wait ID --timeout 100             -> status completed, review
  sparring resume ID --prompt-file round2.md
  sparring finalize ID ; sparring stop ID

SESSION is the id `init` printed or the session's directory. Settings come from
options, SPARRING_* variables, then sparring.yaml at the project root."""


class Root(click.Group):
    """The top of the command line: the verbs for a person listed first, apart."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.commands[name].get_short_help_str(formatter.width - 16))
                for name in self.list_commands(ctx)]
        for title, chosen in (("For you", True), ("For the skills", False)):
            shown = [row for row in rows if (row[0] in PEOPLE) is chosen]
            if shown:
                with formatter.section(title):
                    formatter.write_dl(shown)


Call = Callable[[dict[str, Any]], Any]


class EnvSettingError(click.BadParameter):
    """A bad value that came from a SPARRING_* variable, not from the command line."""

    def __init__(self, variable: str, message: str, param: click.Parameter,
                 ctx: click.Context | None) -> None:
        super().__init__(message, ctx=ctx, param=param)
        self.variable = variable


if TYPE_CHECKING:
    _Type = click.ParamType[Any]
else:  # click before 8.2 has no generic ParamType
    _Type = click.ParamType

_SHOWN = {"place": "directory", "folder": "directory", "count": "integer"}


class Checked(_Type):
    """A declared value's type: checked and made by `params.value`; a bad one from a
    SPARRING_* variable is the setting's error (config_invalid), not the command line's."""

    def __init__(self, declared: Option | Argument) -> None:
        self.declared = declared
        self.name = _SHOWN.get(declared.kind, declared.kind)  # its metavar, upper-cased

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None
                    ) -> str | None:
        choices = getattr(self.declared, "choices", ())
        return f"[{'|'.join(choices)}]" if choices else None

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value  # a default, made already
        try:
            return params.value(self.declared, value)
        except ValueError as exc:
            if param is not None and ctx is not None and param.name is not None and \
                    ctx.get_parameter_source(param.name) is ParameterSource.ENVIRONMENT:
                variable = str(param.envvar)
                raise EnvSettingError(variable, f"{variable} (sets {param.opts[0]}): {exc}",
                                      param, ctx) from exc
            self.fail(str(exc), param, ctx)


def _parameter(declared: Argument | Option) -> click.Parameter:
    kind = None if declared.kind == "text" else Checked(declared)
    if isinstance(declared, Argument):
        return click.Argument([declared.name], metavar=declared.metavar,
                              required=declared.required, type=kind)
    if declared.kind == "flag":
        return click.Option([declared.flag, declared.dest], is_flag=True,
                            default=declared.default, help=declared.help)
    return click.Option([declared.flag, declared.dest], type=kind,
                        default=declared.default if declared.default != () else None,
                        envvar=declared.env, multiple=declared.multiple,
                        metavar=declared.metavar, required=declared.required,
                        show_default=declared.show_default, help=declared.help)


def command(verb: Verb, call: Call, group: str = "") -> click.Command:
    """The click command of a declared verb (of a workflow's `group`): its values, a turn's
    settings together as `options`, go to `call`; what it returns is printed (cli/verb.py)
    under the verb's whole name."""
    name = f"{group} {verb.name}".strip()
    together = [o.dest for p in verb.params if isinstance(p, Group) and p.together
                for o in params.group_options(p)]

    def run(**values: Any) -> int:
        if together:
            values["options"] = {name: values.pop(name) for name in together}
        return verbs_run.run(name, lambda: call(values), values.get("session"))

    return click.Command(name.rpartition(" ")[2], callback=run,
                         params=[_parameter(p) for p in params.expand(verb.params)],
                         help=verb.help)


def own(verb: Verb) -> Call:
    """How one of sparring's own verbs runs: its function in sparring.commands, imported
    when the verb runs (all of them at once would add 175 ms, 6.4x Python's own start, to
    every call: bench/status_bench.py), called with the working folder and the values."""
    module, _, name = verb.function.partition(":")

    def call(values: dict[str, Any]) -> Any:
        function = getattr(importlib.import_module(f"sparring.commands.{module}"), name)
        return function(os.getcwd(), **values)

    return call


def workflows_verb(flow: Workflow, verb: Verb) -> Call:
    return lambda values: registry.call(flow, verb.name, values, os.getcwd())


def build() -> click.Group:
    """The command line: sparring's own verbs, then a group per workflow with verbs of its
    own (in the registry's order)."""
    root = Root("sparring", help=HELP, context_settings={
        "help_option_names": ["-h", "--help"], "max_content_width": 100})
    click.version_option(__version__, prog_name="sparring")(root)
    groups = {name: click.Group(name, help=text) for name, text in GROUPS.items()}
    for verb in VERBS:
        above, _, _ = verb.name.rpartition(" ")
        (groups[above] if above else root).add_command(command(verb, own(verb)))
    for group in groups.values():
        root.add_command(group)
    for flow in registry.WORKFLOWS.values():
        if flow.command:
            made = click.Group(flow.command, help=flow.command_help)
            for verb in flow.verbs:
                made.add_command(command(verb, workflows_verb(flow, verb), flow.command))
            root.add_command(made)
    return root


cli = build()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:  # a person who typed `sparring`: the help, as text
        with click.Context(cli, info_name="sparring", **cli.context_settings) as ctx:
            click.echo(cli.get_help(ctx))
        return EXIT_OK
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
        return verbs_run.internal_error(exc)
    return result if isinstance(result, int) else EXIT_OK
