"""The command line of the workflows with verbs of their own (`sparring debate ...`,
`sparring discuss ...`), made from what each declares (workflows/workflow.py: `Verb` and
`Param`, read as declarations by cli/declared.py) and found in the registry: cli/main.py adds
every group `groups()` makes. The first door parses and runs them from the same
declarations. A new workflow's verbs need nothing here.
"""

from __future__ import annotations

import click

from sparring.cli import declared
from sparring.cli.options import command
from sparring.workflows import registry
from sparring.workflows.workflow import Workflow


def groups() -> list[click.Group]:
    """One group per workflow with verbs of its own, in the registry's order."""
    return [_group(flow) for flow in registry.WORKFLOWS.values() if flow.command]


def _group(flow: Workflow) -> click.Group:
    assert flow.command is not None
    group = click.Group(flow.command, help=flow.command_help)
    for verb in flow.verbs:
        group.add_command(command(declared.of_workflow(flow, verb)))
    return group
