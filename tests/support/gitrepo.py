"""Real git in temporary repositories, for tests.

Every git call here brings its own identity, so the suite needs no `user.name` /
`user.email` anywhere: not in ~/.gitconfig, not from the system config, not from the
autouse fixture (module- and session-scoped fixtures run before it).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    f"GIT_{role}_{key}": value
    for role in ("AUTHOR", "COMMITTER")
    for key, value in (("NAME", "Sparring Tests"), ("EMAIL", "tests@sparring.invalid"))
}


def git_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with the tests' git identity."""
    return {**(os.environ if base is None else base), **IDENTITY}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=git_env())
    return done.stdout
