"""The command groups: `sparring guard ...`, and one per workflow with verbs of its own.

`guard` is the file-modification guard on the command line. A workflow's group (`sparring
debate ...`, `sparring discuss ...`) is made from what it declares (workflows/workflow.py:
`Verb` and `Param`, read as declarations by cli/declared.py) and found in the registry; the
entry parses and runs those verbs from the same declarations, and a new workflow's verbs need
nothing here. cli/main.py adds every group `groups()` makes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from sparring.cli import declared
from sparring.cli.options import CWD_OPTION, SESSION_ARG, command, run_verb
from sparring.cli.verb import project_dir
from sparring.errors import SparringError
from sparring.workflows import registry
from sparring.workflows.workflow import Workflow


def groups() -> list[click.Group]:
    """One group per workflow with verbs of its own, in the registry's order, then `guard`."""
    return [*(_group(flow) for flow in registry.WORKFLOWS.values() if flow.command), guard]


def _group(flow: Workflow) -> click.Group:
    assert flow.command is not None
    group = click.Group(flow.command, help=flow.command_help)
    for verb in flow.verbs:
        group.add_command(command(declared.of_workflow(flow, verb)))
    return group



@click.group()
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
              help="Where to write the baseline (JSON), inside the project (.sparring/inbox/ "
              "keeps it out of git); copies go to OUT.store/. A baseline sparring wrote there "
              "before lends its hashes of files that did not move.")
def guard_snapshot(cwd: Path, out: Path) -> int:
    """Record the state of the tree at --cwd (its git root) into --out."""
    from sparring.commands import guard as verb

    return run_verb("guard snapshot", lambda: verb.snapshot(project_dir(cwd), out))


@guard.command("revert")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path),
              help="A file written by `guard snapshot`: undo what changed since.")
@click.option("--session", "session", metavar="SESSION",
              help="Undo exactly what the guard recorded for a Codex turn of SESSION.")
@click.option("--turn", type=click.IntRange(min=1), help="With --session: that turn "
              "(default: the latest whose guard found changes, or could not check it).")
def guard_revert(baseline: Path | None, session: str | None, turn: int | None) -> int:
    """Undo what changed, where that is safe; never deletes anything.

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
    a turn's, or one `guard snapshot` wrote into .sparring/ (the inbox).
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


guard.add_command(command(declared.GUARD_CHECK))
