"""`start` and `resume` as the skills' launcher runs them (`python -I -c ENTRY`), and the
runner they leave behind: what a user would notice if that went wrong. A Bash call that
never returns (a child holding its output), a process left behind by a start that failed,
a turn whose runner was killed that runs on, and codex handed a file other than the prompt
sparring wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparring import config
from sparring.installer.layout import ENTRY
from sparring.store.sessions import Session, find_turn, resolve
from sparring.turn import runner, turns
from support.processes import KeeperStub, alive, wait_for


def launcher(repo: Path, *args: str, timeout: float = 60) -> dict[str, Any]:
    """One call as the skills' launcher makes it: isolated, stdout a pipe, stdin empty; what
    it printed."""
    done = subprocess.run([sys.executable, "-I", "-c", ENTRY, *args], cwd=repo,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                          check=False)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def turn_of(repo: Path, sid: str) -> dict[str, Any]:
    data: dict[str, Any] = Session(repo / ".sparring" / "sessions" / sid).load()["turns"][-1]
    return data


def naming(word: str) -> list[int]:
    """Live processes whose command line holds `word` (a runner's names its session)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(word in part for part in proc.info["cmdline"] or ()) and alive(proc.pid):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


@pytest.fixture
def prompt(scratch: Path) -> Path:
    path = scratch / "prompt.md"
    path.write_text("Redis or SQLite for sessions?\n")
    return path


def test_start_returns_at_once_and_nothing_holds_its_output(
        session: str, fake_codex: Any, repo: Path, prompt: Path) -> None:
    """Claude Code's Bash waits for the end of the call's output: the runner that goes on
    after `start` returned must not hold that pipe, nor stdin."""
    fake_codex.mode("hang")
    # With its output held, this call would never return (subprocess.run reads to its end).
    assert launcher(repo, "start", session, "--prompt-file", str(prompt), timeout=30)["ok"]
    turn = turn_of(repo, session)
    runner_pid = turn["runner"]["pid"]
    assert alive(runner_pid) and turn["status"] == "running"
    assert psutil.Process(runner_pid).cmdline()[1] == "-I", "the runner runs isolated"
    stopped = launcher(repo, "stop", session)
    assert stopped["ok"] and stopped["status"] == "stopped", stopped
    wait_for(lambda: not alive(runner_pid) and not alive(turn["codex"]["pid"]), timeout=20)


@pytest.mark.parametrize("failure", ["started_already", "codex_not_found"])
def test_a_start_that_fails_leaves_no_process_behind(
        session: str, fake_codex: Any, repo: Path, prompt: Path, failure: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_codex.mode("ok")
    if failure == "started_already":
        assert launcher(repo, "start", session, "--prompt-file", str(prompt))["ok"]
        assert launcher(repo, "wait", session, "--timeout", "30")["status"] == "completed"
        # wait returns once the end is recorded; that turn's runner exits just after.
        wait_for(lambda: not alive(turn_of(repo, session)["runner"]["pid"]), timeout=20)
        prompt.write_text("again\n")
    else:
        monkeypatch.setenv("SPARRING_CODEX", str(repo / "no-such-codex"))
    done = launcher(repo, "start", session, "--prompt-file", str(prompt))
    assert done["error"]["code"] == ("invalid_transition" if failure == "started_already"
                                     else "codex_not_found"), done
    assert naming(session) == [], "a process of the failed start runs on"


def test_a_runner_killed_with_kill_9_leaves_nothing_running(
        session: str, fake_codex: Any, repo: Path, prompt: Path, tmp_path: Path) -> None:
    """Its watchdog ends codex and what codex started, and poll says the runner died."""
    pids = tmp_path / "left.pids"
    fake_codex.mode("respawn_hang", respawn_pidfile=str(pids))
    assert launcher(repo, "start", session, "--prompt-file", str(prompt))["ok"]
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 3, timeout=20)
    turn = turn_of(repo, session)
    os.kill(turn["runner"]["pid"], signal.SIGKILL)
    wait_for(lambda: not any(alive(int(p)) for p in [turn["codex"]["pid"],
                                                       *pids.read_text().split()]),
             timeout=20)
    out = launcher(repo, "poll", session)
    assert out["status"] == "failed" and out["error"]["code"] == "runner_died"


def _written_turn(session: str, repo: Path, prompt: bytes) -> tuple[Session, int]:
    """A turn of `session` recorded as `start` records it, its runner not started."""
    found = resolve(session, repo)
    settings = config.resolve_turn({}, config.load(repo))
    with found.update() as data:
        argv = turns.codex_argv(str(shutil.which("codex")), data, settings, thread_id=None,
                                schema=None)
        n = turns.new_turn(found, data, round_no=1, purpose="round", settings=settings,
                           prompt=prompt, argv=argv, thread_id=None)["n"]
    return found, n


def test_a_link_put_in_place_of_the_prompt_never_reaches_codex(
        session: str, fake_codex: Any, repo: Path, tmp_path: Path) -> None:
    """The turn's folder is in the project, within reach of a workspace-write Codex (of
    another session too): a link put in place of the prompt, between the turn being written
    and codex starting, would hand codex, and its model, any file the user can read. The
    turn fails instead, and the file behind the link is never read to codex."""
    fake_codex.mode("ok")
    secret = tmp_path / "secret.txt"
    secret.write_text("a key the model must never see\n")
    found, n = _written_turn(session, repo, b"q")
    path = Path(found.turn_path(n, turns.PROMPT))
    path.unlink()
    path.symlink_to(secret)

    assert runner._start_codex(found, n, KeeperStub(), runner.Stop()) is None
    turn = find_turn(found.load(), n)
    assert turn["status"] == "failed" and turn["error"]["code"] == "path_is_link", turn
    assert fake_codex.calls() == []


def test_codex_reads_the_prompt_as_it_was_checked(
        session: str, fake_codex: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner checks the prompt against its digest, then gives codex those very bytes:
    a file put in its place just after the check never reaches codex."""
    fake_codex.mode("ok")
    found, n = _written_turn(session, repo, b"the prompt sparring wrote\n")
    path = Path(found.turn_path(n, turns.PROMPT))
    checked = turns.prompt_of

    def then_swapped(*args: Any, **kwargs: Any) -> bytes:
        data = checked(*args, **kwargs)
        path.unlink()
        path.write_bytes(b"a prompt put in its place\n")
        return data

    monkeypatch.setattr(turns, "prompt_of", then_swapped)
    proc = runner._start_codex(found, n, KeeperStub(), runner.Stop())
    assert proc is not None
    assert proc.wait(timeout=30) == 0
    assert fake_codex.stdin_of(0) == b"the prompt sparring wrote\n"
