"""Tests for the fake `codex` (tests/support/fake_codex.py) against the reference (0.169.0,
its help and version 0.171.0: the pin)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from support import codex_streams
from support.fake_codex import parse_config_value, read_calls, to_json

SUPPORT = Path(__file__).resolve().parent / "support"
FAKE = SUPPORT / "bin" / "codex"
THREAD_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
HIGH_DEMAND = "We’re currently experiencing high demand, which may cause temporary errors."
EXEC_USAGE = "Usage: codex exec [OPTIONS] [PROMPT]\n       codex exec [OPTIONS] <COMMAND> [ARGS]\n"
RESUME_USAGE = "Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]\n"
MORE = "\nFor more information, try '--help'.\n"
RECORDED = {name: [json.loads(line) for line in codex_streams.load(name)["events"]]
            for name in ("answer", "command", "failed_command")}
TURN_USAGE = RECORDED["answer"][-1]["usage"]  # what a turn adds to its thread's, as recorded
APPROVAL_POLICY_ERROR = (
    "error: unexpected argument '--approval-policy' found\n\n"
    "  tip: a similar argument exists: '--approve-for-me'\n\n" + EXEC_USAGE + MORE
)


@dataclass
class Result:
    code: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout.decode()

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.splitlines()]

    @property
    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def items(self, kind: str = "item.completed") -> list[dict[str, Any]]:
        return [e["item"] for e in self.events if e["type"] == kind]


class Fake:
    """Runs the fake with a private CODEX_HOME, log dir and git-repo work dir under tmp_path."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.home = tmp_path / "codex-home"
        self.log = tmp_path / "log"
        self.cwd = tmp_path / "work"
        (self.cwd / ".git").mkdir(parents=True)
        keep = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
        self.env = {k: v for k, v in os.environ.items() if k in keep}
        self.env.update(
            HOME=str(tmp_path), CODEX_HOME=str(self.home), FAKE_CODEX_LOG_DIR=str(self.log)
        )

    def command(self, args: tuple[str, ...]) -> list[str]:
        return [sys.executable, str(FAKE), *args]

    def environ(self, extra: dict[str, str] | None) -> dict[str, str]:
        return {**self.env, **(extra or {})}

    def run(
        self,
        *args: str,
        stdin: bytes = b"",
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Result:
        done = subprocess.run(
            self.command(args),
            input=stdin,
            capture_output=True,
            env=self.environ(env),
            cwd=cwd or self.cwd,
            timeout=30,
        )
        return Result(done.returncode, done.stdout, done.stderr.decode())

    def ok(self, *args: str, **kw: Any) -> Result:
        result = self.run(*args, **kw)
        assert result.code == 0, result.stderr
        return result

    @contextmanager
    def popen(self, *args: str, env: dict[str, str] | None = None) -> Iterator[Running]:
        proc = subprocess.Popen(
            self.command(args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.environ(env),
            cwd=self.cwd,
            start_new_session=True,
        )
        try:
            yield Running(proc)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.close()
            proc.stderr.close()

    def calls(self) -> list[dict[str, Any]]:
        return read_calls(self.log)

    def first_call_once(self, ready: Any, timeout: float = 30.0) -> dict[str, Any]:
        """The first call's log once `ready(log)` holds: a fake just started is a new Python,
        which on a busy machine may not have written (or finished writing) it yet."""
        deadline = time.monotonic() + timeout
        while True:
            with suppress(json.JSONDecodeError):  # being written
                calls = self.calls()
                if calls and ready(calls[0]):
                    return calls[0]
            assert time.monotonic() < deadline, f"no such call log in {timeout} s"
            time.sleep(0.02)

    def rollouts(self) -> list[Path]:
        return sorted(self.home.glob("sessions/*/*/*/rollout-*.jsonl"))


class Running:
    """A fake started with Popen; reads stdout with deadlines so a test never blocks."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.buffer = b""

    def read_until(self, predicate: Any, timeout: float = 5.0) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while not predicate(self.buffer):
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"timed out; got {self.buffer!r}"
                if sel.select(remaining):
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    self.buffer += chunk
        return self.buffer

    def lines(self, count: int) -> list[dict[str, Any]]:
        data = self.read_until(lambda b: b.count(b"\n") >= count)
        return [json.loads(line) for line in data.splitlines()[:count]]

    def wait(self, timeout: float = 5.0) -> int:
        return self.proc.wait(timeout=timeout)

    def alive_after(self, seconds: float) -> bool:
        try:
            self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return True
        return False


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path)


def exec_json(*args: str) -> tuple[str, ...]:
    return ("exec", "--json", *args)


# --------------------------------------------------------------------------------------------
# Version, help, usage errors
# --------------------------------------------------------------------------------------------


def test_version_and_override(fake: Fake) -> None:
    assert fake.ok("--version").text == "codex-cli 0.171.0\n"
    assert fake.ok("-V").text == "codex-cli 0.171.0\n"
    assert fake.ok("exec", "--version").text == "codex-cli-exec 0.171.0\n"
    assert fake.ok("--version", env={"FAKE_CODEX_VERSION": "0.170.1"}).text == "codex-cli 0.170.1\n"


def test_an_app_server_to_connect_to_is_parsed_and_refused(fake: Fake) -> None:
    """0.171.0's `exec --remote ADDR` (and resume's) is taken as an option, as the real
    parser takes it, and refused: the fake models no app server."""
    refused = fake.run("exec", "--remote", "ws://127.0.0.1:9", "hi")
    assert refused.code == 1 and "--remote" in refused.stderr and refused.text == ""
    assert fake.run("exec", "--remote").code == 2  # a value is required


@pytest.mark.parametrize(
    ("args", "help_file"),
    [
        (("--help",), "codex-help.txt"),
        (("exec", "--help"), "codex-exec-help.txt"),
        (("exec", "-h"), "codex-exec-help.txt"),
        (("exec", "help"), "codex-exec-help.txt"),
        (("exec", "resume", "--help"), "codex-resume-help.txt"),
        (("exec", "resume", "-h"), "codex-resume-help.txt"),
        (("exec", "-s", "read-only", "resume", "--json", "--help"), "codex-resume-help.txt"),
    ],
)
def test_help_texts_are_the_captured_ones(
    fake: Fake, args: tuple[str, ...], help_file: str
) -> None:
    result = fake.ok(*args)
    assert result.text == (SUPPORT / help_file).read_text()
    assert result.stderr == ""


def test_the_options_taken_are_those_the_recorded_help_lists(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake's options are read from the pinned codex's recorded help: when a new pin's
    help lists an option (recorded again by support/codex_streams.py), the fake takes it,
    with the values it allows; one the help does not list is refused."""
    from support import fake_codex

    new = ("      --brand-new <MODE>\n          New at this pin\n          \n"
           "          [possible values: one, two]\n\n  -h, --help\n")
    for name in fake_codex.HELP_FILES.values():
        text = (SUPPORT / name).read_text()
        if name == "codex-exec-help.txt":
            text = text.replace("  -h, --help\n", new)
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(fake_codex, "HERE", str(tmp_path))
    monkeypatch.setattr(fake_codex, "_SPECS", {})

    taken = fake_codex.parse_invocation(["exec", "--brand-new", "two", "--json", "hi"])
    assert taken.value("brand_new") == "two"
    with pytest.raises(fake_codex.UsageError, match="invalid value 'three' for '--brand-new"):
        fake_codex.parse_invocation(["exec", "--brand-new", "three", "hi"])
    with pytest.raises(fake_codex.UsageError, match="unexpected argument '--brand-new'"):
        fake_codex.parse_invocation(["exec", "resume", "--brand-new", "one"])


@pytest.mark.parametrize(
    ("flag", "tip"),
    [
        ("--approval-policy", "a similar argument exists: '--approve-for-me'"),
        ("-a", "to pass '-a' as a value, use '-- -a'"),
        (
            "--ask-for-approval",
            "to pass '--ask-for-approval' as a value, use '-- --ask-for-approval'",
        ),
        ("--full-auto", "to pass '--full-auto' as a value, use '-- --full-auto'"),
        ("--bogus", "to pass '--bogus' as a value, use '-- --bogus'"),
    ],
)
def test_rejected_flags_exit_2_with_clap_text(fake: Fake, flag: str, tip: str) -> None:
    result = fake.run("exec", flag, "never", "hi")
    assert result.code == 2 and result.stdout == b""
    expected = f"error: unexpected argument '{flag}' found\n\n  tip: {tip}\n\n{EXEC_USAGE}{MORE}"
    assert result.stderr == expected
    assert fake.calls()[0]["exit_code"] == 2


def test_approval_policy_text_matches_reference(fake: Fake) -> None:
    assert fake.run("exec", "--approval-policy", "never", "hi").stderr == APPROVAL_POLICY_ERROR


def test_invalid_sandbox_value(fake: Fake) -> None:
    result = fake.run("exec", "-s", "bogus", "hi")
    assert result.code == 2 and result.stdout == b""
    assert result.stderr == (
        "error: invalid value 'bogus' for '--sandbox <SANDBOX_MODE>'\n"
        "  [possible values: read-only, workspace-write, danger-full-access]\n" + MORE
    )


@pytest.mark.parametrize("flag", ["-s", "-C"])
def test_sandbox_and_cd_are_rejected_after_resume(fake: Fake, flag: str) -> None:
    result = fake.run("exec", "resume", flag, "read-only", "--last", "hi")
    assert result.code == 2 and result.stdout == b""
    assert result.stderr == (
        f"error: unexpected argument '{flag}' found\n\n"
        f"  tip: to pass '{flag}' as a value, use '-- {flag}'\n\n{RESUME_USAGE}{MORE}"
    )


def test_resume_usage_lists_the_arguments_used(fake: Fake) -> None:
    result = fake.run("exec", "resume", "--json", "--jsn", "x")
    assert result.code == 2
    assert "  tip: a similar argument exists: '--json'\n" in result.stderr
    assert "Usage: codex exec resume --json [SESSION_ID] [PROMPT]\n" in result.stderr


def test_other_clap_errors(fake: Fake) -> None:
    dup = fake.run("exec", "-m", "a", "-m", "b", "hi")
    assert dup.code == 2
    assert dup.stderr.startswith("error: the argument '--model <MODEL>' cannot be used multiple")
    missing = fake.run("exec", "-m")
    assert missing.stderr == (
        "error: a value is required for '--model <MODEL>' but none was supplied\n" + MORE
    )
    extra = fake.run("exec", "a", "b")
    assert extra.stderr == f"error: unexpected argument 'b' found\n\n{EXEC_USAGE}{MORE}"


def test_options_may_follow_positionals(fake: Fake) -> None:
    result = fake.ok("exec", "hi", "--json", "-m", "gpt-5.5", "-c", "model_reasoning_effort=high")
    assert result.types == ["thread.started", "turn.started", "item.completed", "turn.completed"]
    call = fake.calls()[0]
    assert call["prompt"] == "hi" and call["model"] == "gpt-5.5"


def test_usage_error_mode(fake: Fake) -> None:
    result = fake.run(*exec_json("hi"), env={"FAKE_CODEX_MODE": "usage_error"})
    assert (result.code, result.stdout, result.stderr) == (2, b"", APPROVAL_POLICY_ERROR)


# --------------------------------------------------------------------------------------------
# stdin
# --------------------------------------------------------------------------------------------


def test_stdin_prompt_is_read_to_eof_and_logged_byte_for_byte(fake: Fake) -> None:
    prompt = "Quote \"double\" 'single' `tick` $(whoami) ${HOME} ; | & \\ ünïcødé 🤖\nline 2\n"
    raw = prompt.encode()
    result = fake.ok(*exec_json(), stdin=raw)
    assert result.stderr == "Reading prompt from stdin...\n"
    call = fake.calls()[0]
    assert call["prompt"] == prompt
    assert call["stdin_bytes"] == len(raw)
    assert call["stdin_sha256"] == hashlib.sha256(raw).hexdigest()
    assert (fake.log / "call-0001.stdin").read_bytes() == raw


def test_large_stdin_prompt(fake: Fake) -> None:
    raw = (b"0123456789abcdef" * 65536)[: 1024 * 1024]  # exactly codex's limit
    result = fake.ok(*exec_json("-"), stdin=raw)
    assert result.stderr == ""  # `-` reads stdin without announcing it
    assert (fake.log / "call-0001.stdin").read_bytes() == raw
    assert result.types[-1] == "turn.completed"


def test_a_prompt_over_the_input_limit_is_refused_like_codex_does(fake: Fake) -> None:
    """codex 0.169.0: thread.started, then `Input exceeds the maximum length of 1048576
    characters.` on stderr, exit 1, no request and no rollout (characters, not bytes)."""
    fake.ok(*exec_json("-"), stdin=("é" * 1_048_576).encode())
    result = fake.run(*exec_json("-"), stdin=b"x" * 1_048_577)
    assert result.code == 1
    assert [e["type"] for e in result.events] == ["thread.started"]
    assert result.stderr.endswith(
        "Error: turn/start: turn/start failed: Input exceeds the maximum length of 1048576 "
        'characters. (code -32602), data: {"input_error_code":"input_too_large",'
        '"max_chars":1048576,"actual_chars":1048577}\n')
    thread = result.events[0]["thread_id"]
    assert not list(fake.home.glob(f"sessions/**/*{thread}.jsonl"))


def test_prompt_argument_plus_stdin_becomes_a_stdin_block(fake: Fake) -> None:
    result = fake.ok(*exec_json("summarize"), stdin=b"some piped context")
    assert result.stderr == "Reading additional input from stdin...\n"
    assert fake.calls()[0]["prompt"] == "summarize\n\n<stdin>\nsome piped context\n</stdin>"
    fake.ok(*exec_json("summarize"), stdin=b"ends with newline\n")
    assert fake.calls()[1]["prompt"] == "summarize\n\n<stdin>\nends with newline\n</stdin>"
    fake.ok(*exec_json("alone"), stdin=b"  \n")
    assert fake.calls()[2]["prompt"] == "alone"


def test_empty_stdin_without_prompt(fake: Fake) -> None:
    result = fake.run(*exec_json())
    assert (result.code, result.stdout) == (1, b"")
    assert result.stderr == "Reading prompt from stdin...\nNo prompt provided via stdin.\n"


def test_invalid_utf8_stdin(fake: Fake) -> None:
    result = fake.run(*exec_json(), stdin=b"ab\xffcd")
    assert result.code == 1
    assert "input is not valid UTF-8 (invalid byte at offset 2)" in result.stderr
    assert (fake.log / "call-0001.stdin").read_bytes() == b"ab\xffcd"


def test_resume_with_prompt_does_not_read_stdin(fake: Fake) -> None:
    first = fake.ok(*exec_json("one"))
    thread = first.events[0]["thread_id"]
    second = fake.ok("exec", "resume", "--json", thread, "two", stdin=b"ignored")
    assert second.stderr == ""
    call = fake.calls()[1]
    assert call["stdin_read"] is False and call["prompt"] == "two"


def test_open_stdin_pipe_blocks_before_the_thread(fake: Fake) -> None:
    proc = subprocess.Popen(
        fake.command(exec_json("hi")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=fake.env,
        cwd=fake.cwd,
        start_new_session=True,
    )
    try:
        assert fake.first_call_once(lambda call: True)["stdin_read"] is False
        assert Running(proc).alive_after(0.3)
        assert fake.calls()[0]["stdin_read"] is False
        out, _ = proc.communicate(b"context", timeout=10)
        assert proc.returncode == 0 and b'"turn.completed"' in out
        assert fake.calls()[0]["prompt"] == "hi\n\n<stdin>\ncontext\n</stdin>"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def test_stdin_tty_without_prompt(fake: Fake) -> None:
    controller, terminal = os.openpty()
    try:
        done = subprocess.run(
            fake.command(("exec",)),
            stdin=terminal,
            capture_output=True,
            env=fake.env,
            cwd=fake.cwd,
            timeout=10,
        )
    finally:
        os.close(controller)
        os.close(terminal)
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "No prompt provided. Either specify one as an argument or pipe the prompt into stdin.\n"
    )


# --------------------------------------------------------------------------------------------
# Errors before the thread
# --------------------------------------------------------------------------------------------


def test_errors_before_the_thread(fake: Fake, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    cases = [
        (
            ("-C", str(tmp_path / "missing"), "hi"),
            "Error: No such file or directory (os error 2)\n",
        ),
        (
            ("-C", str(outside), "hi"),
            "Reading additional input from stdin...\n"
            "Not inside a trusted directory and --skip-git-repo-check was not specified.\n",
        ),
        (
            ("--output-schema", "/nonexistent.json", "hi"),
            "Reading additional input from stdin...\n"
            "Failed to read output schema file /nonexistent.json: "
            "No such file or directory (os error 2)\n",
        ),
        (
            ("-o", "/nonexistent/last.txt", "hi"),
            "Reading additional input from stdin...\n"
            'Error: Failed to open last message file "/nonexistent/last.txt": '
            "No such file or directory (os error 2)\n",
        ),
    ]
    for args, stderr in cases:
        result = fake.run(*exec_json(*args))
        assert (result.code, result.stdout, result.stderr) == (1, b"", stderr), args
    assert not fake.home.exists()  # no thread, no rollout, no state


def test_git_check_is_skipped_by_flag(fake: Fake, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    fake.ok(*exec_json("--skip-git-repo-check", "hi"), cwd=outside)
    fake.ok(*exec_json("-C", str(fake.cwd), "hi"), cwd=outside)


def test_rust_backtrace_suffix(fake: Fake, tmp_path: Path) -> None:
    result = fake.run(*exec_json("-C", str(tmp_path / "nope"), "hi"), env={"RUST_BACKTRACE": "1"})
    assert result.stderr.startswith("Error: No such file or directory (os error 2)\n\n")
    assert "Stack backtrace:\n   0: <unknown>\n" in result.stderr


# --------------------------------------------------------------------------------------------
# Threads, resume, rollouts, usage
# --------------------------------------------------------------------------------------------


def test_two_turn_thread_with_cumulative_usage(fake: Fake) -> None:
    first = fake.ok(*exec_json("-m", "gpt-5.5", "first question"))
    thread = first.events[0]["thread_id"]
    assert THREAD_ID.match(thread)
    assert first.items()[0] == {
        "id": "item_0",
        "type": "agent_message",
        "text": "Fake Codex reply for turn 1.",
    }
    second = fake.ok("exec", "resume", thread, "--json", "-m", "gpt-5.5", "second question")
    assert second.events[0] == {"type": "thread.started", "thread_id": thread}
    assert second.items()[0]["id"] == "item_0"
    assert second.items()[0]["text"] == "Fake Codex reply for turn 2."
    u1, u2 = first.events[-1]["usage"], second.events[-1]["usage"]
    assert u1 == TURN_USAGE and TURN_USAGE["input_tokens"] > 0
    assert u2 == {key: 2 * tokens for key, tokens in TURN_USAGE.items()}
    assert len(fake.rollouts()) == 1


def test_rollout_path_and_content(fake: Fake) -> None:
    before = time.localtime()
    thread = fake.ok(*exec_json("-s", "workspace-write", "hi")).events[0]["thread_id"]
    (path,) = fake.rollouts()
    rel = path.relative_to(fake.home).as_posix()
    pattern = rf"sessions/(\d{{4}})/(\d\d)/(\d\d)/rollout-\1-\2-\3T\d\d-\d\d-\d\d-{thread}\.jsonl"
    assert re.fullmatch(pattern, rel)
    assert rel.startswith(time.strftime("sessions/%Y/%m/", before))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["id"] == thread
    context = next(line["payload"] for line in lines if line["type"] == "turn_context")
    assert context["approval_policy"] == "never"
    assert context["sandbox_policy"] == {"type": "workspace-write"}
    assert context["cwd"] == str(fake.cwd) and context["model"] == "gpt-6.1-sol"


def test_sandbox_goes_before_resume_and_is_not_restored(fake: Fake) -> None:
    thread = fake.ok(*exec_json("-s", "workspace-write", "one")).events[0]["thread_id"]
    fake.ok("exec", "-s", "workspace-write", "resume", "--json", thread, "two")
    fake.ok("exec", "resume", "--json", thread, "three")
    assert [c["sandbox"] for c in fake.calls()] == ["workspace-write"] * 2 + ["read-only"]
    bypass = fake.ok("exec", "resume", "--json", "--yolo", thread, "four")
    assert bypass.code == 0 and fake.calls()[-1]["sandbox"] == "danger-full-access"


def test_resume_unknown_and_ephemeral_threads(fake: Fake) -> None:
    unknown = "01a20111-c1b2-7f01-9117-e9eaaa2f1d9a"
    result = fake.run("exec", "resume", "--json", unknown, "hi")
    assert (result.code, result.stdout) == (1, b"")
    assert result.stderr == (
        "Error: thread/resume: thread/resume failed: no rollout found for thread id "
        f"{unknown} (code -32600)\n"
    )
    ephemeral = fake.ok(*exec_json("--ephemeral", "hi")).events[0]["thread_id"]
    assert fake.rollouts() == []
    assert fake.run("exec", "resume", "--json", ephemeral, "again").code == 1


def test_resume_last_picks_the_newest_thread_of_this_cwd(fake: Fake, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    mine = fake.ok(*exec_json("mine")).events[0]["thread_id"]
    theirs = fake.ok(*exec_json("theirs"), cwd=other).events[0]["thread_id"]
    assert fake.ok("exec", "resume", "--last", "--json", "again").events[0]["thread_id"] == mine
    resumed_all = fake.ok("exec", "resume", "--last", "--all", "--json", "again")
    assert resumed_all.events[0]["thread_id"] in (mine, theirs)
    assert fake.calls()[-1]["prompt"] == "again"


def test_unknown_model_warning_is_opt_in(fake: Fake) -> None:
    assert fake.ok(*exec_json("-m", "gpt-5-mock", "hi")).items()[0]["type"] == "agent_message"
    env = {"FAKE_CODEX_KNOWN_MODELS": "gpt-5.5"}
    result = fake.ok(*exec_json("-m", "gpt-5-mock", "hi"), env=env)
    assert result.types[:3] == ["thread.started", "item.completed", "turn.started"]
    assert result.items()[0]["message"].startswith("Model metadata for `gpt-5-mock` not found.")


def test_model_switch_on_resume_warns(fake: Fake) -> None:
    thread = fake.ok(*exec_json("-m", "gpt-5.5", "one")).events[0]["thread_id"]
    result = fake.ok("exec", "resume", "--json", "-m", "gpt-5-mock", thread, "two")
    assert result.types[:3] == ["thread.started", "item.completed", "turn.started"]
    warning = result.items()[0]
    assert warning["type"] == "error" and "recorded with model `gpt-5.5`" in warning["message"]
    assert result.items()[1]["id"] == "item_1"


# --------------------------------------------------------------------------------------------
# -o, human mode, modes
# --------------------------------------------------------------------------------------------


def test_output_last_message(fake: Fake, tmp_path: Path) -> None:
    target = tmp_path / "last.txt"
    fake.ok(*exec_json("-o", str(target), "hi"), env={"FAKE_CODEX_REPLY": "final answer"})
    assert target.read_bytes() == b"final answer"
    failed = fake.run(*exec_json("-o", str(target), "hi"), env={"FAKE_CODEX_MODE": "rate_limited"})
    assert failed.code == 1 and target.read_bytes() == b""
    assert f"Warning: no last agent message; wrote empty content to {target}" in failed.stderr


def test_a_turn_without_json_is_refused_not_imagined(fake: Fake) -> None:
    """sparring always passes --json: the fake models no transcript for a person."""
    result = fake.run("exec", "hi", env={"FAKE_CODEX_REPLY": "plain answer"})
    assert result.code == 99 and result.text == "" and "--json" in result.stderr
    assert fake.rollouts() == []


def test_ok_with_reasoning_and_json_reply(fake: Fake) -> None:
    env = {"FAKE_CODEX_REASONING": "**Thinking**", "FAKE_CODEX_REPLY": '{"verdict": "yes"}'}
    result = fake.ok(*exec_json("hi"), env=env)
    reasoning, message = result.items()
    assert reasoning == {"id": "item_0", "type": "reasoning", "text": "**Thinking**"}
    assert message["text"] == '{"verdict": "yes"}'


def recorded_command(scenario: str, event: str = "item.completed") -> dict[str, Any]:
    return next(e["item"] for e in RECORDED[scenario]
                if e["type"] == event and e["item"]["type"] == "command_execution")


def test_commands_mode(fake: Fake) -> None:
    """The recorded command (or the one asked for), then the recorded failed one."""
    result = fake.ok(*exec_json("hi"), env={"FAKE_CODEX_MODE": "commands"})
    started = result.items("item.started")
    done = [i for i in result.items() if i["type"] == "command_execution"]
    assert started == [{**recorded_command(s, "item.started"), "id": i["id"]}
                       for s, i in zip(("command", "failed_command"), done, strict=True)]
    assert done == [{**recorded_command(s), "id": i["id"]}
                    for s, i in zip(("command", "failed_command"), done, strict=True)]
    assert done[1]["exit_code"] != 0 and done[1]["status"] == "failed"
    assert [i["type"] for i in result.items()][-2:] == ["reasoning", "agent_message"]
    asked = fake.ok(*exec_json("hi"), env={"FAKE_CODEX_MODE": "commands",
                                           "FAKE_CODEX_COMMAND": "/bin/bash -lc 'ls'"})
    assert asked.items("item.started")[0]["command"] == "/bin/bash -lc 'ls'"


def test_slow_mode_keeps_events_flowing(fake: Fake) -> None:
    start = time.monotonic()
    result = fake.ok(*exec_json("hi"), env={"FAKE_CODEX_MODE": "slow", "FAKE_CODEX_DELAY": "0.3"})
    assert time.monotonic() - start >= 0.3
    commands = [i for i in result.items() if i["type"] == "command_execution"]
    assert commands and commands[0] == {**recorded_command("command"), "id": commands[0]["id"]}
    assert result.items()[0]["type"] == "reasoning"
    assert result.items()[-1]["type"] == "agent_message"


def test_slow_mode_ends_early_once_released(fake: Fake, tmp_path: Path) -> None:
    """FAKE_CODEX_RELEASE: a test that needs the turn at work only until it has done
    something ends it then, not at its delay."""
    release = tmp_path / "release"
    env = {"FAKE_CODEX_MODE": "slow", "FAKE_CODEX_DELAY": "600",
           "FAKE_CODEX_RELEASE": str(release)}
    with fake.popen(*exec_json("hi"), env=env) as run:
        run.read_until(lambda b: b"command_execution" in b)
        assert run.alive_after(0.3)  # at work, its delay far off
        release.touch()
        run.read_until(lambda b: b"turn.completed" in b)  # within 5 s, not 600
        assert run.wait() == 0
        assert json.loads(run.buffer.splitlines()[-1])["type"] == "turn.completed"


def test_event_delay(fake: Fake) -> None:
    start = time.monotonic()
    fake.ok(*exec_json("hi"), env={"FAKE_CODEX_EVENT_DELAY": "0.1"})
    assert time.monotonic() - start >= 0.3  # four lines, three pauses


def test_failure_modes(fake: Fake) -> None:
    limited = fake.run(*exec_json("hi"), env={"FAKE_CODEX_MODE": "rate_limited"})
    message = "exceeded retry limit, last status: 429 Too Many Requests"
    assert limited.code == 1
    assert limited.events[2:] == [
        {"type": "error", "message": message},
        {"type": "turn.failed", "error": {"message": message}},
    ]
    server = fake.run(*exec_json("hi"), env={"FAKE_CODEX_MODE": "server_error"})
    assert server.code == 1
    notices = [e["message"] for e in server.events if e["type"] == "error"]
    assert notices == [f"Reconnecting... {n}/5 ({HIGH_DEMAND})" for n in range(1, 6)] + [
        HIGH_DEMAND
    ]
    assert server.events[-1] == {"type": "turn.failed", "error": {"message": HIGH_DEMAND}}


# The modes whose stream is a turn's (not the faults that print half a line or garbage, or
# never end, offline among them), with what each needs to run quickly. Each event they print
# must be one the pinned codex printed in a recording (tests/fixtures/codex/<pin>/), in its
# type, its keys, and its item's type, status and keys: a fake that drifts fails here.
STREAM_MODES: dict[str, dict[str, str]] = {
    "ok": {"FAKE_CODEX_REASONING": "Weighing the write rate."},
    "commands": {}, "writes_file": {}, "shell": {"FAKE_CODEX_SHELL": "cat missing.md"},
    "slow": {"FAKE_CODEX_DELAY": "0.1"}, "no_message": {}, "rate_limited": {},
    "server_error": {}, "crash": {"FAKE_CODEX_CRASH_EXIT": "101"},
}


def recorded_shapes() -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for name in codex_streams.SCENARIOS:
        found.update(codex_streams.shape(codex_streams.load(name)))
    return found


@pytest.mark.parametrize("mode", sorted(STREAM_MODES))
def test_every_event_the_fake_prints_is_one_the_real_codex_printed(fake: Fake,
                                                                  mode: str) -> None:
    done = fake.run(*exec_json("-s", "workspace-write", "hi"),
                    env={"FAKE_CODEX_MODE": mode, **STREAM_MODES[mode]})
    printed = codex_streams.shape({"events": done.text.splitlines()})

    assert printed, done.stderr
    assert [s for s in printed if s not in recorded_shapes()] == [], mode


def rollout_shape(line: str) -> tuple[str, ...]:
    """A rollout line without its run's values: its type and keys, its payload's type and
    keys."""
    said = json.loads(line)
    payload = said.get("payload") if isinstance(said.get("payload"), dict) else {}
    return (said["type"], ",".join(sorted(said)), str(payload.get("type")),
            ",".join(sorted(payload)))


def recorded_rollout_shapes() -> set[tuple[str, ...]]:
    return {rollout_shape(line) for name in codex_streams.SCENARIOS
            for lines in codex_streams.load(name)["rollouts"].values() for line in lines}


@pytest.mark.parametrize("mode", sorted(STREAM_MODES))
def test_every_rollout_line_the_fake_writes_is_one_the_real_codex_wrote(fake: Fake,
                                                                       mode: str) -> None:
    """What sparring reads of a rollout (the settings a turn ran with, its tokens, its tool
    calls) it reads in lines shaped as the pinned codex's."""
    fake.run(*exec_json("-s", "workspace-write", "hi"),
             env={"FAKE_CODEX_MODE": mode, **STREAM_MODES[mode]})
    written = [rollout_shape(line) for path in fake.rollouts()
               for line in path.read_text().splitlines()]

    assert written, mode
    assert [s for s in written if s not in recorded_rollout_shapes()] == [], mode


def test_failed_turn_is_recorded_but_adds_no_usage(fake: Fake) -> None:
    thread = fake.ok(*exec_json("one")).events[0]["thread_id"]
    failed = fake.run(
        "exec", "resume", "--json", thread, "two", env={"FAKE_CODEX_MODE": "rate_limited"}
    )
    assert failed.code == 1
    third = fake.ok("exec", "resume", "--json", thread, "three")
    assert third.items()[0]["text"] == "Fake Codex reply for turn 3."
    assert third.events[-1]["usage"] == {key: 2 * tokens for key, tokens in TURN_USAGE.items()}


def test_malformed_mode(fake: Fake) -> None:
    result = fake.ok(*exec_json("hi"), env={"FAKE_CODEX_MODE": "malformed"})
    lines = result.text.split("\n")
    assert "not json at all" in lines and "" in lines[:-1]
    assert '{"type":"item.completed","item":' in lines
    assert not result.text.endswith("\n")
    assert json.loads(lines[-1])["type"] == "turn.completed"
    parsed = [json.loads(line) for line in lines if _is_json(line)]
    assert any(isinstance(p, list) for p in parsed)
    assert any(isinstance(p, dict) and "type" not in p for p in parsed)
    assert [p["type"] for p in parsed if isinstance(p, dict) and "type" in p] == [
        "thread.started",
        "turn.started",
        "item.completed",
        "turn.completed",
    ]


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def test_no_message_mode(fake: Fake, tmp_path: Path) -> None:
    target = tmp_path / "last.txt"
    env = {"FAKE_CODEX_MODE": "no_message"}
    result = fake.ok(*exec_json("-o", str(target), "hi"), env=env)
    assert result.types == ["thread.started", "turn.started", "turn.completed"]
    assert target.read_bytes() == b""
    assert result.stderr.endswith(
        f"Warning: no last agent message; wrote empty content to {target}\n"
    )


def test_writes_file_mode(fake: Fake) -> None:
    (fake.cwd / "old.txt").write_text("bye")
    (fake.cwd / "keep.txt").write_text("before")
    env = {
        "FAKE_CODEX_MODE": "writes_file",
        "FAKE_CODEX_WRITE_PATH": "keep.txt",
        "FAKE_CODEX_WRITE_CONTENT": "after\n",
        "FAKE_CODEX_DELETE_PATH": "old.txt",
    }
    result = fake.ok(*exec_json("-s", "read-only", "hi"), env=env)
    assert (fake.cwd / "keep.txt").read_text() == "after\n"
    assert not (fake.cwd / "old.txt").exists()
    change = result.items()[0]
    assert change["type"] == "file_change" and change["status"] == "completed"
    assert change["changes"] == [
        {"path": str(fake.cwd / "keep.txt"), "kind": "update"},
        {"path": str(fake.cwd / "old.txt"), "kind": "delete"},
    ]
    assert result.items("item.started")[0]["status"] == "in_progress"
    fresh = fake.ok(*exec_json("hi"), env={"FAKE_CODEX_MODE": "writes_file"})
    assert fresh.items()[0]["changes"][0]["kind"] == "add"
    assert (fake.cwd / "fake_codex_output.txt").read_text() == "written by fake codex\n"


def test_die_early_and_crash(fake: Fake) -> None:
    early = fake.run(*exec_json("hi"), env={"FAKE_CODEX_MODE": "die_early"})
    assert (early.code, early.stdout) == (1, b"")
    assert early.stderr.endswith("Error: failed to initialize: simulated startup failure\n")
    crash = fake.run(*exec_json("hi"), env={"FAKE_CODEX_MODE": "crash"})
    assert crash.code == -signal.SIGKILL
    assert crash.types == ["thread.started", "turn.started", "item.completed"]
    assert "thread 'main' panicked at " in crash.stderr
    env = {"FAKE_CODEX_MODE": "crash", "FAKE_CODEX_CRASH_EXIT": "101"}
    assert fake.run(*exec_json("hi"), env=env).code == 101


# --------------------------------------------------------------------------------------------
# Long-running modes and signals (each started in its own session, killed in `finally`)
# --------------------------------------------------------------------------------------------


def test_hang_then_sigterm_exits_143(fake: Fake) -> None:
    with fake.popen(*exec_json("hi"), env={"FAKE_CODEX_MODE": "hang"}) as run:
        assert [e["type"] for e in run.lines(2)] == ["thread.started", "turn.started"]
        assert run.alive_after(0.2)
        run.proc.send_signal(signal.SIGTERM)
        assert run.wait() == 143
        assert run.buffer.count(b"\n") == 2  # no turn.failed
    call = fake.calls()[0]
    assert call["exit_code"] == 143 and call["terminated_by"] == "SIGTERM"


def test_sigterm_can_kill_by_signal_instead(fake: Fake) -> None:
    env = {"FAKE_CODEX_MODE": "hang", "FAKE_CODEX_SIGTERM": "signal"}
    with fake.popen(*exec_json("hi"), env=env) as run:
        run.lines(2)
        run.proc.send_signal(signal.SIGTERM)
        assert run.wait() == -signal.SIGTERM


def test_sigint_exits_1(fake: Fake) -> None:
    with fake.popen(*exec_json("hi"), env={"FAKE_CODEX_MODE": "hang"}) as run:
        run.lines(2)
        run.proc.send_signal(signal.SIGINT)
        assert run.wait() == 1


def test_hang_silent_emits_nothing(fake: Fake) -> None:
    with fake.popen(*exec_json("hi"), env={"FAKE_CODEX_MODE": "hang_silent"}) as run:
        assert fake.first_call_once(lambda call: call["mode"] is not None)["mode"] == \
            "hang_silent"
        assert run.alive_after(0.3)
        assert run.read_until(lambda _: True, timeout=0.1) == b""


def test_ignore_term_needs_sigkill(fake: Fake) -> None:
    with fake.popen(*exec_json("hi"), env={"FAKE_CODEX_MODE": "ignore_term"}) as run:
        run.lines(2)
        run.proc.send_signal(signal.SIGTERM)
        assert run.alive_after(0.3)
        run.proc.kill()
        assert run.wait() == -signal.SIGKILL


def test_partial_then_hang(fake: Fake) -> None:
    with fake.popen(*exec_json("hi"), env={"FAKE_CODEX_MODE": "partial_then_hang"}) as run:
        data = run.read_until(lambda b: b.count(b"\n") >= 2 and not b.endswith(b"\n"))
        partial = data.split(b"\n")[2]
        assert partial.startswith(b'{"type":"item.completed"') and not _is_json(partial.decode())
        assert run.alive_after(0.2)


def test_spawn_child_escapes_the_process_group(fake: Fake, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    env = {"FAKE_CODEX_MODE": "spawn_child", "FAKE_CODEX_CHILD_PIDFILE": str(pidfile)}
    child = 0
    try:
        with fake.popen(*exec_json("hi"), env=env) as run:
            run.lines(2)
            child = int(pidfile.read_text())
            assert os.getsid(child) == child != os.getsid(run.proc.pid)
            assert fake.calls()[0]["child_pid"] == child
    finally:
        if child:
            os.kill(child, signal.SIGKILL)
            _reap(child)


def _zombie(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


def _reap(pid: int) -> None:
    """The grandchild was re-parented away from us; wait until it is gone."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if _zombie(pid):
            return
        time.sleep(0.02)


# --------------------------------------------------------------------------------------------
# Scripted turns, concurrency, the PATH launcher
# --------------------------------------------------------------------------------------------


def test_script_steps_through_entries(fake: Fake, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    entries = [
        "first answer",
        {"reply": {"verdict": "ok", "points": [1]}, "usage": {"input_tokens": 10}},
        {"mode": "rate_limited"},
        {"reply": "last one", "reasoning": "hmm", "exit_code": 0},
    ]
    script.write_text(json.dumps(entries))
    env = {"FAKE_CODEX_SCRIPT": str(script), "FAKE_CODEX_REPLY": "unused"}
    first = fake.ok(*exec_json("q1"), env=env)
    thread = first.events[0]["thread_id"]
    assert first.items()[0]["text"] == "first answer"
    second = fake.ok("exec", "resume", "--json", thread, "q2", env=env)
    assert json.loads(second.items()[0]["text"]) == {"verdict": "ok", "points": [1]}
    assert (
        second.events[-1]["usage"]["input_tokens"] == first.events[-1]["usage"]["input_tokens"] + 10
    )
    assert fake.run(*exec_json("q3"), env=env).code == 1
    for _ in range(2):  # past the end, the last entry repeats
        result = fake.ok(*exec_json("q"), env=env)
        assert [i["text"] for i in result.items()] == ["hmm", "last one"]
    assert [c["script_index"] for c in fake.calls()] == [0, 1, 2, 3, 4]
    assert sorted(p.name for p in (fake.home / "fake-state").iterdir())[-1] == "turn-000004"


def test_concurrent_fakes_never_collide(fake: Fake, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([f"answer {n}" for n in range(12)]))
    env = {"FAKE_CODEX_SCRIPT": str(script)}
    with ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(lambda n: fake.ok(*exec_json(f"p{n}"), env=env), range(12)))
    answers = sorted(r.items()[0]["text"] for r in results)
    assert answers == sorted(f"answer {n}" for n in range(12))
    assert len({r.events[0]["thread_id"] for r in results}) == 12
    names = sorted(p.name for p in fake.log.glob("call-*.json"))
    assert names == [f"call-{n:04d}.json" for n in range(1, 13)]


def test_launcher_on_path_through_a_symlink(fake: Fake, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex").symlink_to(FAKE)
    env = {"PATH": f"{bin_dir}{os.pathsep}{fake.env['PATH']}"}
    done = subprocess.run(
        ["codex", "exec", "--json", "hi"],
        env=fake.environ(env),
        cwd=fake.cwd,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["type"] == "turn.completed"
    assert fake.calls()[0]["argv"] == ["exec", "--json", "hi"]


# -- codex login (observed with 0.169.0; everything on stderr) --------------------------------


def test_login_status_without_credentials_says_not_logged_in(tmp_path: Path) -> None:
    fake = Fake(tmp_path)
    result = fake.run("login", "status")
    assert (result.code, result.stdout, result.stderr) == (1, b"", "Not logged in\n")


def test_login_with_an_api_key_then_status_masks_it(tmp_path: Path) -> None:
    fake = Fake(tmp_path)
    saved = fake.run("login", "--with-api-key", stdin=b"sk-1234567890abcdef\n")
    assert saved.code == 0 and saved.stdout == b""
    assert saved.stderr == ("Reading API key from stdin...\n"
                            "API key saved. Authentication is checked when you send a request.\n")
    assert json.loads((fake.home / "auth.json").read_text()) == {
        "auth_mode": "apikey", "OPENAI_API_KEY": "sk-1234567890abcdef"}

    status = fake.run("login", "status")

    assert status.code == 0 and status.stdout == b""
    assert status.stderr == ("API key configured - sk-12345***bcdef\n"
                             "Authentication is checked when you send a request.\n")


@pytest.mark.parametrize("content, code, said", [
    ('{"auth_mode":"chatgpt"}', 0, "Logged in using ChatGPT\n"),
    ("{}", 0, "Logged in using ChatGPT\n"),
    ('{"OPENAI_API_KEY":"sk-abc"}', 0, "API key configured - ***\n"),
    ("garbage", 1, "Error checking login status: failed to deserialize CLI auth from file: "
                   "expected value at line 1 column 1\n"),
])
def test_login_status_reads_the_auth_file(tmp_path: Path, content: str, code: int,
                                          said: str) -> None:
    fake = Fake(tmp_path)
    fake.home.mkdir()
    (fake.home / "auth.json").write_text(content)
    result = fake.run("login", "status")
    assert result.code == code and result.stderr.startswith(said)


def test_login_ignores_key_variables_and_an_empty_key(tmp_path: Path) -> None:
    fake = Fake(tmp_path)
    assert fake.run("login", "status", env={"CODEX_API_KEY": "sk-x",
                                             "OPENAI_API_KEY": "sk-y"}).code == 1
    empty = fake.run("login", "--with-api-key", stdin=b"")
    assert empty.code == 1 and empty.stderr.endswith("No API key provided via stdin.\n")


# --------------------------------------------------------------------------------------------
# The fake's own start: the suite runs it a few thousand times
# --------------------------------------------------------------------------------------------

WRITTEN = [
    None, True, False, 0, -7, 2**70, 0.1, 1e300, -0.0, float("nan"), float("inf"),
    float("-inf"), "", "plain", 'quote " backslash \\ slash /', "\n\r\t\b\f\x00\x1f\x7f",
    "ünïcødé 🤖 \u2028", "\ud800 lone surrogate", [], {}, [1, [2, {"a": None}]],
    {"k": {"n": [True, "x"]}, "é": 1.5}, ("tuple", 1),
]


@pytest.mark.parametrize("value", WRITTEN, ids=repr)
def test_the_fake_writes_json_as_json_dumps_does(value: Any) -> None:
    assert to_json(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("raw", [
    "high", "x-high", "a_b", "medium", "true", "false", "inf", "nan", "-inf", "+inf", "5",
    "1_000", "1e3", "0x1F", '"quoted"', "'single'", "[1, 2]", "{a = 1}", "hi there", "é", "a1",
    "_", "-", "infinity", "1979-05-27",
])
def test_a_config_value_is_read_as_toml_else_as_its_text(raw: str) -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    try:
        expected = tomllib.loads(f"_x_ = {raw}")["_x_"]
    except tomllib.TOMLDecodeError:
        expected = raw.strip("\"'")
    assert repr(parse_config_value(raw)) == repr(expected)  # nan == nan is False


@pytest.mark.parametrize("args", [
    ("--version",), ("exec", "--help"), ("login", "status"),
    ("exec", "--json", "-c", "model_reasoning_effort=high", "-s", "read-only", "hi"),
], ids=" ".join)
def test_what_the_suite_runs_most_loads_no_json_tomllib_or_hashlib(fake: Fake,
                                                                   args: tuple[str, ...]) -> None:
    """Those imports (re, enum, typing, OpenSSL) once took almost half of a turn's CPU (35 ms).
    A turn reads the recording its rollout lines come from, so it loads json (and json re):
    measured, 40 turns interleaved, 120-129 ms a turn with it and without."""
    done = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", str(FAKE), *args],
                          capture_output=True, text=True, env=fake.environ(None), cwd=fake.cwd,
                          timeout=30)
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")}
    assert "fake_codex" in loaded, done.stderr
    turn = "exec" in args and "--help" not in args
    assert not loaded & ({"tomllib", "hashlib"} if turn else {"json", "tomllib", "hashlib", "re"}
                         ), done.stderr
    assert ("json" in loaded) is turn, done.stderr
