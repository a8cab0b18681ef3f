"""The loopback mocks drive the real Codex CLI and Claude Code.

Every child runs in its own process group under a hard timeout (see
support.processes), with a fresh CODEX_HOME / HOME under tmp_path, and talks only
to 127.0.0.1.
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from support import messages_mock as mm
from support import responses_mock as rm
from support.messages_mock import MessagesMock
from support.processes import (
    Finished,
    kill_group,
    parse_json_lines,
    run_bounded,
    spawn,
    wait_group_gone,
)
from support.responses_mock import ResponsesMock, Usage

pytestmark = pytest.mark.integration

RUN_TIMEOUT_S = 30.0
HANG_KILL_AFTER_S = 2.0
DEMO_DESCRIPTION = "Demo skill for the mock test (MARKER-DEMO-DESC)."


# -- helpers ------------------------------------------------------------------------


def _codex_exec(codex: Path, *args: str) -> list[str | Path]:
    """`codex exec <args> --json --skip-git-repo-check -` (prompt on stdin)."""
    return [codex, "exec", *args, "--json", "--skip-git-repo-check", "-"]


def _prompt_file(tmp_path: Path, text: str, name: str = "prompt.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _events(run: Finished, kind: str) -> list[dict[str, Any]]:
    return [e for e in run.json_lines() if e.get("type") == kind]


def _agent_messages(run: Finished) -> list[str]:
    items = [e["item"] for e in _events(run, "item.completed")]
    return [i["text"] for i in items if i.get("type") == "agent_message"]


def _thread_id(run: Finished) -> str:
    return str(_events(run, "thread.started")[0]["thread_id"])


def _turn_usage(run: Finished) -> dict[str, int]:
    completed = _events(run, "turn.completed")
    assert completed, f"no turn.completed in:\n{run.stdout}\nstderr:\n{run.stderr}"
    return dict(completed[-1]["usage"])


def _summed(*usages: Usage) -> dict[str, int]:
    total: dict[str, int] = {}
    for usage in usages:
        for key, value in usage.as_codex_usage().items():
            total[key] = total.get(key, 0) + value
    return total


def _assert_ok(run: Finished) -> None:
    assert not run.timed_out, f"timed out after {run.seconds:.1f}s: {run.args}"
    assert run.returncode == 0, f"rc={run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"


def _claude_print(claude: Path, prompt: str) -> list[str | Path]:
    return [claude, "-p", prompt, "--output-format", "stream-json", "--verbose"]


def _result_event(run: Finished) -> dict[str, Any]:
    results = _events(run, "result")
    assert len(results) == 1, f"expected one result event:\n{run.stdout}\nstderr:\n{run.stderr}"
    return results[0]


def _write_demo_skill(project: Path) -> Path:
    skill_dir = project / ".claude" / "skills" / "demo-skill"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(
        "---\n"
        "name: demo-skill\n"
        f"description: {DEMO_DESCRIPTION}\n"
        "---\n\n"
        "# Demo skill\n\n"
        "Args: $ARGUMENTS\n"
        "Dir: ${CLAUDE_SKILL_DIR}\n",
        encoding="utf-8",
    )
    return skill_dir


# -- Codex CLI against ResponsesMock ----------------------------------------------------


def test_codex_exec_text_reply(
    codex_bin: Path,
    responses_mock: ResponsesMock,
    codex_env: dict[str, str],
    workdir: Path,
    tmp_path: Path,
) -> None:
    usage = Usage(input_tokens=123, output_tokens=9)
    responses_mock.script(rm.text("hello from mock", usage=usage))

    run = run_bounded(
        _codex_exec(codex_bin, "-s", "read-only"),
        env=codex_env,
        cwd=workdir,
        stdin=_prompt_file(tmp_path, "say hi"),
        timeout=RUN_TIMEOUT_S,
    )

    _assert_ok(run)
    assert _thread_id(run)
    assert _agent_messages(run) == ["hello from mock"]
    assert _turn_usage(run) == usage.as_codex_usage()
    [request] = responses_mock.responses_requests()
    assert rm.last_user_text(request) == "say hi"
    assert request.header("authorization") == "Bearer dummy"


def test_codex_resume_keeps_thread_and_accumulates_usage(
    codex_bin: Path,
    responses_mock: ResponsesMock,
    codex_env: dict[str, str],
    workdir: Path,
    tmp_path: Path,
) -> None:
    first_usage, second_usage = Usage(100, 10), Usage(200, 20)
    responses_mock.script(
        rm.text("first answer", usage=first_usage),
        rm.text(lambda req: f"echo: {rm.last_user_text(req)}", usage=second_usage),
    )

    first = run_bounded(
        _codex_exec(codex_bin, "-s", "read-only"),
        env=codex_env,
        cwd=workdir,
        stdin=_prompt_file(tmp_path, "first question", "p1.txt"),
        timeout=RUN_TIMEOUT_S,
    )
    _assert_ok(first)
    thread_id = _thread_id(first)
    second = run_bounded(
        _codex_exec(codex_bin, "-s", "read-only", "resume", thread_id),
        env=codex_env,
        cwd=workdir,
        stdin=_prompt_file(tmp_path, "second question", "p2.txt"),
        timeout=RUN_TIMEOUT_S,
    )

    _assert_ok(second)
    assert _thread_id(second) == thread_id
    assert _agent_messages(second) == ["echo: second question"]
    assert _turn_usage(second) == _summed(first_usage, second_usage)
    _, resumed = responses_mock.responses_requests()
    assert rm.messages(resumed, "user")[-2:] == ["first question", "second question"]
    assert rm.messages(resumed, "assistant") == ["first answer"]


def test_codex_shell_call_runs_and_gets_plain_text_after_output(
    codex_bin: Path,
    responses_mock: ResponsesMock,
    codex_env: dict[str, str],
    workdir: Path,
    tmp_path: Path,
) -> None:
    responses_mock.script(rm.shell_call("echo MOCK-SHELL-OK"))
    responses_mock.default = rm.hang()  # the follow-up must not fall through to the default

    run = run_bounded(
        _codex_exec(codex_bin, "-s", "read-only"),
        env=codex_env,
        cwd=workdir,
        stdin=_prompt_file(tmp_path, "run the command"),
        timeout=RUN_TIMEOUT_S,
    )

    _assert_ok(run)
    [command] = [
        e["item"]
        for e in _events(run, "item.completed")
        if e["item"]["type"] == "command_execution"
    ]
    assert command["aggregated_output"] == "MOCK-SHELL-OK\n"
    assert command["exit_code"] == 0
    assert _agent_messages(run) == [rm.TOOL_FOLLOWUP_REPLY]
    _, followup = responses_mock.responses_requests()
    output = rm.input_items(followup)[-1]
    assert output["type"] == "function_call_output"
    assert "MOCK-SHELL-OK" in output["output"]


def test_codex_429_without_retry_after_fails_the_turn(
    codex_bin: Path,
    responses_mock: ResponsesMock,
    codex_env: dict[str, str],
    workdir: Path,
    tmp_path: Path,
) -> None:
    responses_mock.script(rm.status(429, rm.RATE_LIMIT_BODY))

    run = run_bounded(
        _codex_exec(codex_bin, "-s", "read-only"),
        env=codex_env,
        cwd=workdir,
        stdin=_prompt_file(tmp_path, "hi"),
        timeout=RUN_TIMEOUT_S,
    )

    assert not run.timed_out
    assert run.returncode == 1
    [failed] = _events(run, "turn.failed")
    assert "429" in failed["error"]["message"]
    assert len(responses_mock.responses_requests()) == 1


def test_codex_stall_fails_after_the_idle_timeout(
    codex_bin: Path,
    responses_mock: ResponsesMock,
    codex_env: dict[str, str],
    codex_home: Path,
    workdir: Path,
    tmp_path: Path,
) -> None:
    responses_mock.codex_home(codex_home, stream_idle_timeout_ms=1000)
    responses_mock.script(rm.stall())

    run = run_bounded(
        _codex_exec(codex_bin, "-s", "read-only"),
        env=codex_env,
        cwd=workdir,
        stdin=_prompt_file(tmp_path, "hi"),
        timeout=RUN_TIMEOUT_S,
    )

    assert not run.timed_out
    assert run.returncode == 1
    [failed] = _events(run, "turn.failed")
    assert "idle timeout" in failed["error"]["message"]


def test_codex_hang_is_ended_by_killing_the_process_group(
    codex_bin: Path,
    responses_mock: ResponsesMock,
    codex_env: dict[str, str],
    workdir: Path,
    tmp_path: Path,
) -> None:
    responses_mock.script(rm.hang())
    started = time.monotonic()
    proc = spawn(
        _codex_exec(codex_bin, "-s", "read-only"),
        env=codex_env,
        cwd=workdir,
        stdin=_prompt_file(tmp_path, "hi"),
    )
    try:
        assert responses_mock.wait_for_requests(1, RUN_TIMEOUT_S, path=rm.RESPONSES_PATH)
        time.sleep(max(0.0, HANG_KILL_AFTER_S - (time.monotonic() - started)))
        assert proc.poll() is None, "codex should still be waiting on the hung request"
    finally:
        stdout, _ = kill_group(proc)

    assert wait_group_gone(proc.pid) == []
    kinds = [e["type"] for e in parse_json_lines(stdout)]
    assert kinds[0] == "thread.started"
    assert "turn.started" in kinds
    assert not {"turn.completed", "turn.failed"} & set(kinds)
    assert len(responses_mock.responses_requests()) == 1


# -- Claude Code against MessagesMock -------------------------------------------------


def test_claude_print_text_reply(
    claude_each: Path,
    messages_mock: MessagesMock,
    claude_env: dict[str, str],
    workdir: Path,
) -> None:
    messages_mock.script(mm.text("hello from messages mock"))

    run = run_bounded(
        _claude_print(claude_each, "hello"),
        env=claude_env,
        cwd=workdir,
        timeout=RUN_TIMEOUT_S,
    )

    _assert_ok(run)
    result = _result_event(run)
    assert result["is_error"] is False
    assert result["result"] == "hello from messages mock"
    requests = messages_mock.messages_requests()
    assert len(requests) >= 1
    assert requests[0].body["stream"] is True
    assert "hello" in mm.first_message_texts(requests[0])


def test_claude_project_skill_expands_and_bash_tool_use_runs(
    claude_each: Path,
    messages_mock: MessagesMock,
    claude_env: dict[str, str],
    tmp_path: Path,
) -> None:
    project = (tmp_path / "project").resolve()
    skill_dir = _write_demo_skill(project)
    messages_mock.script(mm.bash("echo MOCK-BASH-OK"))

    run = run_bounded(
        _claude_print(claude_each, "/demo-skill some args"),
        env=claude_env,
        cwd=project,
        timeout=RUN_TIMEOUT_S,
    )

    _assert_ok(run)
    first, *_, last = messages_mock.messages_requests()
    assert f"- demo-skill: {DEMO_DESCRIPTION}" in mm.skill_listing(first)
    expansion = "\n".join(mm.first_message_texts(first))
    assert "<command-name>/demo-skill</command-name>" in expansion
    assert f"Base directory for this skill: {skill_dir}" in expansion
    assert "<command-args>some args</command-args>" in expansion
    assert "Args: some args" in expansion
    assert f"Dir: {skill_dir}" in expansion
    [tool_result] = mm.last_user_tool_results(last)
    assert mm.tool_result_text(tool_result).strip() == "MOCK-BASH-OK"
    assert tool_result.get("is_error") is False
    assert _result_event(run)["result"] == f"{mm.TOOL_RESULT_PREFIX}MOCK-BASH-OK"


# -- the mocks themselves ---------------------------------------------------------------


def test_stop_releases_a_connection_parked_in_a_hang() -> None:
    mock = ResponsesMock(default=rm.hang()).start()
    client = socket.create_connection(("127.0.0.1", mock.port), timeout=10)
    try:
        client.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        assert mock.wait_for_requests(1, 5)
        started = time.monotonic()
        mock.stop()
        assert time.monotonic() - started < 2.0
        assert client.recv(1024) == b""  # closed without a status line
    finally:
        client.close()
    assert mock.open_connections == 0


def test_messages_mock_answers_404_outside_post_messages() -> None:
    with MessagesMock() as mock:
        for method in ("HEAD", "GET"):
            request = urllib.request.Request(f"{mock.base_url}/api/hello", method=method)
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(request, timeout=5)
            assert info.value.code == 404
        assert [r.method for r in mock.requests] == ["HEAD", "GET"]


# -- the fake codex beside the real one ---------------------------------------------------------


@pytest.mark.parametrize("argv", [["--version"], ["exec", "--version"], ["--help"],
                                  ["exec", "--help"], ["exec", "resume", "--help"]])
def test_the_fake_codex_says_what_the_pinned_codex_says(
        argv: list[str], codex_bin: Path, tmp_path: Path) -> None:
    """The unit tests drive a fake codex that models the real one's surface: its version and
    its help, option for option, are the pinned binary's (a new pin that adds an option
    fails here until its help is recorded again, support/codex_streams.py, and the fake,
    which reads its options from that help, takes it)."""
    import os
    import subprocess
    import sys

    fake = Path(__file__).resolve().parents[1] / "support" / "bin" / "codex"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path),
           "FAKE_CODEX_PYTHON": sys.executable}
    said = [subprocess.run([str(binary), *argv], capture_output=True, text=True, env=env,
                           timeout=60) for binary in (codex_bin, fake)]
    real, ours = said
    assert real.returncode == 0, real.stderr
    assert (ours.returncode, ours.stdout) == (0, real.stdout)
