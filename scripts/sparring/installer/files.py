"""Small file operations: JSON, removal that never follows a link (files are written whole
through disk.py, as every writer of sparring's writes them)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

# What install.py writes (skills, markers, the runtime's record) others on the machine may
# read, as a package manager's files: written whole through disk.py with this mode.
PUBLIC = 0o644

# -- small file operations --------------------------------------------------------------


def dump_json(data: dict[str, Any]) -> bytes:
    # One key per line: the launcher reads "source" from a marker with sed.
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def present(path: Path) -> bool:
    """Something is there, even a link that points nowhere."""
    return path.exists() or path.is_symlink()


def remove_path(path: Path) -> None:
    """Remove a file, a link (never what it points to) or a folder."""
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def remove_empty_dirs(top: Path) -> None:
    """Remove empty folders below `top` and `top` itself, bottom up; never follow links."""
    for folder, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(folder)
