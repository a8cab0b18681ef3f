"""Real git in temporary repositories, for tests.

Every git call here brings its own identity, so the suite needs no `user.name` /
`user.email` anywhere: not in ~/.gitconfig, not from the system config, not from the
autouse fixture (module- and session-scoped fixtures run before it).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

IDENTITY = {
    f"GIT_{role}_{key}": value
    for role in ("AUTHOR", "COMMITTER")
    for key, value in (("NAME", "Sparring Tests"), ("EMAIL", "tests@sparring.invalid"))
}


def git_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with the tests' git identity."""
    return {**(os.environ if base is None else base), **IDENTITY}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """git `args` in `cwd`, in `env` (default: this process's environment) with the tests'
    identity."""
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=git_env(env))
    return done.stdout


def logged_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that notes each call's arguments, then runs the real one."""
    real_git = shutil.which("git")
    assert real_git is not None
    folder = tmp_path / "logged-bin"
    folder.mkdir()
    log = tmp_path / "git-calls.log"
    log.write_text("")
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\n'
                       f'exec {shlex.quote(real_git)} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def init(path: Path) -> Path:
    """A new, empty repository at `path` (made with its parents): git, and sparring, take
    `path` for a work tree's top. An empty `.git` folder is no repository to either."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    return path
