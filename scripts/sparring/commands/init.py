"""`sparring init`: create a session for one workflow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.store import workspace
from sparring.store.inputs import project_folder
from sparring.workflows import registry, sessions


def init(here: str, skill: str, cwd: str, budget_tokens: int | None = None
         ) -> dict[str, Any]:
    return new(skill, project_folder(cwd), budget_tokens)


def new(skill: str, cwd: Path, budget_tokens: int | None) -> dict[str, Any]:
    root = workspace.find_root(cwd)
    context = registry.context(registry.get(skill), cwd)
    created = sessions.create(context, root, cwd.resolve(), budget_tokens)
    return {
        "session": created.id,
        "session_dir": created.path,
        "skill": skill,
        "root": str(root),
        "cwd": str(cwd.resolve()),
        "git": workspace.is_git_checkout(root),
        "inbox": str(workspace.inbox_dir(Path.cwd())),
        "budget_tokens": created.load()["budget_tokens"],
    }
