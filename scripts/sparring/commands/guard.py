"""`sparring guard check`: what differs from a baseline file (also what ends every turn's
watch: bench/guard_bench.py holds the whole command within 2x of `git status`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.guard.baseline import named, of_project
from sparring.guard.check import compare
from sparring.store import workspace


def check(here: str, baseline: str) -> dict[str, Any]:
    base = of_project(named(Path(baseline)), workspace.find_root(Path(here)))
    changes = compare(base)
    return {"clean": not changes, "changed": [c.to_dict() for c in changes],
            "root": str(base.root), "mode": base.mode}
