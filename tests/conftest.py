"""Shared fixtures: an isolated home, the fake codex on PATH, temporary git
repositories, the CLI run in-process, and a check that no test leaves a process behind.

`tests/` is on sys.path (pyproject's `pythonpath`), so tests import `support.…`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparring.cli.main import main
from sparring.process import backend, tree
from support.fake_codex import read_calls
from support.gitrepo import IDENTITY, git

TESTS_DIR = Path(__file__).resolve().parent

FAKE_BIN = TESTS_DIR / "support" / "bin"
REPO_ROOT = TESTS_DIR.parent


RUNS_KEPT = 3  # the latest runs' temporary folders, as pytest keeps its own


def pytest_configure(config: pytest.Config) -> None:
    """Every test works in its run's own temporary folder: TMPDIR (and so pytest's tmp_path,
    and every child's) is a folder of this run, in a folder of this user's. Other users'
    files in /tmp (a `.sparring/`, a repository) are never a test's. pytest-xdist's workers
    inherit it from the process that starts them; they make none of their own."""
    if os.environ.get("PYTEST_XDIST_WORKER") or config.option.basetemp:
        return
    mine = Path(tempfile.gettempdir()) / f"sparring-tests-{os.getuid()}"
    mine.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(mine)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        mine = Path(tempfile.mkdtemp(prefix="sparring-tests-"))  # someone else's name
    ended = sorted((run for run in mine.glob("run-*") if not _running(run)),
                   key=os.path.getmtime)  # a run still going (another suite's) is kept whole
    for old in ended[:max(0, len(ended) - (RUNS_KEPT - 1))]:
        shutil.rmtree(old, ignore_errors=True)
    os.environ["TMPDIR"] = tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=mine)
    tempfile.tempdir = None  # read TMPDIR again


def _running(run: Path) -> bool:
    """Whether the pytest that made `run` (`run-<pid>-…`) is still alive."""
    pid = run.name.split("-")[1]
    if not pid.isdigit():
        return False  # an older suite's name: not ours to keep
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture(autouse=True)
def dont_touch_real_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never read or write the real ~/.claude, ~/.codex, git config or checkout."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    # The user's sandbox allowance lives in ~/.config/sparring/: the test's home, not theirs.
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    # Runners' records and the witness copies of sparring's records: the test's home too.
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    for name in list(os.environ):
        if name.startswith(("SPARRING_", "FAKE_CODEX_")) and not name.startswith("SPARRING_TEST_"):
            monkeypatch.delenv(name)
    # Tests run inside Claude Code must not see it (doctor reads which one runs us).
    monkeypatch.delenv("CLAUDE_CODE_EXECPATH", raising=False)
    for key, value in IDENTITY.items():  # for the git the code under test runs
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # The fake codex comes first on PATH, so no test reaches a real codex by accident.
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_CODEX_PYTHON", sys.executable)  # see support/bin/codex
    monkeypatch.setenv("SPARRING_STARTSECS", "0.5")
    # Nor this checkout: a test that names no project must not start sessions, snapshot files
    # or revert them in sparring's own repository (the `repo` fixture moves on from here).
    monkeypatch.chdir(tmp_path)


# The process and fault tests, and the guard's over turns, run under every process backend
# this system has (process/backend.py): on Linux the kernel's, and the portable one macOS runs,
# forced here by SPARRING_PROCESS_BACKEND. The rest of the suite runs under the system's own:
# test_guard.py and test_guard_hardening.py too, whose snapshots, checks and reverts start no
# turn and never ask for a backend (the guard's git starts as every short command does).
BACKEND_TESTS = frozenset({"test_process", "test_turn_processes", "test_processes_real_codex",
                           "test_faults", "test_guard_turns"})
BACKENDS = ("linux", "portable") if sys.platform.startswith("linux") else ("portable",)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.rsplit(".", 1)[-1] in BACKEND_TESTS:
        metafunc.parametrize("process_backend", BACKENDS, indirect=True)


# The tests that take longest, in the order they should start: whole conversations in the real
# Claude Code, twenty sessions at once, runs that wait out timeouts. pytest-xdist's worksteal
# gives each worker a contiguous share of the collection and later steals from the tail of the
# longest queue, so a long test left at a tail keeps one worker busy while the others idle.
SLOW_FIRST = (
    # Busy and needing no runtime: the first worker runs it while the next one makes the
    # session's shared runtime (support/installing.py) that the real-client runs wait for.
    "test_faults.py::test_twenty_sessions_at_once[linux]",
    "integration/test_workflows.py::",
    "test_faults.py::test_twenty_sessions_at_once",
    "integration/test_plugin.py::test_the_plugin_runs_a_whole_think_about_hands_free",
    "test_sandbox.py::test_the_users_environment_widens_and_a_flag_narrows",
    "integration/test_hostile_input.py::",
    "test_compact.py::test_every_key_the_skills_read_is_in_the_compact_output",
    "integration/test_processes_real_codex.py::",
    "test_guard_store.py::test_eight_turns_over_a_changing_file_leave_at_most_two_copies",
    "integration/test_runner_real_codex.py::",
    "test_repo.py::test_mypy_is_clean",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each worker's share begins with its part of the slow tests (the same order in every
    worker, as xdist requires)."""
    rank = {item.nodeid: _slow_rank(item.nodeid) for item in items}
    slow = sorted((i for i in items if rank[i.nodeid] is not None),
                  key=lambda i: rank[i.nodeid] or 0)
    rest = [i for i in items if rank[i.nodeid] is None]
    items[:] = _dealt(slow, rest, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def _slow_rank(nodeid: str) -> int | None:
    return next((n for n, part in enumerate(SLOW_FIRST) if part in nodeid), None)


def _dealt(slow: list[pytest.Item], rest: list[pytest.Item],
           workers: int) -> list[pytest.Item]:
    """The collection cut as worksteal first cuts it (worker i of k takes 1/(k-i) of what is
    left), each share the slow tests dealt to it, then the others, in their order."""
    ordered: list[pytest.Item] = []
    left = len(slow) + len(rest)
    for worker in range(workers):
        share = slow[worker::workers]
        fill = max(0, left // (workers - worker) - len(share))
        share, rest = share + rest[:fill], rest[fill:]
        ordered += share
        left -= len(share)
    return ordered + rest


@pytest.fixture(autouse=True)
def process_backend(request: pytest.FixtureRequest, dont_touch_real_home: None,
                    monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The process backend of this test (and of every process it starts)."""
    forced = getattr(request, "param", None)
    if forced is not None:
        monkeypatch.setenv(backend.ENV, forced)
    backend.forget()
    yield backend.current().name
    backend.forget()


@pytest.fixture(autouse=True)
def no_orphans(tmp_path: Path) -> Iterator[None]:
    """Fail a test that leaves any process of its own behind (and clean it up)."""
    first = tree.last_pid()
    yield
    # A runner records the turn's end and then exits: give it a moment to go.
    deadline = time.monotonic() + 3
    while (leftovers := _processes_under(tmp_path, first)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for proc in leftovers:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    assert not leftovers, f"processes left behind: {[p.info for p in leftovers]}"


def _processes_under(tmp_path: Path, first: int | None) -> list[psutil.Process]:
    marker = str(tmp_path)
    found = []
    for pid in _started_since(first):
        try:
            proc = psutil.Process(pid)
            proc.info = proc.as_dict(["pid", "cmdline", "cwd", "status"])
        except psutil.Error:
            continue  # gone meanwhile
        info = proc.info
        if info["status"] == psutil.STATUS_ZOMBIE or proc.pid == os.getpid():
            continue
        text = " ".join(info["cmdline"] or []) + " " + (info["cwd"] or "")
        if marker in text:
            found.append(proc)
    return found


def _started_since(first: int | None) -> list[int]:
    """The pids of the processes that may have started since the last pid was `first`: on
    Linux pids are handed out upward, so those above it until they wrap (then, as where the
    last pid is unknown, all). Reading every process's command line and folder after each
    test cost the suite more than a minute of CPU."""
    pids = psutil.pids()
    last = tree.last_pid()
    if first is None or last is None or last < first:
        return pids
    return [pid for pid in pids if pid > first]


RELEASE_FILE = "fake-codex-release"


@dataclass
class FakeCodex:
    """Controls the fake `codex` on PATH and reads what it was asked."""

    log_dir: Path
    monkeypatch: pytest.MonkeyPatch
    tmp_path: Path
    extra: dict[str, str] = field(default_factory=dict)
    scripts: int = 0  # scripts restarted so far

    def mode(self, mode: str, **env: str) -> None:
        self.monkeypatch.setenv("FAKE_CODEX_MODE", mode)
        for key, value in env.items():
            self.monkeypatch.setenv(f"FAKE_CODEX_{key.upper()}", str(value))

    def release(self) -> None:
        """A `slow` turn running now, or started later, ends at once instead of at its delay:
        for a test that needs Codex at work only until it has done something meanwhile."""
        (self.tmp_path / RELEASE_FILE).touch()

    def script(self, entries: list[Any], restart: bool = False) -> None:
        """The turns' answers, in order (the count goes on across scripts; `restart`: this
        script's first entry answers the next turn)."""
        path = self.tmp_path / "fake-codex-script.json"
        path.write_text(json.dumps(entries))
        self.monkeypatch.setenv("FAKE_CODEX_SCRIPT", str(path))
        if restart:
            self.scripts += 1
            state = self.tmp_path / f"fake-codex-state-{self.scripts}"
            self.monkeypatch.setenv("FAKE_CODEX_STATE_DIR", str(state))

    def calls(self) -> list[dict[str, Any]]:
        return read_calls(self.log_dir)

    def stdin_of(self, index: int, timeout: float = 30.0) -> bytes:
        """What call `index` read from its stdin (-1: the latest so far). A positive index
        is waited for: a codex started by the verb just run may still be starting, or
        reading, when that verb returns on a busy machine."""
        deadline = time.monotonic() + timeout
        while index >= 0 and len(self._stdins()) <= index and time.monotonic() < deadline:
            time.sleep(0.02)
        return self._stdins()[index].read_bytes()

    def _stdins(self) -> list[Path]:
        return sorted(self.log_dir.glob("call-*.stdin"))

    def turn_calls_once(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """turn_calls(), once there are `count` of them (see stdin_of)."""
        deadline = time.monotonic() + timeout
        while len(self.turn_calls()) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.turn_calls()

    def log_in(self) -> None:
        """`codex login --with-api-key`, as a user would, into the test's CODEX_HOME."""
        subprocess.run(["codex", "login", "--with-api-key"], input=b"sk-tests-0123456789\n",
                       capture_output=True, check=True, timeout=30)

    def turn_calls(self) -> list[dict[str, Any]]:
        """Calls that ran a turn (not --version / --help)."""
        return [c for c in self.calls() if "exec" in c["argv"] and "--help" not in c["argv"]]


@pytest.fixture
def fake_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCodex:
    log_dir = tmp_path / "fake-codex-log"
    monkeypatch.setenv("FAKE_CODEX_LOG_DIR", str(log_dir))
    monkeypatch.setenv("FAKE_CODEX_RELEASE", str(tmp_path / RELEASE_FILE))  # FakeCodex.release
    return FakeCodex(log_dir, monkeypatch, tmp_path)


@pytest.fixture(scope="session")
def first_commit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `repo` fixture's repository, made once in each worker: `git init`, two files, one
    commit, with git reading no home or system configuration (a home of its own, no system
    file), as under dont_touch_real_home. Made anew, with three git runs, it took about 15 ms
    of CPU for each of the 870 tests that take a repository; a copy and a refresh take less."""
    base = tmp_path_factory.mktemp("first-commit")
    path = base / "repo"
    path.mkdir()
    env = {**os.environ, "HOME": str(base), "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("XDG_CONFIG_HOME", None)
    git(path, "init", "-q", "-b", "main", env=env)
    (path / "README.md").write_text("# demo project\n")
    (path / "app.py").write_text("print('hello')\n")
    git(path, "add", "-A", env=env)
    git(path, "commit", "-q", "-m", "initial", env=env)
    return path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first_commit: Path) -> Path:
    """A real git repository with one commit (a copy of `first_commit`: the same commit in
    every test); the test runs inside it."""
    path = tmp_path / "repo"
    # Fresh times, as when each test wrote its files: with copy2's old mtimes git trusts a
    # file's stat data alone (to the second), and a same-size rewrite within that second, its
    # mtime put back, is unseen by git status: not the case the guard tests were written for.
    shutil.copytree(first_commit, path, symlinks=True, copy_function=shutil.copy)
    # The index still holds the template's stat data; git notes the copies' (as it did for
    # the files each test wrote), so a test's git trusts, and hashes, what it did then.
    git(path, "update-index", "-q", "--refresh")
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def scratch(repo: Path) -> Path:
    """Where a test writes the files it hands in, as Claude does: the project's inbox (the
    runner reads and writes only inside the project, and the guard never looks there)."""
    from sparring.store.workspace import inbox_dir

    return inbox_dir(repo, create=True)  # as the runner makes it: the user's alone


@dataclass
class Run:
    exit_code: int
    out: dict[str, Any]
    raw: str

    @property
    def error_code(self) -> str | None:
        error = self.out.get("error") or {}
        return error.get("code") if not self.out.get("ok") else None


class _Stdin(io.TextIOWrapper):
    def isatty(self) -> bool:
        return False


@pytest.fixture
def sparring(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run the CLI in the test's own process: sparring("poll", sid, input=b"...") -> Run.
    A turn's runner starts as it does outside the suite: a new isolated interpreter."""
    def run(*args: str, input: bytes | None = None) -> Run:
        monkeypatch.setattr("sys.stdin", _Stdin(io.BytesIO(input or b"")))
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            code = main([str(a) for a in args])
        raw = buffer.getvalue()
        return Run(code, json.loads(raw) if raw.lstrip().startswith("{") else {}, raw)

    return run


@pytest.fixture
def session(sparring: Any, repo: Path) -> str:
    """A fresh session id in `repo`, of a workflow whose answers are free text (no schema,
    no seal), so runner tests see codex's raw behaviour."""
    result = sparring("init", "--skill", "deep-discussion")
    assert result.exit_code == 0, result.raw
    return str(result.out["session"])
