"""`start` and `resume` as the skills' launcher runs them (`python -I -c ENTRY`): the turn's
runner is forked while `start` prepares the turn, starts codex as soon as its command line
is known (turn/early.py), and forks its watchdog (process/standby.py). What a user would
notice if that went wrong: a Bash call that never returns (a child holding its output), a
process left behind by a start that failed, a turn that does not start when the forked
runner is gone, code Codex planted that runs outside its sandbox, a turn whose runner was
killed that runs on, a codex given its prompt before the guard's snapshot, or one started
on a command line sparring did not build.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparring.installer.layout import ENTRY
from sparring.process import standby
from sparring.store.sessions import Session
from support.processes import KeeperStub, alive, wait_for

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forking needs fork()")
# sparring forks on Linux only (process/standby.py's may_fork); elsewhere it starts anew.
forks_here = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="sparring forks only on Linux")


def launcher(repo: Path, *args: str, program: str = ENTRY, timeout: float = 60
             ) -> subprocess.CompletedProcess[bytes]:
    """One call as the skills' launcher makes it: isolated, stdout a pipe, stdin empty."""
    return subprocess.run([sys.executable, "-I", "-c", program, *args], cwd=repo,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                          check=False)


def isolated(program: str) -> str:
    """What `program` prints, run as the launcher runs sparring (`python -I`)."""
    done = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True,
                          text=True, timeout=30, check=True)
    return done.stdout


def out_of(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    import json

    found: dict[str, Any] = json.loads(done.stdout)
    return found


def turn_of(repo: Path, sid: str) -> dict[str, Any]:
    data: dict[str, Any] = Session(repo / ".sparring" / "sessions" / sid).load()["turns"][-1]
    return data


def naming(word: str) -> list[int]:
    """Processes whose command line holds `word` (a forked runner has start's)."""
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
    after `start` returned (forked from it) must not hold that pipe, nor stdin."""
    fake_codex.mode("hang")
    # With its output held, this call would never return (subprocess.run reads to its end).
    done = launcher(repo, "start", session, "--prompt-file", str(prompt), timeout=30)
    assert out_of(done)["ok"], done.stdout
    turn = turn_of(repo, session)
    runner = turn["runner"]["pid"]
    assert alive(runner) and turn["status"] == "running"
    if sys.platform.startswith("linux"):  # forked from this very start, isolated as it was
        cmdline = psutil.Process(runner).cmdline()
        assert cmdline[1] == "-I" and "start" in cmdline
    stopped = out_of(launcher(repo, "stop", session))
    assert stopped["ok"] and stopped["status"] == "stopped", stopped
    wait_for(lambda: not alive(runner) and not alive(turn["codex"]["pid"]), timeout=20)


@forks_here
def test_the_suites_starts_fork_their_runner_as_the_launchers_do(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    """The suite runs a verb that starts a turn as the launcher does (conftest's `sparring`,
    support/launcher.py), so its turns take the path they take on Linux: the runner forked
    from the isolated process that ran `start`, not started anew."""
    fake_codex.mode("hang")
    assert sparring("start", session, input=b"q").out["status"] == "running"
    runner = turn_of(repo, session)["runner"]["pid"]
    cmdline = psutil.Process(runner).cmdline()
    assert cmdline[1] == "-I" and "sparring.turn.runner" not in " ".join(cmdline), cmdline
    assert sparring("stop", session).out["status"] == "stopped"


@pytest.mark.parametrize("failure", ["started_already", "codex_not_found"])
def test_a_start_that_fails_leaves_no_process_behind(
        session: str, fake_codex: Any, repo: Path, prompt: Path, failure: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner forked for a start that then fails (after the session was found) is ended
    before start returns."""
    fake_codex.mode("ok")
    if failure == "started_already":
        assert out_of(launcher(repo, "start", session, "--prompt-file", str(prompt)))["ok"]
        assert out_of(launcher(repo, "wait", session, "--timeout", "30"))["status"] == \
            "completed"
        # wait returns once the end is recorded; that turn's runner exits just after.
        wait_for(lambda: not alive(turn_of(repo, session)["runner"]["pid"]), timeout=20)
        prompt.write_text("again\n")
    else:
        monkeypatch.setenv("SPARRING_CODEX", str(repo / "no-such-codex"))
    done = out_of(launcher(repo, "start", session, "--prompt-file", str(prompt)))
    assert done["error"]["code"] == ("invalid_transition" if failure == "started_already"
                                     else "codex_not_found"), done
    assert naming(session) == [], "a process of the failed start runs on"


@forks_here
def test_when_the_forked_runner_is_gone_start_starts_a_new_one(
        session: str, fake_codex: Any, repo: Path, prompt: Path) -> None:
    """The forked runner dies before it is given the turn: start launches a runner anew
    (an isolated interpreter), and the turn runs to its end."""
    fake_codex.mode("ok")
    program = (
        "import os, sys\n"
        "from sparring.process import standby\n"
        "given = standby.Standby.order\n"
        "def order(self, text):\n"
        "    os.kill(self.pid, 9)\n"
        "    os.waitpid(self.pid, 0)\n"
        "    open('forked.pid', 'w').write(str(self.pid))\n"
        "    return given(self, text)\n"
        "standby.Standby.order = order\n"
        f"{ENTRY}\n")
    done = out_of(launcher(repo, "start", session, "--prompt-file", str(prompt),
                           program=program))
    assert done["ok"], done
    assert out_of(launcher(repo, "wait", session, "--timeout", "30"))["status"] == "completed"
    assert turn_of(repo, session)["runner"]["pid"] != int((repo / "forked.pid").read_text())


def test_a_forked_runner_killed_with_kill_9_leaves_nothing_running(
        session: str, fake_codex: Any, repo: Path, prompt: Path, tmp_path: Path) -> None:
    """Its watchdog (forked from it) ends codex and what codex started."""
    pids = tmp_path / "left.pids"
    fake_codex.mode("respawn_hang", respawn_pidfile=str(pids))
    assert out_of(launcher(repo, "start", session, "--prompt-file", str(prompt)))["ok"]
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 3, timeout=20)
    turn = turn_of(repo, session)
    os.kill(turn["runner"]["pid"], signal.SIGKILL)
    wait_for(lambda: not any(alive(int(p)) for p in [turn["codex"]["pid"],
                                                       *pids.read_text().split()]),
             timeout=20)
    out = out_of(launcher(repo, "poll", session))
    assert out["status"] == "failed" and out["error"]["code"] == "runner_died"


def test_python_files_codex_plants_never_run_in_a_forked_runner(
        session: str, fake_codex: Any, repo: Path, prompt: Path, tmp_path: Path) -> None:
    """A workspace-write Codex can write into the project and the session's folder: modules
    it plants there must not shadow Python's own in the next turn's runner (forked from an
    isolated start, it imports with the start's sys.path) nor in its watchdog."""
    fake_codex.mode("ok")
    assert out_of(launcher(repo, "start", session, "--prompt-file", str(prompt)))["ok"]
    assert out_of(launcher(repo, "wait", session, "--timeout", "30"))["status"] == "completed"
    ran = tmp_path / "planted-code-ran"
    for folder in (repo, repo / ".sparring" / "sessions" / session):
        for name in ("json", "traceback", "signal", "psutil", "secrets", "subprocess",
                     "sparring"):
            (folder / f"{name}.py").write_text(f"open({str(ran)!r}, 'a').write({name!r})\n")
    prompt.write_text("again\n")
    assert out_of(launcher(repo, "resume", session, "--prompt-file", str(prompt)))["ok"]
    assert out_of(launcher(repo, "wait", session, "--timeout", "30"))["status"] == "completed"
    assert not ran.exists(), f"planted modules ran: {ran.read_text()}"


def test_nothing_is_forked_where_a_fork_without_exec_is_unsafe() -> None:
    """macOS (system frameworks loaded, psutil loads some): start anew, as before. Asked in
    an isolated, single-threaded process, where Linux would fork."""
    program = ("import sys\n"
               "from sparring.process import standby\n"
               "print(standby.may_fork())\n"
               "sys.platform = 'darwin'\n"
               "print(standby.may_fork())\n")
    here, on_macos = isolated(program).split()
    assert on_macos == "False"
    assert here == str(sys.platform.startswith("linux"))


def test_nothing_is_forked_from_a_process_that_is_not_isolated() -> None:
    """pytest's own process (not `python -I`, and with threads): the caller starts a new
    interpreter instead."""
    assert not sys.flags.isolated
    assert standby.fork(lambda _: 0) is None


@forks_here
def test_nothing_is_forked_from_a_process_running_threads(tmp_path: Path) -> None:
    program = (
        "import threading, time\n"
        "from sparring.process import standby\n"
        "alone = standby.fork(lambda _: 0, orders=False)\n"
        "alone.wait()\n"
        "threading.Thread(target=time.sleep, args=(1,)).start()\n"
        "print(alone is not None, standby.fork(lambda _: 0) is None)\n")
    assert isolated(program).split() == ["True", "True"]


@forks_here
def test_a_forked_child_holds_no_descriptor_of_its_parent_but_its_orders(
        tmp_path: Path) -> None:
    listing = tmp_path / "descriptors"
    program = (
        "import os, sys\n"
        "from sparring.process import standby\n"
        "kept = os.open(os.devnull, os.O_RDONLY)\n"
        "os.set_inheritable(kept, True)\n"
        "def work(orders):\n"
        "    assert standby.read_orders(orders) == b'go'\n"
        f"    names = os.listdir('/proc/self/fd' if os.path.isdir('/proc/self/fd') else "
        "'/dev/fd')\n"
        f"    open({str(listing)!r}, 'w').write(' '.join(sorted(names)))\n"
        "    return 0\n"
        "child = standby.fork(work)\n"
        "assert child.order(b'go')\n"
        "print(child.wait())\n")
    assert isolated(program).strip() == "0"
    # 0, 1, 2, and the one the listing itself opened: not `kept`, not the parent's pipes
    assert len(listing.read_text().split()) == 4, listing.read_text()


def codexes(repo: Path) -> list[int]:
    """Live processes of the fake codex working in `repo` (exec ... -C REPO)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if "exec" in cmdline and str(repo) in cmdline and alive(proc.pid):
            found.append(proc.pid)
    return found


@forks_here
def test_codex_started_early_gets_its_whole_prompt_only_after_the_snapshot(
        fake_codex: Any, repo: Path, scratch: Path) -> None:
    """Round one of think-about as its SKILL.md starts it: codex is started before its turn
    is handed to the runner (the early way: its output goes to a folder of its own until
    then), while the template is rendered and the turn written, and it is given the prompt
    (whole) only once the guard's baseline of the tree is on disk. (Which of codex's start
    and the turn's writing comes first is a race between two processes, not asserted.)"""
    fake_codex.mode("ok")
    sid = out_of(launcher(repo, "init", "--skill", "think-about"))["session"]
    (scratch / "round1.yaml").write_text("QUESTION: |\n  Redis or SQLite?\n")
    done = out_of(launcher(repo, "start", sid, "--template", "think-about/round1",
                           "--vars-file", str(scratch / "round1.yaml")))
    assert done["ok"], done
    out_of(launcher(repo, "wait", sid, "--timeout", "30"))
    call = next(c for c in fake_codex.calls() if "exec" in c["argv"])
    session = Session(repo / ".sparring" / "sessions" / sid)
    turn = session.load()["turns"][0]
    baseline = repo / ".sparring" / "sessions" / sid / "turns" / "1" / "guard-baseline.json"
    assert call["stdout_path"].startswith(f"{session.outputs}/.codex-early-"), \
        "codex started once handed over, writing out of the project"
    assert call["stdin_read_unix"] > baseline.stat().st_mtime, "the prompt came first"
    assert call["stdin_sha256"] == turn["prompt_sha256"], "not the whole prompt"
    assert not list(Path(session.outputs).glob(".codex-early-*"))
    assert Path(session.output(1, "events.jsonl")).is_file()
    assert not list(repo.rglob("events.jsonl")), "nothing codex printed lies in the project"


@forks_here
def test_a_killed_starts_early_folder_is_removed_by_the_next_start(
        fake_codex: Any, repo: Path, scratch: Path) -> None:
    """A `start` killed between making its early codex's folder and handing it to a turn
    left the folder behind (its codex died with it): the next early start of the session
    removes it; a folder whose runner still runs is left alone."""
    sid = out_of(launcher(repo, "init", "--skill", "deep-discussion"))["session"]
    outputs = Path(Session(repo / ".sparring" / "sessions" / sid).outputs)
    outputs.mkdir(parents=True, exist_ok=True)
    dead = subprocess.Popen(["true"])  # a pid that has ended
    dead.wait()
    left = outputs / f".codex-early-{dead.pid}-abcd1234"
    live = outputs / f".codex-early-{os.getpid()}-efgh5678"
    for folder in (left, live):
        folder.mkdir()
        (folder / "events.jsonl").write_text("")
    fake_codex.mode("ok")
    (scratch / "q.md").write_text("Redis or SQLite?\n")
    assert out_of(launcher(repo, "start", sid, "--prompt-file", str(scratch / "q.md")))["ok"]
    out_of(launcher(repo, "wait", sid, "--timeout", "30"))
    assert not left.exists() and live.is_dir()


def test_a_start_whose_prompt_cannot_be_made_ends_the_codex_started_for_it(
        fake_codex: Any, repo: Path, scratch: Path) -> None:
    """codex started while the template was rendered; the template lacks a variable: start
    fails, and that codex, which never got a prompt, is ended before start returns."""
    fake_codex.mode("ok")
    sid = out_of(launcher(repo, "init", "--skill", "think-about"))["session"]
    (scratch / "round1.yaml").write_text("NOT_A_VARIABLE: x\n")
    done = out_of(launcher(repo, "start", sid, "--template", "think-about/round1",
                           "--vars-file", str(scratch / "round1.yaml")))
    assert done["error"]["code"] == "template_missing_var", done
    assert codexes(repo) == [] and naming(sid) == []
    assert [call["stdin_read"] for call in fake_codex.calls()] in ([], [False])
    assert not list((repo / ".sparring" / "sessions" / sid).glob(".codex-early-*"))
    assert turn_of_or_none(repo, sid) is None, "no turn was written"


def turn_of_or_none(repo: Path, sid: str) -> dict[str, Any] | None:
    turns: list[dict[str, Any]] = Session(
        repo / ".sparring" / "sessions" / sid).load()["turns"]
    return turns[-1] if turns else None


def test_codex_never_starts_early_on_a_command_line_sparring_did_not_build(
        session: str, fake_codex: Any, repo: Path) -> None:
    """The gate every codex passes (a `-c` override could have codex start a program as it
    starts, before any prompt) is passed by the codex started early too."""
    from sparring.store.sessions import resolve
    from sparring.turn.early import Early

    fake_codex.mode("ok")
    forged = ["codex", "exec", "--json", "-c", "mcp_servers.x.command=touch", "-s",
              "read-only", "-C", str(repo), "-"]
    started = Early.start(resolve(session, repo), {"argv": forged, "cwd": str(repo),
                                                   "root": str(repo), "mark": "m"})
    assert started is None and codexes(repo) == [] and fake_codex.calls() == []


def test_a_folder_like_an_early_codexs_planted_in_the_session_is_a_change(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    """A codex started early writes beside the session's turn outputs, out of the project:
    sparring makes nothing of the kind in the session's folder, so such a folder appearing
    there during a turn is a change to its records, which the turn's guard names."""
    fake_codex.mode("slow", delay="1")
    assert sparring("start", session, input=b"q").exit_code == 0
    early = repo / ".sparring" / "sessions" / session / ".codex-early-abc123"
    early.mkdir()
    (early / "events.jsonl").write_text("")
    waited = sparring("wait", session, "--timeout", "30").out
    assert waited["status"] == "completed" and waited["guard"]["clean"] is False, waited
    assert f".sparring/sessions/{session}/.codex-early-abc123/events.jsonl" in [
        c["path"] for c in waited["guard"]["changed"]]


@pytest.mark.parametrize("started", ["anew", "early"])
def test_a_link_put_in_place_of_the_prompt_never_reaches_codex(
        session: str, fake_codex: Any, repo: Path, tmp_path: Path, started: str) -> None:
    """The turn's folder is in the project, within reach of a workspace-write Codex (of
    another session too): a link put in place of the prompt, between the turn being written
    and codex starting, would hand codex, and its model, any file the user can read. The
    turn fails instead, and the file behind the link is never read to codex."""
    import shutil

    from sparring import config
    from sparring.store.sessions import find_turn, resolve
    from sparring.turn import runner, turns
    from sparring.turn.early import Early

    fake_codex.mode("ok")
    secret = tmp_path / "secret.txt"
    secret.write_text("a key the model must never see\n")
    found = resolve(session, repo)
    settings = config.resolve_turn({}, config.load(repo))
    with found.update() as data:
        argv = turns.codex_argv(str(shutil.which("codex")), data, settings, thread_id=None,
                                schema=None)
        n = turns.new_turn(found, data, round_no=1, purpose="round", settings=settings,
                           prompt=b"q", argv=argv, thread_id=None)["n"]
    early = Early.start(found, {"argv": argv, "cwd": str(repo), "root": str(repo),
                                "mark": KeeperStub.mark}) if started == "early" else None
    prompt = Path(found.turn_path(n, turns.PROMPT))
    prompt.unlink()
    prompt.symlink_to(secret)

    assert runner._spawn_codex(found, n, KeeperStub(), runner.Stop(), early) is None
    turn = find_turn(found.load(), n)
    assert turn["status"] == "failed" and turn["error"]["code"] == "path_is_link", turn
    assert codexes(repo) == []
    assert all(not call["stdin_read"] for call in fake_codex.calls())
