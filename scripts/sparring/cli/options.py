"""What the verbs of the command line share: their common options, the seconds type,
and `run_verb`, which runs a verb and prints its one JSON object (cli/main.py wires the verbs)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sparring.answers import CODEX_ANSWER
from sparring.cli import verb as verb_module
from sparring.config import EFFORTS, SANDBOXES

SESSION_ARG = click.argument("session", metavar="SESSION")
CWD_OPTION = click.option(
    "--cwd", type=click.Path(exists=True, file_okay=False, path_type=Path), default=".",
    show_default=True, help="A folder of the project sparring runs in (its git root holds "
    ".sparring/); never one outside it.")


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
    """Run one verb and print its JSON (cli/verb.py, which the first door prints with too);
    SparringError becomes the error object."""
    return verb_module.run(verb, call, _session_named)


def _session_named() -> str | None:
    """The SESSION the command line named, if the verb takes one (hints fill it in)."""
    context = click.get_current_context(silent=True)
    return verb_module.text(context.params.get("session")) if context else None


def turn_options(resume: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Options shared by `start` and `resume`; most read a SPARRING_* variable too (not
    --sandbox: SPARRING_SANDBOX is the user's own allowance, codex/sandbox.py)."""
    effort_help = ("Codex reasoning effort. Default: the previous round's." if resume else
                   "Codex reasoning effort. Default: sparring.yaml `effort`, else high.")
    options = [
        click.option("--effort", type=click.Choice(EFFORTS), envvar="SPARRING_EFFORT",
                     help=effort_help),
        click.option("--sandbox", type=click.Choice(SANDBOXES),
                     help="Narrow Codex's sandbox. Default: what the user allows "
                     "(SPARRING_SANDBOX in their shell, else their config file; else "
                     "read-only; resume: the previous round's). Never wider."),
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


def file_input(file: Path | None) -> bytes:
    """Bytes from --file, or from stdin when no file is given."""
    from sparring.store.inputs import read_input

    return read_input(file, "--file")
