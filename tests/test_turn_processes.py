"""No process started in a turn survives the turn's end or `stop` (issue 21, case 9; issue 26):
not a daemon that detached (setsid and a double fork), not one that ignores SIGTERM and keeps
respawning children, and not after the runner itself was killed with SIGKILL, at any moment.

Every test runs under each process backend (conftest.py): `linux` (the kernel's death signal
and child subreaper) and `portable` (what macOS runs: a watchdog, the turn's mark and the
runner's record). Each names every process the attack started, and asserts none of them runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sparring import process
from sparring.process import backend, tree
from sparring.store import locate, runs
from sparring.store.sessions import Session
from support.processes import alive, marked_sleeper, wait_for


def turn_of(repo: Path, sid: str) -> dict[str, Any]:
    data: dict[str, Any] = Session(repo / ".sparring" / "sessions" / sid).load()["turns"][-1]
    return data


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def running(pids: list[int]) -> list[int]:
    return [pid for pid in pids if alive(pid)]


def respawning(fake_codex: Any, tmp_path: Path, mode: str) -> Path:
    pids = tmp_path / "respawned.pids"
    fake_codex.mode(mode, respawn_pidfile=str(pids))
    return pids


def test_a_daemon_that_ignores_term_and_respawns_ends_with_its_turn(
        sparring: Any, session: str, fake_codex: Any, tmp_path: Path) -> None:
    pids = respawning(fake_codex, tmp_path, "respawn")
    sparring("start", session, input=b"q")
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"
    started = pids_in(pids)
    assert len(started) >= 2, "the daemon and at least one child it respawned"
    assert running(started) == [], "the turn's end was reported while its processes ran"
    time.sleep(0.5)  # and none comes back: the respawner itself is gone
    assert pids_in(pids) == started


def test_a_daemon_that_ignores_term_and_respawns_is_ended_by_stop(
        sparring: Any, session: str, fake_codex: Any, tmp_path: Path) -> None:
    pids = respawning(fake_codex, tmp_path, "respawn_hang")
    sparring("start", session, input=b"q")
    wait_for(lambda: len(pids_in(pids)) >= 10)  # it has respawned for a while
    stopped = sparring("stop", session)
    assert stopped.out["status"] == "stopped" and stopped.out["already_ended"] is False
    assert running(pids_in(pids)) == []


@pytest.mark.parametrize("mode", ["detach_hang", "respawn_hang"])
def test_nothing_of_the_turn_outlives_a_runner_killed_with_kill_9(
        sparring: Any, session: str, fake_codex: Any, tmp_path: Path, repo: Path,
        mode: str) -> None:
    pids = tmp_path / "left.pids"
    fake_codex.mode(mode, respawn_pidfile=str(pids), detach_pidfile=str(pids))
    sparring("start", session, input=b"q")
    wait_for(lambda: len(pids_in(pids)) >= (1 if mode == "detach_hang" else 5))
    turn = turn_of(repo, session)
    os.kill(turn["runner"]["pid"], signal.SIGKILL)
    # Nobody polls or stops: the runner's watchdog ends codex and all it left.
    wait_for(lambda: running([turn["codex"]["pid"], *pids_in(pids)]) == [])
    out = sparring("poll", session).out
    assert out["status"] == "failed" and out["error"]["code"] == "runner_died"
    assert running(pids_in(pids)) == []


def test_stop_ends_what_a_turn_left_when_its_runner_and_watchdog_were_killed(
        sparring: Any, session: str, fake_codex: Any, tmp_path: Path, repo: Path) -> None:
    """Both killed at once with SIGKILL: `stop` alone finds the turn's processes, from the
    runner's record and the mark in their environment."""
    pids = respawning(fake_codex, tmp_path, "respawn_hang")
    sparring("start", session, input=b"q")
    wait_for(lambda: len(pids_in(pids)) >= 5)
    run = runs.read(str(repo / ".sparring" / "sessions" / session))
    assert run is not None and run.watchdog is not None and run.runner is not None
    codex = turn_of(repo, session)["codex"]["pid"]
    for doomed in (run.watchdog.pid, run.runner.pid):
        os.kill(doomed, signal.SIGKILL)
    stopped = sparring("stop", session)
    assert stopped.exit_code == 0, stopped.raw
    assert stopped.out["status"] in ("stopped", "failed")
    assert running([codex, *pids_in(pids)]) == []


def test_a_killed_watchdog_is_started_again(sparring: Any, session: str, fake_codex: Any,
                                            repo: Path) -> None:
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    directory = repo / ".sparring" / "sessions" / session

    def watchdog() -> process.Identity | None:
        run = runs.read(str(directory))
        return run.watchdog if run else None

    wait_for(lambda: watchdog() is not None)
    first = watchdog()
    assert first is not None
    os.kill(first.pid, signal.SIGKILL)
    wait_for(lambda: process.is_alive(watchdog()) and not first.same(watchdog()))
    codex = turn_of(repo, session)["codex"]["pid"]
    os.kill(turn_of(repo, session)["runner"]["pid"], signal.SIGKILL)
    wait_for(lambda: running([codex]) == [])  # the new watchdog did its job


def test_a_detached_process_that_clears_its_environment_ends_with_its_turn(
        sparring: Any, session: str, fake_codex: Any, tmp_path: Path,
        process_backend: str) -> None:
    if process_backend == "portable":
        pytest.skip("without a subreaper, a process that leaves codex's session and its "
                    "environment at once is out of reach (docs/security.md, Processes)")
    pidfile = tmp_path / "clean.pid"
    fake_codex.mode("detach", detach_pidfile=str(pidfile), detach_clean_env="1")
    sparring("start", session, input=b"q")
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"
    assert "SPARRING_TURN" not in os.environ
    assert running(pids_in(pidfile)) == []


# -- the mechanisms, one level down ------------------------------------------------------------

HOPPER = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:  # a new process every few milliseconds, each in a group of its own
    if os.fork() != 0:
        os._exit(0)
    os.setpgid(0, 0)
    with open(sys.argv[1], "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(0.005)
"""


def test_a_process_that_hops_from_pid_to_pid_is_caught(tmp_path: Path) -> None:
    """A process that forks and exits over and over, leaving its group each time: frozen
    and killed all the same, found by the mark it carries."""
    pids = tmp_path / "hops"
    env = tree.marked(os.environ, "hop-mark")
    subprocess.Popen([sys.executable, "-c", HOPPER, str(pids)], env=env,
                     start_new_session=True, stdin=subprocess.DEVNULL)
    wait_for(lambda: len(pids_in(pids)) >= 20)
    ended = process.end(tree.Scope(mark="hop-mark"), grace=0.2)
    assert ended
    seen = len(pids_in(pids))
    time.sleep(0.2)
    assert len(pids_in(pids)) == seen, "it went on hopping"
    assert running(pids_in(pids)) == []


def test_scans_look_at_the_newest_processes_first_across_a_pid_wrap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A hopper's pid is the newest: looked at late, it is gone. After pids wrap (at 32,768
    on many machines) the newest are the lowest, just below the last pid handed out."""
    fresh = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        if sys.platform.startswith("linux"):
            last = tree.last_pid()  # the system's own word, not the highest pid
            assert last is not None and (last - fresh.pid) % tree._PID_SPACE < 10_000
            assert tree.newest_first([1, os.getpid(), fresh.pid])[0] == fresh.pid
    finally:
        fresh.kill()
        fresh.wait()
    monkeypatch.setattr(tree, "last_pid", lambda: 100)
    assert tree.newest_first([32000, 50, 101, 100, 4_000_000]) == [100, 50, 4_000_000, 32000,
                                                                   101]
    monkeypatch.setattr(tree, "last_pid", lambda: None)
    assert tree.newest_first([50, 32000, 100]) == [32000, 100, 50]


def test_the_runners_record_of_a_turns_processes_looks_only_at_new_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twice a second for as long as Codex runs, the runner notes the turn's processes: after
    the first note it judges only the processes that started since, not every process of
    the machine again, and it still finds a new one of the turn. Once pids wrap (one it
    judged may be another process now) it looks at them all again."""
    import psutil

    from sparring.turn.keeper import Keeper

    judged: list[int] = []
    judge = tree.Scan._judge

    def counted(self: tree.Scan, pid: int, depth: int) -> Any:
        if pid not in self.known:  # looked at, not answered from what the scan knows
            judged.append(pid)
        return judge(self, pid, depth)

    last = [4_194_000]  # the last pid handed out, as the system would say: above every pid
    monkeypatch.setattr(tree, "last_pid", lambda: last[0])
    monkeypatch.setattr(tree.Scan, "_judge", counted)
    monkeypatch.setattr(Keeper, "note", lambda self, **fields: None)
    keeper = Keeper(Session(tmp_path), process.identity_of(os.getpid()), "mark",
                    str(tmp_path / "dog"))
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    codex = subprocess.Popen(sleeper, start_new_session=True)
    child = None
    try:
        keeper.record(codex)
        assert keeper._recording is not None
        first = set(keeper._recording[1].known)  # judged and remembered (not gone meanwhile)
        assert codex.pid in first and process.identity_of(codex.pid) in keeper.seen
        judged.clear()
        child = subprocess.Popen(sleeper)
        last[0] += 1
        keeper.record(codex)
        assert process.identity_of(child.pid) in keeper.seen
        assert child.pid in judged and not set(judged) & first, "judged again"
        last[0] -= 100  # pids wrapped
        judged.clear()
        keeper.record(codex)
        assert {pid for pid in first if psutil.pid_exists(pid)} <= set(judged)
    finally:
        for proc in (codex, child):
            if proc is not None:
                proc.kill()
                proc.wait()


def test_a_pid_handed_out_again_between_two_scans_is_judged_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan kept from note to note remembers that a pid was none of the turn's; once the
    system hands that pid out again (it lies between the last pids the two scans saw, across
    a wrap too), the new process there is judged afresh, and found when it is the turn's."""
    proc = marked_sleeper("reused-mark")
    try:
        last = [proc.pid + 10]
        monkeypatch.setattr(tree, "last_pid", lambda: last[0])
        scan = tree.Scan(tree.Scope(mark="reused-mark"))
        wait_for(lambda: proc.pid in {p.pid for p in scan.turns()})
        scan.known[proc.pid] = None  # as if the pid had been another process's at first
        assert proc.pid not in {p.pid for p in scan.turns()}, "nothing handed out: kept"
        last[0] = proc.pid + 5  # the counter went round, wrapped and past its pid
        assert proc.pid in {p.pid for p in scan.turns()}
        assert not tree.handed_out(7, 100, 200) and tree.handed_out(150, 100, 200)
        assert tree.handed_out(7, 32_000, 300) and not tree.handed_out(20_000, 32_000, 300)
    finally:
        proc.kill()
        proc.wait()


def test_a_scan_passes_over_what_started_before_the_turns_runner(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Everything of a runner's turns starts after the runner: a process that started before
    it is none of the turn's, even carrying the mark, and is passed over with one look at its
    start, its environment never read (a machine runs hundreds). A root is judged whatever
    its start. The start is told in clock ticks since boot, which no clock set back moves."""
    import psutil

    if tree.start_ticks(os.getpid()) is None:
        pytest.skip("this system does not tell a process's start in ticks since boot (Linux's "
                    "/proc); scans then judge every process")
    env = tree.marked(os.environ, "since-mark")
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    older = subprocess.Popen(sleeper, env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    runner = None
    try:
        time.sleep(0.05)  # a tick or more (10 ms) between the two starts
        runner = subprocess.Popen(sleeper, stdin=subprocess.DEVNULL)
        since = tree.start_ticks(runner.pid)
        assert since is not None and since > (tree.start_ticks(older.pid) or since)
        newer = marked_sleeper("since-mark")
        read: dict[int, int | None] = {}  # pid -> its start, for each environment read
        environ = psutil.Process.environ

        def counted(self: psutil.Process) -> dict[str, str]:
            read[self.pid] = tree.start_ticks(self.pid)
            return environ(self)

        monkeypatch.setattr(psutil.Process, "environ", counted)
        try:
            found = {p.pid for p in tree.Scan(tree.Scope(mark="since-mark", since=since)).turns()}
            assert newer.pid in found and older.pid not in found
            assert older.pid not in read and os.getpid() not in read
            assert all(started is None or started >= since for started in read.values())
            root = tree.Scope(mark="since-mark", since=since,
                              roots=(process.identity_of(older.pid),))
            assert older.pid in {p.pid for p in tree.Scan(root).turns()}, "a root is judged"
            assert older.pid in {p.pid for p in tree.Scan(tree.Scope(mark="since-mark")).turns()}
        finally:
            newer.kill()
            newer.wait()
    finally:
        for proc in (older, runner):
            if proc is not None:
                proc.kill()
                proc.wait()


def test_the_runners_scope_begins_at_the_runners_own_start(tmp_path: Path) -> None:
    from sparring.turn.keeper import Keeper

    keeper = Keeper(Session(tmp_path), process.identity_of(os.getpid()), "mark",
                    str(tmp_path / "dog"))
    assert keeper.scope(None).since == tree.start_ticks(os.getpid())


def test_a_scope_is_empty_only_after_a_quiet_scan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan proves a scope empty only when the system handed out no pid while it ran and
    none shows that it had not listed: a child whose pid was handed out just before the
    listing shows only once its fork is done, and its parent may be gone by then. Where no
    scan is quiet (a machine that starts processes without pause), the scans go on for
    _QUIET_WITHIN_S before the scope counts as empty."""
    import psutil

    proc = marked_sleeper("quiet-mark")
    try:
        scope = tree.Scope(mark="quiet-mark")
        wait_for(lambda: proc.pid in {p.pid for p in tree.Scan(scope).turns()})
        listings = [0]
        pids = psutil.pids

        def hidden_at_first(**kwargs: Any) -> list[int]:
            listings[0] += 1
            return [p for p in pids() if p != proc.pid or listings[0] > 1]

        monkeypatch.setattr(tree, "last_pid", lambda: 1234)  # no pid handed out meanwhile
        monkeypatch.setattr(psutil, "pids", hidden_at_first)
        scan = tree.Scan(tree.Scope(mark="quiet-mark"))
        assert scan.turns() == [] and not scan.quiet(), "it showed after the listing"
        assert [p.pid for p in scan.settled()] == [proc.pid]
        monkeypatch.setattr(psutil, "pids", pids)

        scans = [0]
        turns = tree.Scan.turns

        def counted(self: tree.Scan) -> list[psutil.Process]:
            scans[0] += 1
            return turns(self)

        monkeypatch.setattr(tree.Scan, "turns", counted)
        counter = iter(range(10**9))
        monkeypatch.setattr(tree, "last_pid", lambda: next(counter))  # never quiet
        monkeypatch.setattr(tree, "_QUIET_WITHIN_S", 0.3)
        began = time.monotonic()
        assert tree.Scan(tree.Scope(mark="no-such-mark")).settled() == []
        assert time.monotonic() - began >= 0.3 and scans[0] > tree._EMPTY_SCANS
        scans[0] = 0
        monkeypatch.setattr(tree, "last_pid", lambda: 1234)
        listed = pids()
        monkeypatch.setattr(psutil, "pids", lambda: listed)  # nothing new shows meanwhile
        assert tree.Scan(tree.Scope(mark="no-such-mark")).settled() == []
        assert scans[0] == 1, "one quiet scan is enough"
    finally:
        proc.kill()
        proc.wait()


def test_the_mark_of_a_turn_inside_a_turn_keeps_the_outer_one() -> None:
    inner = tree.marked(tree.marked({"PATH": "/bin"}, "outer"), "inner")
    assert inner == {"PATH": "/bin", "SPARRING_TURN": "outer:inner"}


PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
print(child.pid, flush=True)
child.wait()
"""
CHILD = """
import os, pathlib, sys
from sparring import process
parent = os.getppid()
pathlib.Path(sys.argv[1] + ".ready").write_text("")
process.await_parent_exit(parent)
pathlib.Path(sys.argv[1]).write_text("my parent is gone")
"""


def test_the_watchdogs_wait_ends_when_its_parent_is_killed(tmp_path: Path,
                                                          process_backend: str) -> None:
    done = tmp_path / "done"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD, str(done)],
                              stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    wait_for(lambda: Path(f"{done}.ready").exists())
    time.sleep(0.3)
    assert not done.exists() and running([child]) == [child], "it waits while its parent runs"
    parent.kill()
    parent.wait()
    wait_for(lambda: done.exists(), timeout=5)
    wait_for(lambda: running([child]) == [])


def test_the_backend_is_chosen_by_the_switch(process_backend: str) -> None:
    name, _ = process.mechanism()
    assert name == process_backend == os.environ["SPARRING_PROCESS_BACKEND"]
    tied = backend.current().tie_to_parent(os.getpid())
    assert (tied is not None) is (process_backend == "linux")


@pytest.mark.parametrize("value", ["windows", "linux-ish"])
def test_a_backend_this_system_lacks_is_refused_before_anything_starts(
        sparring: Any, session: str, fake_codex: Any, monkeypatch: pytest.MonkeyPatch,
        value: str) -> None:
    monkeypatch.setenv("SPARRING_PROCESS_BACKEND", value)
    backend.forget()
    refused = sparring("start", session, input=b"q")
    assert refused.error_code == "config_invalid"
    assert "SPARRING_PROCESS_BACKEND" in refused.out["error"]["message"]
    assert fake_codex.turn_calls() == []
    assert sparring("status", session).out["turns"] == []
    doctor = {c["name"]: c for c in sparring("doctor").out["checks"]}["processes"]
    assert doctor["ok"] is False and "SPARRING_PROCESS_BACKEND" in doctor["hint"]


def test_the_runners_record_has_one_place(tmp_path: Path) -> None:
    directory = tmp_path / "a session"
    where = runs.path_for(str(directory))
    assert locate.run_record(str(directory)) == str(where)  # the one spelling of it
    assert where.is_relative_to(Path(locate.state_home()))


# Modules the runner and its watchdog import after Python's start (none is loaded before it).
PLANTED = ("json", "subprocess", "selectors", "signal", "threading", "traceback", "dataclasses",
           "inspect", "shlex", "tempfile", "contextlib", "pathlib", "psutil")


def test_python_files_codex_writes_into_a_session_folder_never_run_in_the_runner(
        sparring: Any, session: str, fake_codex: Any, repo: Path, tmp_path: Path) -> None:
    """A runner and its watchdog work in the session's folder, which a workspace-write Codex
    can write to: a module it plants there must not shadow Python's own in the next turn's
    runner, which runs outside Codex's sandbox."""
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"
    ran = tmp_path / "planted-code-ran"
    folder = repo / ".sparring" / "sessions" / session
    for name in PLANTED:
        (folder / f"{name}.py").write_text(f"open({str(ran)!r}, 'a').write({name!r})\n")

    assert sparring("resume", session, input=b"again").exit_code == 0
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"
    assert not ran.exists(), f"planted modules ran: {ran.read_text()}"
