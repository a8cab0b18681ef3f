"""The runner drives the real Codex CLI (pinned npm package) against a loopback
mock of the Responses API: a turn, a resumed turn, a rate limit, a hang; and a codex too
old to drive, refused."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sparring import codex
from support.binaries import CODEX_OLD_VERSION, CODEX_VERSION, find_codex, require_binary
from support.responses_mock import ResponsesMock, Usage, hang, last_user_text, rate_limited, text

FAKE_CODEX = Path(__file__).resolve().parents[1] / "support" / "bin" / "codex"

pytestmark = pytest.mark.integration


def test_a_turn_then_a_resumed_turn_on_the_same_thread(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, session: str) -> None:
    responses_mock.script(text("first answer", usage=Usage(100, 10)),
                          text('{"position": "SQLite"}', usage=Usage(250, 20)))
    assert sparring("start", session, "--effort", "low", input=b"Redis or SQLite?").exit_code == 0
    one = sparring("wait", session, "--timeout", "60", "--full").out
    assert one["status"] == "completed", one
    assert one["review"]["text"] == "first answer"
    assert one["usage"]["round"]["input_tokens"] == 100

    assert sparring("resume", session, input=b"Second round: defend it.").exit_code == 0
    two = sparring("wait", session, "--timeout", "60", "--full").out
    assert two["status"] == "completed", two
    assert two["thread_id"] == one["thread_id"]
    assert two["review"]["data"] == {"position": "SQLite"}
    # codex reports cumulative usage (350); the round is the difference.
    assert two["usage"]["round"]["input_tokens"] == 250
    assert two["usage"]["total"]["input_tokens"] == 350

    first, second = responses_mock.responses_requests()
    assert last_user_text(first) == "Redis or SQLite?"
    assert last_user_text(second) == "Second round: defend it."
    assert "first answer" in str(second.body["input"])  # the thread's history came along
    assert first.body["reasoning"]["effort"] == "low"

    summary = sparring("finalize", session, "--full").out
    assert summary["codex"]["version"] == "0.171.0"
    assert summary["applied"]["source"] == "codex rollout"
    assert summary["applied"]["sandbox"] == "read-only"
    assert summary["applied"]["approval_policy"] == "never"


def test_rate_limit_ends_failed_with_the_servers_reason(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, session: str) -> None:
    responses_mock.script(rate_limited())
    result = sparring("start", session, input=b"q")
    out = result.out if result.exit_code == 0 else sparring("poll", session).out
    if out.get("status") == "running":
        out = sparring("wait", session, "--timeout", "60").out
    assert out["status"] == "failed"
    assert out["error"]["code"] == "rate_limited"
    assert "429" in out["error"]["message"]


def test_a_server_that_never_answers_is_ended_by_our_timeout(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, session: str) -> None:
    responses_mock.script(hang())
    began = time.monotonic()
    assert sparring("start", session, "--timeout", "3", input=b"q").exit_code == 0
    out = sparring("wait", session, "--timeout", "60", "--full").out
    assert out["status"] == "timeout"
    assert out["thread_id"]  # codex had opened the thread before it hung
    assert time.monotonic() - began < 30
    # no_orphans (autouse) then checks that neither the Node wrapper nor the
    # native codex survived.


def _said(codex: list[str], home: Path, *args: str, stdin: str = "") -> tuple[int, list[str]]:
    done = subprocess.run([*codex, *args], input=stdin, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(home.parent),
                               "CODEX_HOME": str(home)}, timeout=60, check=False)
    lines = [x for x in (done.stdout + done.stderr).splitlines() if not x.startswith("WARNING:")]
    return done.returncode, lines


def test_doctor_tells_whether_the_real_codex_is_logged_in_and_the_fake_agrees(
        codex_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sparring: Any,
        repo: Path) -> None:
    home = tmp_path / "fresh" / "codex-home"
    home.mkdir(parents=True)
    monkeypatch.setenv("SPARRING_CODEX", str(codex_bin))
    monkeypatch.setenv("CODEX_HOME", str(home))

    def login() -> dict[str, Any]:
        out = sparring("doctor").out
        return next(c for c in out["checks"] if c["name"] == "codex_login")

    before = login()
    assert before["ok"] is False and before["detail"].startswith("Not logged in")
    assert "codex login" in before["hint"]
    real = [_said([str(codex_bin)], home, "login", "status")]
    assert _said([str(codex_bin)], home, "login", "--with-api-key",
                 stdin="sk-tests-0123456789\n")[0] == 0
    after = login()
    assert after["ok"] is True
    assert after["detail"].startswith("API key configured - sk-tests***56789")
    real.append(_said([str(codex_bin)], home, "login", "status"))

    fake_home = tmp_path / "fake" / "codex-home"
    fake = [sys.executable, str(FAKE_CODEX)]
    faked = [_said(fake, fake_home, "login", "status")]
    _said(fake, fake_home, "login", "--with-api-key", stdin="sk-tests-0123456789\n")
    faked.append(_said(fake, fake_home, "login", "status"))
    assert faked == real


def test_a_provider_that_refuses_connections_ends_as_network_unreachable(
        real_codex: Path, responses_mock: ResponsesMock, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, sparring: Any, session: str) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    home = responses_mock.codex_home(tmp_path / "refused-codex-home")
    config = home / "config.toml"
    config.write_text(re.sub(r'base_url = "[^"]*"', f'base_url = "http://127.0.0.1:{port}/v1"',
                             config.read_text()))
    monkeypatch.setenv("CODEX_HOME", str(home))

    began = time.monotonic()
    assert sparring("start", session, "--offline-after", "3", input=b"q").exit_code == 0
    out = sparring("wait", session, "--timeout", "60", "--full").out

    assert out["status"] == "failed", out
    assert out["error"]["code"] == "network_unreachable"
    assert "Reconnecting... waiting for network" in out["error"]["message"]
    assert out["recoverable"] is True
    assert time.monotonic() - began < 30  # not the 30-minute turn timeout


def test_the_prompt_limit_is_the_real_codexs_own(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, session: str,
        repo: Path, codex_env: dict[str, str]) -> None:
    """Issue 11, case 7: codex refuses a prompt one character over its limit (and keeps no
    thread for it); sparring refuses that prompt before codex starts, and passes one exactly
    at the limit, which the real codex answers."""
    from sparring.codex import MAX_PROMPT_CHARS

    over = subprocess.run(
        [str(real_codex), "exec", "--json", "--skip-git-repo-check", "-s", "read-only",
         "-C", str(repo), "-"], input=b"x" * (MAX_PROMPT_CHARS + 1), capture_output=True,
        env=codex_env, timeout=120)
    assert over.returncode == 1
    assert f'"input_error_code":"input_too_large","max_chars":{MAX_PROMPT_CHARS}' in \
        over.stderr.decode()
    assert responses_mock.responses_requests() == []

    refused = sparring("start", session, input=b"x" * (MAX_PROMPT_CHARS + 1))
    assert refused.error_code == "prompt_too_large"
    assert responses_mock.responses_requests() == []

    responses_mock.script(text("read it all"))
    assert sparring("start", session, input=b"y" * MAX_PROMPT_CHARS).exit_code == 0
    out = sparring("wait", session, "--timeout", "120").out
    assert out["status"] == "completed", out
    [request] = responses_mock.responses_requests()
    assert len(last_user_text(request)) == MAX_PROMPT_CHARS


def test_the_real_codex_below_the_oldest_sparring_drives_is_refused_by_doctor_and_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sparring: Any, repo: Path) -> None:
    """codex 0.131.0, the last release before codex.MINIMUM_VERSION, refuses the command line
    sparring resumes a thread with; so doctor is not ready with it and `start` refuses it
    before any turn, each in one line naming the version and the upgrade command."""
    old = require_binary(f"codex {CODEX_OLD_VERSION}", find_codex(CODEX_OLD_VERSION))
    assert codex.too_old(CODEX_OLD_VERSION) and not codex.too_old(CODEX_VERSION)
    home = tmp_path / "codex-home"
    home.mkdir()
    resumed = subprocess.run([str(old), "exec", "resume", "--output-schema", "schema.json",
                              "--json", "-"], capture_output=True, text=True, timeout=60,
                             env={"CODEX_HOME": str(home), "HOME": str(home),
                                  "PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL)
    assert resumed.returncode == 2
    assert "unexpected argument '--output-schema' found" in resumed.stderr
    monkeypatch.setenv("SPARRING_CODEX", str(old))
    monkeypatch.setenv("CODEX_HOME", str(home))

    out = sparring("doctor").out
    found = next(c for c in out["checks"] if c["name"] == "codex_version")
    assert out["ready"] is False and found["level"] == "problem"
    assert found["detail"] == (f"codex-cli {CODEX_OLD_VERSION} is older than "
                               f"{codex.MINIMUM_VERSION}, the oldest release sparring drives")
    assert out["hints"][0] == f"upgrade codex: `{codex.UPGRADE}`"
    session = sparring("init", "--skill", "think-about").out["session"]
    refused = sparring("start", session, input=b"Redis or SQLite?")
    assert refused.error_code == "codex_too_old", refused.raw
    assert refused.out["error"]["message"] == (
        f"codex {CODEX_OLD_VERSION} ({old}) is older than {codex.MINIMUM_VERSION}, the oldest "
        "release sparring drives")
    assert list(home.rglob("*.jsonl")) == []  # no thread was started
