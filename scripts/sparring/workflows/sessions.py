"""A new session of a workflow, with what it starts with: its engine record (the answer
schema and the seal barrier, from its Workflow), its token budget, and the workflow's own
record in session.json when it keeps one (arch-debate's `debate`, deep-discussion's
`discussion`), written with it in one go.

The budget is `--budget-tokens` when the session is created (`init`, `debate new`,
`discuss new`), else sparring.yaml's `budget_tokens` (the workflow's section over the top
level: the workflow's settings, as the registry reads them), else none (turn/budget.py
checks it before every turn).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.store import sessions
from sparring.store.sessions import Session
from sparring.workflows.workflow import Context


def create(context: Context, root: Path, cwd: Path, budget_tokens: int | None = None,
           sections: dict[str, Any] | None = None) -> Session:
    """A session of `context.flow` in the project at `root`, whose Codex works in `cwd`."""
    flow = context.flow
    return sessions.create(root, flow.name, cwd, engine=flow.engine_record(),
                           budget_tokens=_budget(context, root, budget_tokens),
                           sections=sections or {})


def _budget(context: Context, root: Path, given: int | None) -> int | None:
    if given is not None:
        return given  # sparring.yaml is not read for it
    found = context.settings(root).get("budget_tokens")
    return None if found is None else int(found)
