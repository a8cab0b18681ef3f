"""The command line of the workflows with verbs of their own (`sparring debate ...`,
`sparring discuss ...`), made from what each declares (workflows/workflow.py: `Verb` and
`Param`) and found in the registry: cli/main.py adds every group `groups()` makes.

A verb's callback gathers what its options gave, and runs the workflow's function through
the registry (`registry.call`), which prints one JSON object as every verb does
(`run_verb`). A new workflow's verbs need nothing here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from sparring.cli.options import BUDGET_OPTION, LIMIT_OPTIONS, NEW_BUDGET_OPTION, run_verb
from sparring.config import EFFORTS, SANDBOXES
from sparring.workflows import registry
from sparring.workflows.workflow import Param, Verb, Workflow

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

# The option groups (workflow.GROUPS). The Codex settings a round may set: the thread
# keeps its model.
_GROUPS: dict[str, list[Decorator]] = {
    "new-budget": [NEW_BUDGET_OPTION],
    "turn-limits": [*LIMIT_OPTIONS, BUDGET_OPTION],
    "codex-turn": [
        click.option("--effort", type=click.Choice(EFFORTS), envvar="SPARRING_EFFORT",
                     help="Codex reasoning effort for this round."),
        click.option("--model", envvar="SPARRING_MODEL",
                     help="Codex model (round one only; later rounds keep the thread's)."),
        click.option("--sandbox", type=click.Choice(SANDBOXES),
                     help="Narrow Codex's sandbox. Default: what the user allows "
                     "(SPARRING_SANDBOX in their shell, else their config file; else "
                     "read-only). Never wider."),
        *LIMIT_OPTIONS,
        BUDGET_OPTION,
    ],
}
# Groups whose values reach the verb together, as `options` (a turn's settings).
_TURN_GROUPS = ("turn-limits", "codex-turn")


def groups() -> list[click.Group]:
    """One group per workflow with verbs of its own, in the registry's order."""
    return [_group(flow) for flow in registry.WORKFLOWS.values() if flow.command]


def _group(flow: Workflow) -> click.Group:
    assert flow.command is not None
    group = click.Group(flow.command, help=flow.command_help)
    for verb in flow.verbs:
        group.add_command(_command(flow, verb))
    return group


def _command(flow: Workflow, verb: Verb) -> click.Command:
    params: list[click.Parameter] = []
    together: list[str] = []
    for param in verb.params:
        made = _click_params(param)
        params += made
        if param.kind in _TURN_GROUPS:
            together += [str(p.name) for p in made]

    def callback(**values: Any) -> int:
        if together:
            values["options"] = {name: values.pop(name) for name in together}
        return run_verb(f"{flow.command} {verb.name}",
                        lambda: registry.call(flow, verb.name, values, Path.cwd()))

    return click.Command(verb.name, callback=callback, params=params, help=verb.help)


def _click_params(param: Param) -> list[click.Parameter]:
    """The click parameters of one declared parameter (a group gives several)."""
    if param.kind in _GROUPS:
        return _made(_GROUPS[param.kind])
    return _made([_decorator(param)])


def _decorator(param: Param) -> Decorator:
    if param.kind == "dir":
        return click.argument(param.name, metavar=param.metavar, required=param.required,
                              type=click.Path(file_okay=False, path_type=Path))
    if param.kind in ("session", "text") and param.flag is None:
        return click.argument(param.name, metavar=param.metavar, required=param.required)
    assert param.flag is not None, param.name
    if param.kind == "file":
        return click.option(param.flag, param.name, metavar=param.metavar, help=param.help,
                            type=click.Path(dir_okay=False, path_type=Path))
    if param.kind == "flag":
        return click.option(param.flag, param.name, is_flag=True, help=param.help)
    return click.option(param.flag, param.name, default=param.default, help=param.help,
                        show_default=param.default is not None)


def _made(decorators: list[Decorator]) -> list[click.Parameter]:
    """The parameters click's decorators make, in the order listed (as --help shows them)."""
    def holder() -> None:
        """Only carries the parameters."""

    for decorator in reversed(decorators):
        holder = decorator(holder)
    return list(reversed(holder.__click_params__))  # type: ignore[attr-defined]
