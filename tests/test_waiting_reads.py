"""What `wait` and `start` read while they wait: a turn's events once, for the answer, and
session.json (and the runner's record) again only once it changed. A wait of minutes used to
parse the turn's whole event stream (megabytes, for a turn that ran tests) and read the
session twenty times a second."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from sparring.codex import events
from sparring.store import sessions
from sparring.turn import lifecycle
from support.processes import alive, wait_for


def counting(patched: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count the calls of module.name from now on (a list that grows by one per call)."""
    calls: list[int] = []
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    patched.setattr(module, name, counted)
    return calls


def test_wait_reads_the_turns_events_once_for_its_answer(sparring: Any, session: str,
                                                         fake_codex: Any) -> None:
    fake_codex.mode("slow", delay="1.5")  # commands and reasoning stream in as it runs
    assert sparring("start", session, input=b"Redis or SQLite?").exit_code == 0
    with pytest.MonkeyPatch.context() as patched:
        reads = counting(patched, events, "read")
        done = sparring("wait", session, "--timeout", "30")
        during_wait = len(reads)
    assert done.out["status"] == "completed", done.raw
    assert done.out["review"], done.raw  # the answer, read from the events after all
    # The CLI's wait, then the entry's, asked again by the fixture once the turn ended.
    assert during_wait == 2


def test_wait_still_answers_at_its_timeout_with_what_codex_did_so_far(
        sparring: Any, session: str, fake_codex: Any) -> None:
    fake_codex.mode("slow", delay="3")
    assert sparring("start", session, input=b"q").exit_code == 0
    waited = sparring("wait", session, "--timeout", "0.6")
    assert waited.out["status"] == "running" and waited.out["wait_timed_out"] is True
    full = sparring("wait", session, "--timeout", "0.1", "--full")
    assert full.out["activities_total"] > 0, full.raw  # its work so far, from the events
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"


@pytest.mark.in_process  # counts what start's own code does
def test_start_reads_the_session_again_only_once_it_changed(
        sparring: Any, session: str, fake_codex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_STARTSECS", "1.0")  # twenty looks at the turn, 50 ms apart
    fake_codex.mode("slow", delay="2")
    with pytest.MonkeyPatch.context() as patched:
        loads = counting(patched, sessions.Session, "load")
        started = sparring("start", session, input=b"q")
        during_start = len(loads)
    assert started.exit_code == 0 and started.out["status"] == "running", started.raw
    # What start itself loads around its window, and a read each time the runner wrote
    # session.json (its identity, codex's start): far fewer than the window's twenty looks.
    assert during_start <= 12, during_start
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"


def test_wait_reads_the_session_again_only_once_it_changed(
        sparring: Any, session: str, fake_codex: Any) -> None:
    fake_codex.mode("slow", delay="2")  # forty looks at the turn, 50 ms apart
    assert sparring("start", session, input=b"q").exit_code == 0
    with pytest.MonkeyPatch.context() as patched:
        loads = counting(patched, sessions.Session, "load")
        done = sparring("wait", session, "--timeout", "30")
        during_wait = len(loads)
    assert done.out["status"] == "completed", done.raw
    # A read each time the runner wrote session.json or its record, and what the answer
    # reads (both doors): far fewer than the forty looks of one wait.
    assert during_wait <= 16, during_wait


def test_a_wait_under_way_sees_its_runner_die_though_no_file_changed(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    fake_codex.mode("hang")  # codex never ends the turn: only the runner's death does
    assert sparring("start", session, input=b"q").exit_code == 0
    found = sessions.resolve(session, repo)
    runner = found.load()["turns"][0]["runner"]["pid"]
    looked = lifecycle.Waiting.turn
    looks: list[int] = []

    def look(self: lifecycle.Waiting) -> Any:
        looks.append(1)
        if len(looks) == 3:  # the wait read the session, then looked on without reading
            os.kill(runner, signal.SIGKILL)
        return looked(self)

    began = time.monotonic()
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(lifecycle.Waiting, "turn", look)
        done = sparring("wait", session, "--timeout", "60")
    assert len(looks) >= 3
    assert done.out["status"] == "failed", done.raw
    assert done.out["error"]["code"] == "runner_died", done.raw
    assert time.monotonic() - began < 30  # seen as it happened, not at the timeout
    codex = found.load()["turns"][0]["codex"]
    assert codex is not None
    wait_for(lambda: not alive(codex["pid"]))  # ended with its runner


@pytest.mark.in_process  # counts what start's own code does
def test_starts_window_sees_its_runner_die_though_no_file_changed(
        sparring: Any, session: str, fake_codex: Any, repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_STARTSECS", "30")  # a window the death must cut short
    fake_codex.mode("hang")
    found = sessions.resolve(session, repo)
    looked = lifecycle.Waiting.turn
    looks: list[int] = []

    def look(self: lifecycle.Waiting) -> Any:
        turn = looked(self)
        if turn["codex"] is not None:
            looks.append(1)
        if len(looks) == 2:  # start read codex's start, then looked on without reading
            os.kill(turn["runner"]["pid"], signal.SIGKILL)
        return turn

    began = time.monotonic()
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(lifecycle.Waiting, "turn", look)
        started = sparring("start", session, input=b"q")
    assert len(looks) > 2, started.raw
    assert started.exit_code == 1 and started.error_code == "runner_died", started.raw
    assert time.monotonic() - began < 20  # seen as it happened, not at the window's end
    turn = found.load()["turns"][0]
    assert turn["status"] == "failed" and turn["error"]["code"] == "runner_died"
    wait_for(lambda: not alive(turn["codex"]["pid"]))  # ended with its runner
