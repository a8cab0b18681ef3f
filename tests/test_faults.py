"""Every fault a user can meet: one JSON error with a code and a hint, nothing lost,
no process left behind (the autouse `no_orphans` fixture checks the last part)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparring.store.sessions import Session
from support.barepath import BARE_PATH
from support.processes import alive, wait_for


def events_of(repo: Path, sid: str) -> bytes:
    """What codex printed so far in the session's first turn (out of the project)."""
    path = Path(Session(repo / ".sparring" / "sessions" / sid).output(1, "events.jsonl"))
    return path.read_bytes() if path.exists() else b""


def session_data(repo: Path, sid: str) -> dict[str, Any]:
    return Session(repo / ".sparring" / "sessions" / sid).load()


def test_missing_codex_gives_the_install_hint(sparring: Any, session: str,
                                              monkeypatch: Any) -> None:
    monkeypatch.setenv("PATH", BARE_PATH)
    result = sparring("start", session, input=b"q")
    assert result.exit_code == 1
    assert result.error_code == "codex_not_found"
    assert "npm install -g @openai/codex" in result.out["error"]["hint"]
    assert "SPARRING_CODEX" in result.out["error"]["hint"]


def test_sparring_codex_pointing_nowhere_is_named(sparring: Any, session: str,
                                                  monkeypatch: Any) -> None:
    monkeypatch.setenv("SPARRING_CODEX", "/nowhere/codex")
    result = sparring("start", session, input=b"q")
    assert result.error_code == "codex_not_found"
    assert "/nowhere/codex" in result.out["error"]["message"]


def test_sparring_codex_is_used(sparring: Any, session: str, fake_codex: Any,
                                monkeypatch: Any, tmp_path: Path) -> None:
    link = tmp_path / "bin" / "my-codex"
    link.parent.mkdir()
    link.symlink_to(Path(__file__).parent / "support" / "bin" / "codex")
    monkeypatch.setenv("PATH", BARE_PATH)
    monkeypatch.setenv("SPARRING_CODEX", str(link))
    fake_codex.mode("ok")
    assert sparring("start", session, input=b"q").exit_code == 0
    assert sparring("wait", session).out["status"] == "completed"


def test_rejected_flag_is_a_failed_start_with_stderr(sparring: Any, session: str,
                                                     fake_codex: Any, repo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARRING_STARTSECS", "10")  # codex exits at once, however busy
    fake_codex.mode("usage_error")
    result = sparring("start", session, input=b"q")
    assert result.exit_code == 1
    assert result.error_code == "codex_usage_error"
    assert "unexpected argument '--approval-policy'" in result.out["error"]["stderr_tail"]
    assert "sparring doctor" in result.out["error"]["hint"]
    polled = sparring("poll", session).out
    assert polled["status"] == "failed" and polled["error"]["code"] == "codex_usage_error"
    assert polled["recoverable"] is False


def test_codex_dying_at_once_is_not_reported_running(sparring: Any, session: str,
                                                     fake_codex: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # The start window must outlast a busy machine's start of the fake codex, which dies
    # at once: what is tested is that start reports that death, not how fast Python starts.
    monkeypatch.setenv("SPARRING_STARTSECS", "10")
    fake_codex.mode("die_early", stderr="Error: simulated broken config.toml")
    result = sparring("start", session, input=b"q")
    assert result.exit_code == 1
    assert result.error_code == "codex_start_failed"
    assert "simulated broken config.toml" in result.out["error"]["stderr_tail"]


def test_empty_prompt_is_refused_before_anything_runs(sparring: Any, session: str,
                                                      fake_codex: Any) -> None:
    result = sparring("start", session, input=b"  \n")
    assert result.error_code == "prompt_empty" and result.exit_code == 1
    assert fake_codex.turn_calls() == []
    missing = sparring("start", session, "--prompt-file", "no/such/prompt.md")
    assert missing.error_code == "file_not_found"


def test_hang_is_ended_by_stop_with_its_whole_tree(sparring: Any, session: str,
                                                  fake_codex: Any, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    fake_codex.mode("spawn_child", child_pidfile=str(pidfile))
    assert sparring("start", session, input=b"q").out["status"] == "running"
    wait_for(pidfile.exists)
    grandchild = int(pidfile.read_text())
    assert psutil.pid_exists(grandchild)
    stopped = sparring("stop", session)
    assert stopped.exit_code == 0 and stopped.out["status"] == "stopped"
    assert stopped.out["error"]["code"] == "turn_stopped"
    assert not alive(grandchild), "a grandchild in its own session survived stop"
    again = sparring("stop", session)
    assert again.exit_code == 0 and again.out["already_ended"] is True


def test_stop_escalates_to_kill_when_term_is_ignored(sparring: Any, session: str,
                                                     fake_codex: Any, repo: Path) -> None:
    fake_codex.mode("ignore_term")
    sparring("start", session, input=b"q")
    codex = session_data(repo, session)["turns"][0]["codex"]
    began = time.monotonic()
    assert sparring("stop", session).out["status"] == "stopped"
    assert not alive(codex["pid"])
    assert time.monotonic() - began < 15


def test_stall_is_detected_without_any_poll_and_recovered_once(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    fake_codex.script([{"mode": "hang"}, {"mode": "ok", "reply": "recovered answer"},
                       {"mode": "hang"}])
    sparring("start", session, "--stall-after", "1", input=b"the question")
    # Nobody polls: the background runner alone must notice the stall.
    wait_for(lambda: session_data(repo, session)["turns"][0]["status"] == "stalled", 15)
    out = sparring("poll", session, "--full").out
    assert out["status"] == "stalled" and out["error"]["code"] == "turn_stalled"
    assert out["recoverable"] is True and out["thread_id"]
    recovered = sparring("resume", session, "--recover")
    assert recovered.exit_code == 0, recovered.raw
    done = sparring("wait", session).out
    assert done["status"] == "completed" and done["round"] == 1
    assert done["purpose"] == "recovery"
    assert done["review"]["text"] == "recovered answer"
    assert fake_codex.stdin_of(-1) == b"the question"
    assert "resume" in fake_codex.turn_calls()[-1]["argv"]


def test_a_recovery_is_allowed_once(sparring: Any, session: str, fake_codex: Any) -> None:
    fake_codex.mode("hang")
    sparring("start", session, "--stall-after", "0.5", input=b"q")
    assert sparring("wait", session, "--timeout", "15").out["status"] == "stalled"
    sparring("resume", session, "--recover", "--stall-after", "0.5")
    second = sparring("wait", session, "--timeout", "15").out
    assert second["status"] == "stalled" and second["recoverable"] is False
    refused = sparring("resume", session, "--recover")
    assert refused.error_code == "recovery_exhausted"


def test_wall_clock_timeout_ends_a_busy_turn(sparring: Any, session: str,
                                             fake_codex: Any) -> None:
    fake_codex.mode("slow", delay="30", event_delay="0.2")
    sparring("start", session, "--timeout", "1.5", input=b"q")
    out = sparring("wait", session, "--timeout", "20").out
    assert out["status"] == "timeout" and out["error"]["code"] == "turn_timeout"
    assert "lower" in out["error"]["hint"]
    assert 1.4 < out["elapsed_s"] < 10


def test_crash_mid_turn_is_a_failure_with_stderr(sparring: Any, session: str,
                                                 fake_codex: Any) -> None:
    fake_codex.mode("crash", event_delay="0.3")
    sparring("start", session, input=b"q")
    out = sparring("wait", session).out
    assert out["status"] == "failed" and out["error"]["code"] == "codex_crashed"
    assert "signal 9" in out["error"]["message"]
    assert "panicked" in out["error"]["stderr_tail"]
    assert out["review"] is None


def test_rate_limit_is_a_failure_with_the_servers_reason(sparring: Any, session: str,
                                                         fake_codex: Any) -> None:
    fake_codex.mode("slow", delay="0.6")
    sparring("start", session, input=b"q")
    sparring("wait", session)
    fake_codex.mode("rate_limited")
    result = sparring("resume", session, input=b"again")
    out = result.out if result.exit_code == 0 else sparring("poll", session).out
    if out.get("status") == "running":  # codex failed after the start window (a loaded machine)
        out = sparring("wait", session, "--timeout", "30").out
    assert out["status"] == "failed"
    assert out["error"]["code"] == "rate_limited"
    assert "429" in out["error"]["message"]
    assert out["recoverable"] is True


def test_a_codex_that_only_reconnects_is_ended_as_network_unreachable(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    # As with no network: notices at 0.21 s, then every 0.3, 0.6, 1.2 s …; the stall limit
    # (10 s here) would never fire, and the turn timeout is 30 minutes at high effort.
    fake_codex.script([{"mode": "offline", "delay": 0.3}, {"mode": "ok", "reply": "back"}])
    began = time.monotonic()
    sparring("start", session, "--offline-after", "1.5", "--stall-after", "10", input=b"q")
    # Nobody polls: the background runner alone ends it.
    wait_for(lambda: session_data(repo, session)["turns"][0]["status"] == "failed", 15)
    out = sparring("poll", session, "--full").out

    assert out["error"]["code"] == "network_unreachable"
    assert "only reported reconnecting" in out["error"]["message"]
    assert "waiting for network (Connection failed" in out["error"]["message"]
    assert "network" in out["error"]["hint"] and "--recover" in out["error"]["hint"]
    assert out["recoverable"] is True and out["settings"]["offline_after"] == 1.5
    assert 1.5 < out["elapsed_s"] < 9.5, "ended by the offline limit, before the stall's 10 s"
    assert time.monotonic() - began < 15
    assert sparring("resume", session, "--recover").exit_code == 0
    assert sparring("wait", session).out["status"] == "completed"


def test_the_offline_limit_comes_from_the_environment_and_sparring_yaml(
        sparring: Any, session: str, fake_codex: Any, repo: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_codex.mode("offline", delay="0.3")
    (repo / "sparring.yaml").write_text("offline_after: 0.8\n")
    sparring("start", session, input=b"q")
    out = sparring("wait", session, "--timeout", "15", "--full").out
    assert out["error"]["code"] == "network_unreachable"
    assert out["settings"]["offline_after"] == 0.8 and "for 0.8 s" in out["error"]["message"]

    monkeypatch.setenv("SPARRING_OFFLINE_AFTER", "1.2")  # the environment wins over the file
    sparring("resume", session, "--recover")
    out = sparring("wait", session, "--timeout", "15", "--full").out
    assert out["error"]["code"] == "network_unreachable"
    assert out["settings"]["offline_after"] == 1.2


def test_a_partial_line_then_a_hang_still_stops_cleanly(sparring: Any, session: str,
                                                       fake_codex: Any) -> None:
    fake_codex.mode("partial_then_hang")
    sparring("start", session, "--stall-after", "1", input=b"q")
    out = sparring("wait", session, "--timeout", "15").out
    assert out["status"] == "stalled"
    assert out["malformed_lines"] == 1  # the half line codex never finished


def test_unknown_session(sparring: Any, repo: Path) -> None:
    for verb in ("poll", "wait", "stop", "finalize", "status"):
        result = sparring(verb, "think-about-19990101-000000-abcdef")
        assert result.exit_code == 1 and result.error_code == "session_not_found"
        assert "sparring status" in result.out["error"]["hint"]


def test_corrupt_state_is_reported_and_kept_byte_for_byte(sparring: Any, session: str,
                                                          repo: Path) -> None:
    path = repo / ".sparring" / "sessions" / session / "session.json"
    damaged = path.read_bytes()[:40]
    path.write_bytes(damaged)
    for verb in ("poll", "status", "finalize", "stop"):
        result = sparring(verb, session, input=b"q")
        assert result.exit_code == 1 and result.error_code == "state_corrupt", verb
        assert str(path) in result.out["error"]["message"]
    assert path.read_bytes() == damaged
    listing = sparring("status").out["sessions"]
    assert listing[0]["status"] == "unreadable"


def test_resume_refuses_while_running_and_before_start(sparring: Any, session: str,
                                                      fake_codex: Any) -> None:
    assert sparring("resume", session, input=b"q").error_code == "invalid_transition"
    assert sparring("poll", session).error_code == "invalid_transition"
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    assert sparring("resume", session, input=b"q").error_code == "session_busy"
    assert sparring("start", session, input=b"q").error_code == "invalid_transition"
    sparring("stop", session)


def test_runner_killed_mid_turn_poll_still_tells_the_truth(
        repo: Path, session: str, fake_codex: Any, sparring: Any) -> None:
    fake_codex.mode("slow", delay="5")
    sparring("start", session, input=b"q")
    wait_for(lambda: session_data(repo, session)["turns"][0]["codex"] is not None)
    turn = session_data(repo, session)["turns"][0]
    # What the test means: killed after codex began its thread and reasoned (codex, a new
    # Python, may not have printed a line yet when start returns on a busy machine).
    wait_for(lambda: b'"reasoning"' in events_of(repo, session), timeout=30)
    os.kill(turn["runner"]["pid"], signal.SIGKILL)
    # codex dies with its runner (it never runs on unsupervised) ...
    wait_for(lambda: not alive(turn["codex"]["pid"]))
    # ... and poll records the truth from disk: what codex did, and that it did not finish.
    out = sparring("poll", session, "--full").out
    assert out["status"] == "failed" and out["error"]["code"] == "runner_died"
    assert out["recoverable"] is True and out["thread_id"]
    assert any(a["kind"] == "reasoning" for a in out["activities"])


def test_runner_and_codex_killed_is_reported_not_hidden(
        repo: Path, session: str, fake_codex: Any, sparring: Any) -> None:
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    turn = session_data(repo, session)["turns"][0]
    wait_for(lambda: b'"thread.started"' in events_of(repo, session), timeout=30)
    os.kill(turn["runner"]["pid"], signal.SIGKILL)
    # The runner's watchdog may end codex's group first (it sees its runner die at once on
    # Linux; on a busy machine the portable one's poll can come before this line too).
    with contextlib.suppress(ProcessLookupError):
        os.killpg(turn["codex"]["pid"], signal.SIGKILL)
    # Both dead, as the test means: a SIGKILL is delivered, not awaited, and on a busy
    # machine codex (killed directly) can be gone while its runner is still exiting.
    wait_for(lambda: not alive(turn["codex"]["pid"]) and not alive(turn["runner"]["pid"]))
    listing = sparring("status").out["sessions"]  # the list repairs too, before any poll
    assert [row["status"] for row in listing] == ["failed"]
    out = sparring("poll", session, "--full").out
    assert out["status"] == "failed" and out["error"]["code"] == "runner_died"
    assert out["recoverable"] is True


def test_codex_that_ignores_term_does_not_outlive_a_runner_killed_with_kill_9(
        repo: Path, session: str, fake_codex: Any, sparring: Any) -> None:
    fake_codex.mode("ignore_term")  # survives the SIGTERM it gets when its runner dies
    sparring("start", session, "--timeout", "600", input=b"q")
    turn = session_data(repo, session)["turns"][0]
    os.kill(turn["runner"]["pid"], signal.SIGKILL)
    # Nobody polls: the runner's watchdog alone ends codex, TERM then KILL.
    wait_for(lambda: not alive(turn["codex"]["pid"]), timeout=10)
    out = sparring("wait", session, "--timeout", "15").out
    assert out["status"] == "failed" and out["error"]["code"] == "runner_died"


def test_twenty_sessions_at_once(repo: Path, fake_codex: Any, sparring: Any) -> None:
    """Twenty `start`s at once, each its own process, isolated as the skills' launcher runs it;
    what comes before and after them runs in this one (it is not what is tested, and forty
    more Pythons would only add time)."""
    fake_codex.mode("slow", delay="1")
    cli = [sys.executable, "-I", "-m", "sparring"]
    ids = [sparring("init", "--skill", "deep-discussion").out["session"] for _ in range(20)]
    starts = [subprocess.Popen([*cli, "start", sid], cwd=repo, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE) for sid in ids]
    # Every question handed in before any start is waited for: one `communicate` at a time
    # held each start at its stdin until the one before it had ended (twenty in a row).
    for i, proc in enumerate(starts):
        assert proc.stdin is not None
        proc.stdin.write(f"question {i}".encode())
        proc.stdin.close()
    for proc in starts:
        assert proc.wait(timeout=120) == 0
        assert proc.stdout is not None
        assert json.loads(proc.stdout.read())["ok"] is True
        proc.stdout.close()
    results = [sparring("wait", sid, "--timeout", "60", "--full").out for sid in ids]
    assert [r["status"] for r in results] == ["completed"] * 20
    assert len({r["thread_id"] for r in results}) == 20
    prompts = sorted(c["prompt"] for c in fake_codex.turn_calls())
    assert prompts == sorted(f"question {i}" for i in range(20))


def test_what_codex_leaves_in_its_process_group_is_ended(
        repo: Path, session: str, sparring: Any, monkeypatch: Any, tmp_path: Path) -> None:
    pidfile = tmp_path / "leftover.pid"
    leaky = tmp_path / "leaky-codex"
    leaky.write_text(
        '#!/bin/sh\n[ "$1" = --version ] && { echo "codex-cli 0.169.0"; exit 0; }\n'
        "cat >/dev/null\n"
        f"sleep 300 & echo $! > {pidfile}\n"
        'echo \'{"type":"thread.started","thread_id":"t-1"}\'\n'
        'echo \'{"type":"item.completed","item":{"id":"item_0","type":"agent_message",'
        '"text":"done"}}\'\n'
        'echo \'{"type":"turn.completed","usage":{}}\'\n')
    leaky.chmod(0o755)
    monkeypatch.setenv("SPARRING_CODEX", str(leaky))
    sparring("start", session, input=b"q")
    assert sparring("wait", session).out["status"] == "completed"
    wait_for(pidfile.exists)
    wait_for(lambda: not alive(int(pidfile.read_text())))


def test_stop_and_finalize_are_safe_before_anything_ran(sparring: Any, session: str) -> None:
    stopped = sparring("stop", session)
    assert stopped.exit_code == 0 and stopped.out["already_ended"] is True
    assert stopped.out["status"] == "new"
    assert sparring("finalize", session).exit_code == 0


def test_a_failures_hint_is_a_command_to_run_as_printed(sparring: Any, session: str,
                                                       fake_codex: Any) -> None:
    fake_codex.mode("slow", delay="0.6")
    sparring("start", session, input=b"q")
    sparring("wait", session)
    fake_codex.mode("rate_limited")
    sparring("resume", session, input=b"again")
    out = sparring("wait", session).out  # the failure, however long a busy machine takes
    assert out["error"]["code"] == "rate_limited"
    hint = out["error"]["hint"]
    assert f"`sparring resume {session} --recover`" in hint, hint

    fake_codex.mode("ok", reply="recovered")
    command = hint.split("`")[1].split()[1:]
    assert sparring(*command).exit_code == 0
    assert sparring("wait", session).out["review"]["text"] == "recovered"


def test_a_process_that_detached_from_codex_is_ended_at_turn_end(
        sparring: Any, session: str, fake_codex: Any, tmp_path: Path) -> None:
    """Issue 11, case 9: setsid and a double fork take a process out of codex's group and
    parentage; the runner is a child subreaper, adopts it, and ends it with the turn."""
    pidfile = tmp_path / "detached.pid"
    fake_codex.mode("detach", detach_pidfile=str(pidfile))
    sparring("start", session, input=b"q")
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"
    detached = int(pidfile.read_text())
    wait_for(lambda: not alive(detached), timeout=5)
    assert not psutil.pid_exists(detached) or not alive(detached)


def test_a_process_that_detached_from_codex_is_ended_by_stop(
        sparring: Any, session: str, fake_codex: Any, tmp_path: Path, repo: Path) -> None:
    pidfile = tmp_path / "detached.pid"
    fake_codex.mode("detach_hang", detach_pidfile=str(pidfile))
    assert sparring("start", session, input=b"q").out["status"] == "running"
    wait_for(pidfile.exists)
    detached = int(pidfile.read_text())
    codex = session_data(repo, session)["turns"][0]["codex"]["pid"]
    # It really left: neither codex's child, nor in codex's session or group.
    assert psutil.Process(detached).ppid() != codex
    assert codex not in (os.getsid(detached), os.getpgid(detached))
    assert sparring("stop", session).out["status"] == "stopped"
    assert not alive(detached), "a detached process survived stop"
