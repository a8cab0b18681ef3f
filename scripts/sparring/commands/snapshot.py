"""`sparring guard snapshot`: the tree recorded into a baseline file, its copies beside it.

The method lives in `sparring.guard`; this verb only chooses the root, where the baseline
and its copies go, and shapes the JSON.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from sparring import paths
from sparring.errors import SparringError
from sparring.guard.baseline import Baseline
from sparring.guard.snapshot import take
from sparring.store import workspace
from sparring.store.inputs import project_folder


def snapshot(here: str, cwd: str, out: str) -> dict[str, Any]:
    """Record the tree at `cwd`'s root into `out`; copies of dirty tracked files go beside it.

    The baseline and its store are excluded from the snapshot, so writing
    them inside the project is not reported as a change. Both must be inside the project,
    reached without a link, and somewhere sparring writes (paths.check_output). One in
    `.sparring/` (the inbox) is one of sparring's records, its copy kept out of Codex's
    reach: only such a baseline has revert touch git's folder or a protected file.
    """
    root = workspace.find_root(project_folder(cwd))
    project = workspace.find_root(Path.cwd())
    made = paths.check_output(Path(out), project, "--out").path
    store = made.with_name(made.name + ".store")
    paths.folder(store, project, "--out's copies", create=True)
    exclude = [rel for rel in (_relative(made, root), _relative(store, root)) if rel]
    try:
        made.parent.mkdir(parents=True, exist_ok=True)
        baseline = take(root, exclude, store, previous=_earlier(made))
        baseline.save(made, witness=True)  # in .sparring/: trusted by revert (Baseline.load)
    except OSError as exc:
        raise SparringError(
            "not_writable", f"cannot write the baseline {made}: {exc.strerror or exc}",
            "pass an --out path in a directory you can write to", path=str(made),
        ) from exc
    return {"baseline": str(made), "store": str(store), "root": str(root), "mode": baseline.mode,
            "watched": len(baseline.entries), "tracked": len(baseline.index)}


def _earlier(out: Path) -> Baseline | None:
    """A baseline already at --out: its hashes spare reading files that did not move."""
    if not out.is_file():
        return None
    try:
        return Baseline.load(out)
    except SparringError:
        return None


def _relative(path: Path, root: Path) -> str | None:
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return None
    return glob.escape(relative)  # exclude entries are globs: a "[" in the name is literal
