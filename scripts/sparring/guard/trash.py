"""Where `guard revert` puts what it takes away: nothing it removes or replaces is destroyed.

A revert removes files a turn added and replaces files it changed. Either could hold work
that exists nowhere else (a file moved rather than created, an edit made meanwhile), so
each goes, by rename, into `<root>/.sparring/guard-trash/<time>-<id>/<its path>` (private,
self-ignoring like the rest of `.sparring/`), and the revert says where.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import time
from pathlib import Path

from sparring import disk
from sparring.store import workspace

TRASH_DIR = "guard-trash"


class Trash:
    """One revert's trash folder, made when the first file goes in."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir: Path | None = None

    def keep(self, relative: str) -> str:
        """Move `<root>/<relative>` (a file, a link, or anything that is not a folder) into
        the trash; returns where it went. Raises OSError when it cannot be moved."""
        folder = self._folder()
        dest = folder / relative
        disk.folders(dest.parent, under=folder)
        source = self.root / relative
        try:
            os.rename(source, dest)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            shutil.copy2(source, dest, follow_symlinks=False)  # another file system
            os.unlink(source)
        return str(dest)

    def _folder(self) -> Path:
        if self.dir is None:
            # From the project's root down, no link is followed (disk.py): what revert
            # moves aside never leaves the project through a swapped `guard-trash`.
            parent = workspace.state_dir(self.root, create=True) / TRASH_DIR
            disk.folders(parent, under=self.root)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            self.dir = disk.folders(parent / f"{stamp}-{secrets.token_hex(3)}",
                                    under=self.root)
        return self.dir
