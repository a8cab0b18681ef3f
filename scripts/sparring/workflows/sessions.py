"""A new session of a workflow, with what it starts with: its engine record (the answer
schema and the seal barrier, from the registry) and its token budget.

The budget is `--budget-tokens` when the session is created (`init`, `debate new`,
`discuss new`), else sparring.yaml's `budget_tokens` (the workflow's section over the top
level), else none (turn/budget.py checks it before every turn).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.store import session as sessions
from sparring.store.session import Session
from sparring.workflows import registry


def create(root: Path, skill: str, cwd: Path, budget_tokens: int | None = None) -> Session:
    flow = registry.get(skill)
    return sessions.create(root, flow.name, cwd, engine=flow.engine_record(),
                           budget_tokens=_budget(root, skill, budget_tokens))


def _budget(root: Path, skill: str, given: int | None) -> int | None:
    if given is not None:
        return given
    file_settings: dict[str, Any] = registry.load_settings(root)
    found = registry.settings(file_settings, skill).get("budget_tokens",
                                                       file_settings.get("budget_tokens"))
    return None if found is None else int(found)
