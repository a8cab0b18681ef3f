"""What Codex, allowed to write the project, may put where a lock goes."""

from __future__ import annotations

import os
from pathlib import Path

LOCK_DAMAGE = ("folder", "link", "fifo")


def damage_lock(lock: Path, outside: Path, kind: str) -> None:
    """Put a folder, a link to `outside` (not made), or a FIFO where `lock` goes."""
    if kind == "folder":
        lock.mkdir()
    elif kind == "link":
        lock.symlink_to(outside)
    else:
        os.mkfifo(lock)
