"""`sparring guard snapshot|check|revert`: the file-modification guard from the command line.

The method lives in `sparring.guard`; these verbs only choose the root, where
the baseline and its copies go, and shape the JSON.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from sparring import guard, workspace
from sparring.errors import SparringError


def snapshot(cwd: Path, out: Path) -> dict[str, Any]:
    """Record the tree at `cwd`'s root into `out`; copies of dirty tracked files go beside it.

    The baseline and its store are excluded from the snapshot, so writing
    them inside the project is not reported as a change.
    """
    root = workspace.find_root(cwd)
    out = out.resolve()
    store = out.with_name(out.name + ".store")
    exclude = [rel for rel in (_relative(out, root), _relative(store, root)) if rel]
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        baseline = guard.take(root, exclude, store)
        baseline.save(out)
    except OSError as exc:
        raise SparringError(
            "not_writable", f"cannot write the baseline {out}: {exc.strerror or exc}",
            "pass an --out path in a directory you can write to", path=str(out),
        ) from exc
    return {"baseline": str(out), "store": str(store), "root": str(root), "mode": baseline.mode,
            "watched": len(baseline.entries), "tracked": len(baseline.index)}


def check(baseline: Path) -> dict[str, Any]:
    base = guard.Baseline.load(baseline)
    changes = guard.compare(base)
    return {"clean": not changes, "changed": [_printable(c.to_dict()) for c in changes],
            "root": str(base.root), "mode": base.mode}


def revert(baseline: Path) -> dict[str, Any]:
    result = guard.revert(guard.Baseline.load(baseline))
    return {"reverted": [_printable(item) for item in result.reverted],
            "not_reverted": [_printable(item) for item in result.not_reverted],
            "clean_after": result.clean_after}


def _printable(item: dict[str, str]) -> dict[str, str]:
    """A non-UTF-8 file name is printed with \\x escapes: JSON output must be valid UTF-8."""
    path = item["path"].encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return {**item, "path": path}


def _relative(path: Path, root: Path) -> str | None:
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return None
    return glob.escape(relative)  # exclude entries are globs: a "[" in the name is literal
