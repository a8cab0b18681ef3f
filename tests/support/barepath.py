"""A PATH of the system's own commands without the programs a test must not find there.

A user's machine may have Claude Code, Codex or sparring installed globally
(`/usr/bin/claude`, `/usr/local/bin/codex`): a test that means "no codex" or "no claude on
PATH" cannot say `PATH=/usr/bin:/bin`. BARE_PATH is one folder, made once in each test
process under its own temporary folder (conftest points TMPDIR at the run's), of links to
every command of /usr/bin and /bin but those.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

SYSTEM = ("/usr/bin", "/bin")
HIDDEN = frozenset({"claude", "codex", "sparring"})


def _bare_path() -> str:
    folder = Path(tempfile.mkdtemp(prefix="bare-path-"))
    for system in SYSTEM:  # /usr/bin's wins, as on PATH=/usr/bin:/bin
        for entry in os.scandir(system) if os.path.isdir(system) else ():
            link = folder / entry.name
            if entry.name not in HIDDEN and not link.is_symlink():
                link.symlink_to(entry.path)
    return str(folder)


BARE_PATH = _bare_path()
