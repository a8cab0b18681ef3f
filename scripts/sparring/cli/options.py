"""What the verbs of the command line share: the click commands of the declared verbs
(cli/declared.py) and their value type, the common options, and `run_verb`, which runs a
verb and prints its one JSON object (cli/main.py wires the verbs)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from sparring.cli import declared
from sparring.cli import verb as verb_module
from sparring.store.inputs import read_input

F = TypeVar("F", bound=Callable[..., Any])

SESSION_ARG = click.argument("session", metavar="SESSION")


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
    """A declared value's type (cli/declared.py): checked and made by `declared.value`, the
    one check the entry makes too; a bad one from a SPARRING_* variable is the
    setting's error (config_invalid), not the command line's."""
    def __init__(self, declared_as: declared.Option | declared.Argument) -> None:
        self.declared = declared_as
        self.name = _SHOWN.get(declared_as.kind, declared_as.kind)  # its metavar, upper-cased

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None
                    ) -> str | None:
        choices = getattr(self.declared, "choices", ())
        return f"[{'|'.join(choices)}]" if choices else None

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value  # a default, made already
        try:
            return declared.value(self.declared, value)
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


def parameters(verb: declared.Verb) -> list[click.Parameter]:
    """The click parameters of a declared verb, in the order its --help lists them."""
    found: list[click.Parameter] = [
        click.Argument([a.name], metavar=a.metavar, required=a.required,
                       type=None if a.kind == "text" else Checked(a))
        for a in verb.arguments]
    for o in verb.options:
        found.append(option(o))
    return found


def option(o: declared.Option) -> click.Option:
    if o.kind == "flag":
        return click.Option([o.flag, o.dest], is_flag=True, help=o.help)
    return click.Option([o.flag, o.dest], type=None if o.kind == "text" else Checked(o),
                        default=o.default if o.default != () else None, envvar=o.env,
                        multiple=o.multiple, metavar=o.metavar, required=o.required,
                        show_default=o.show_default, help=o.help)


def command(verb: declared.Verb, name: str | None = None,
            callback: Callable[..., int] | None = None) -> click.Command:
    """The click command of a declared verb: it runs what the entry runs
    (`verb.run`), printed as every verb is; `callback` instead, for a verb with more to it
    on the command line (status --table)."""
    def run(**values: Any) -> int:
        return run_verb(verb.name, lambda: verb.run(values, os.getcwd()))

    return click.Command(name or verb.name.rpartition(" ")[2], callback=callback or run,
                         params=parameters(verb), help=verb.help)


def declared_option(o: declared.Option) -> Callable[[F], F]:
    """A declared option as a decorator of a click callback (one click itself declares)."""
    def apply(func: F) -> F:
        made = getattr(func, "__click_params__", [])
        func.__click_params__ = [*made, option(o)]  # type: ignore[attr-defined]
        return func

    return apply


CWD_OPTION = declared_option(declared.CWD)
NEW_BUDGET_OPTION = declared_option(declared.NEW_BUDGET)


def run_verb(verb: str, call: Callable[[], dict[str, Any]]) -> int:
    """Run one verb and print its JSON (cli/verb.py, which the entry prints with too);
    SparringError becomes the error object."""
    return verb_module.run(verb, call, _session_named)


def _session_named() -> str | None:
    """The SESSION the command line named, if the verb takes one (hints fill it in)."""
    context = click.get_current_context(silent=True)
    return verb_module.text(context.params.get("session")) if context else None


def file_input(file: Path | None) -> bytes:
    """Bytes from --file, or from stdin when no file is given."""
    return read_input(file, "--file")
