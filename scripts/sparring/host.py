"""The systems sparring runs on: Linux and macOS, and Windows through WSL.

Native Windows is refused at every entry point (`python -m sparring` and the `sparring`
command, install.py, tests/run.py, the skills' launcher) in one line that names WSL, before
anything that needs POSIX is loaded. docs/windows.md says what native support would take.
Standard library only, and nothing else: install.py and tests/run.py load it before any of
their own dependencies exist.
"""

from __future__ import annotations

import sys

# Python's name for the system: native Windows, and the POSIX layers on it (Cygwin, MSYS2),
# on which neither sparring's locks, nor its process handling, nor its launcher are tested.
_WINDOWS = ("win32", "cygwin", "msys")

NATIVE_WINDOWS = ("sparring does not run on native Windows yet: run it inside WSL (Windows "
                  "Subsystem for Linux), where it works as on Linux")
WSL_HINT = ("set up WSL (`wsl --install`), then install Claude Code, Codex and sparring inside "
            "it as on Linux: docs/windows.md gives the steps")


def native_windows(platform: str | None = None) -> bool:
    return (platform or sys.platform) in _WINDOWS
