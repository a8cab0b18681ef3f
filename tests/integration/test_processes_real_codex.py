"""The real Codex CLI runs a command that leaves a daemon behind (setsid, a double fork) which
ignores SIGTERM and keeps respawning children: nothing of it survives the turn's end, `stop`,
or a runner killed with SIGKILL (issue 21, case 9). The daemon is found here by a token in its
command line, not by anything sparring uses to find it."""

from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparring.store.sessions import Session
from support.processes import wait_for
from support.responses_mock import ResponsesMock, hang, shell_call, text

pytestmark = pytest.mark.integration

DAEMON = """python3 -c '
import os, signal, sys, time
if os.fork():
    sys.exit(0)
os.setsid()
if os.fork():
    os._exit(0)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    if os.fork() == 0:
        while True:
            time.sleep(1)
    time.sleep(0.1)
' {token}; echo started"""


@pytest.fixture
def real_codex(codex_bin: Path, codex_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real codex, let run commands outside its sandbox, as the user may choose in their
    own shell. Inside its sandbox (read-only, workspace-write) a command's daemon does not
    outlive codex 0.169.0 (measured); outside it, it does, unless sparring ends it."""
    monkeypatch.setenv("SPARRING_SANDBOX", "danger-full-access")
    monkeypatch.setenv("SPARRING_CODEX", str(codex_bin))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("MOCK_OPENAI_KEY", "dummy")
    return codex_bin


def daemons(token: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.info["status"] != psutil.STATUS_ZOMBIE and token in (proc.info["cmdline"] or []):
            found.append(proc.pid)
    return found




def kill_all(token: str) -> None:
    """If the test failed, its daemon must not outlive it either."""
    for _ in range(50):
        left = daemons(token)
        if not left:
            return
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def test_a_respawning_daemon_codex_started_ends_with_the_turn(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, session: str) -> None:
    token = f"sparring-test-{secrets.token_hex(4)}"
    responses_mock.script(shell_call(DAEMON.format(token=token)), shell_call("sleep 4"),
                          text("done"))
    try:
        assert sparring("start", session, input=b"run it").exit_code == 0
        wait_for(lambda: len(daemons(token)) >= 3, timeout=30)  # it runs, and respawns, in the turn
        out = sparring("wait", session, "--timeout", "60").out
        assert out["status"] == "completed", out
        assert daemons(token) == []
    finally:
        kill_all(token)


@pytest.mark.parametrize("how", ["stop", "runner killed"])
def test_a_respawning_daemon_codex_started_ends_with_stop_or_its_runners_death(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, session: str,
        repo: Path, how: str) -> None:
    token = f"sparring-test-{secrets.token_hex(4)}"
    responses_mock.script(shell_call(DAEMON.format(token=token)), hang())  # the turn goes on
    try:
        assert sparring("start", session, input=b"run it").exit_code == 0
        wait_for(lambda: len(daemons(token)) >= 3, timeout=30)
        turn = Session(repo / ".sparring" / "sessions" / session).load()["turns"][-1]
        if how == "stop":
            assert sparring("stop", session).out["status"] == "stopped"
        else:
            os.kill(turn["runner"]["pid"], signal.SIGKILL)
            # Nobody polls: the runner's watchdog ends codex and the daemon.
            wait_for(lambda: not daemons(token) and _zombie(turn["codex"]["pid"]), timeout=15)
            assert sparring("poll", session).out["error"]["code"] == "runner_died"
        assert daemons(token) == []
    finally:
        kill_all(token)


def _zombie(pid: int) -> bool:
    """Gone, or a zombie."""
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True
