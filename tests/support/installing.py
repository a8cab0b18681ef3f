"""Running install.py in tests: its environment, one shared runtime per session, projects.

Used by test_install.py, test_doctor.py and the Claude Code integration tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import run
from sparring.installer import layout
from sparring.installer.runtime import Runtime
from sparring.installer.source import digest_of, runtime_inputs
from support.barepath import (
    BARE_PATH as BARE_PATH,  # no `sparring` there: the launcher finds the runtime
)
from support.gitrepo import git

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "install.py"
MARKER = layout.MARKER  # the install layout has one source: sparring/installer/layout.py
SKILLS = sorted(d.name for d in (ROOT / "skills").iterdir() if (d / "SKILL.md").is_file())
RUN_TIMEOUT_S = 300
# The runtime's dependencies, as wheels tests/run.py fetched into the test environment.
WHEELS = Path(sys.prefix) / run.WHEELS
# Taken only while the environment is installed for this pyproject.toml: after a dependency
# changed, until tests/run.py runs again, pip goes to the index as before.
OFFLINE = run.installed(Path(sys.prefix))


def runtime_of(xdg_data_home: Path) -> Runtime:
    """The runtime install.py makes (and the launcher and doctor look for) when
    XDG_DATA_HOME is `xdg_data_home`: its venv, its python, its runtime.json."""
    return Runtime(layout.data_dir({"XDG_DATA_HOME": str(xdg_data_home)}))


def install_env(data: Path, home: Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment with the runtime's data dir, minus any SPARRING_ setting
    of the developer's (a SPARRING_PYTHON would bypass the runtime under test); pip offline
    when tests/run.py fetched the runtime's dependencies."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SPARRING_") or k.startswith("SPARRING_TEST_")}
    env["XDG_DATA_HOME"] = str(data)
    if OFFLINE:  # no index: pip finds every dependency of the runtime in WHEELS
        env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(WHEELS))
    if home is not None:
        env["HOME"] = str(home)
        env["CODEX_HOME"] = str(home / ".codex")
    env.update(extra)
    return env


def fake_claude(folder: Path, version: str = "2.1.332") -> Path:
    """A `claude` that only answers `--version`, so doctor finds a Claude Code it is proven
    with (the real one runs in tests/integration)."""
    path = folder / "claude"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(0o755)
    return path


def with_claude(env: dict[str, str], folder: Path) -> dict[str, str]:
    """`env` with a fake `claude` first on its PATH."""
    fake_claude(folder)
    return {**env, "PATH": f"{folder}{os.pathsep}{env.get('PATH', '')}"}


def log_in_codex(env: dict[str, str]) -> None:
    """`codex login --with-api-key` with `env` (the fake codex, in the tests' CODEX_HOME),
    so doctor finds Codex logged in."""
    subprocess.run(["codex", "login", "--with-api-key"], input="sk-tests-0123456789\n",
                   env=env, capture_output=True, text=True, check=True, timeout=RUN_TIMEOUT_S)


def run_install(*args: str | Path, env: dict[str, str], cwd: Path | None = None,
                installer: Path = INSTALL) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(installer), *map(str, args)], env=env, cwd=cwd,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=RUN_TIMEOUT_S, check=False)


def shared_runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """XDG_DATA_HOME of a runtime made once per test session and shared by every xdist worker
    (making one takes seconds of CPU): the first worker to take the lock makes it, the others
    wait and then find it done. Keyed by the hash of what the runtime is made from."""
    key = digest_of(ROOT, runtime_inputs(ROOT))[:16]
    base = _session_root(tmp_path_factory) / f"shared-runtime-{key}"
    data = base / "data"
    done = base / "done"
    if done.is_file():
        return data
    base.mkdir(parents=True, exist_ok=True)
    with (base / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():
            _make_runtime(base)
            done.write_text("made\n", encoding="utf-8")
    return data


def _session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this whole test session: under xdist each worker has a
    basetemp of its own (popen-gwN) in the controller's one."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _make_runtime(base: Path) -> None:
    for leftover in ("data", "home", "pristine"):  # a worker that died halfway
        shutil.rmtree(base / leftover, ignore_errors=True)
    (base / "home").mkdir()
    done = run_install("--runtime-only", env=install_env(base / "data", base / "home"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "create runtime" in done.stdout
    # As it was made, before other tests register their projects as its users.
    shutil.copytree(base / "data", base / "pristine", symlinks=True)


def copy_runtime(tmp_path_factory: pytest.TempPathFactory, dest: Path) -> Path:
    """A private copy of the session's runtime as it was made (its one user is the
    --runtime-only registration), for a test that changes or removes the runtime. A venv
    copy still works here: the launcher runs `venv/bin/python -I -m sparring`, whose
    site-packages are found relative to the interpreter link; only the scripts' shebangs
    name the old path, and nothing runs them."""
    shutil.copytree(shared_runtime(tmp_path_factory).parent / "pristine", dest, symlinks=True)
    return dest


@contextlib.contextmanager
def runtime_state(data: Path) -> Iterator[dict[str, Any]]:
    """The runtime's state (runtime.json), to change by hand, under the installer's own lock:
    the session's runtime is shared, and another worker's install.py may be writing it."""
    runtime = runtime_of(data)
    with runtime.lock.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state: dict[str, Any] = json.loads(runtime.state_file.read_text(encoding="utf-8"))
        yield state
        # Whole or not at all: another worker's doctor reads it without the lock.
        tmp = runtime.state_file.with_name(f".{runtime.state_file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        os.replace(tmp, runtime.state_file)


def make_project(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "app.py").write_text("print('hello')\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path
