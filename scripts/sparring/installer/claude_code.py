"""Which Claude Code runs the skills, and whether sparring has been proven with it.

The skills run hands-free only where Claude Code approves each step without a prompt, and
how it checks commands and file writes changes between releases. These are the releases the
integration tests drive whole workflows through (tests/support/binaries.py pins the same).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass

from sparring.process import spawn

PROVEN = ("2.1.197", "2.1.332")
OLDEST_PROVEN = PROVEN[0]
UPGRADE = "npm install -g @anthropic-ai/claude-code"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class Found:
    path: str | None  # None: not found
    version: str | None  # None: found, but no version could be read
    how: str  # where we found it


def find() -> Found:
    """The Claude Code running us (its Bash tool exports CLAUDE_CODE_EXECPATH), else the
    `claude` on PATH."""
    inside = os.environ.get("CLAUDE_CODE_EXECPATH", "")
    if inside and os.access(inside, os.X_OK):
        return Found(inside, _version(inside), "running this command")
    on_path = shutil.which("claude")
    if on_path:
        return Found(on_path, _version(on_path), "on PATH")
    return Found(None, None, "")


def _version(path: str) -> str | None:
    try:
        done = spawn.run([path, "--version"], timeout=20)
    except (OSError, spawn.TimeoutExpired):
        return None
    match = _VERSION.match(done.stdout.strip()) if done.returncode == 0 else None
    return match.group(0) if match else None


def older_than_proven(version: str) -> bool:
    return _key(version) < _key(OLDEST_PROVEN)


def _key(version: str) -> tuple[int, ...]:
    match = _VERSION.match(version)
    return tuple(int(p) for p in match.groups()) if match else (0, 0, 0)
