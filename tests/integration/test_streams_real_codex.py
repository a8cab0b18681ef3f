"""The recorded streams, and the fake codex, held to the real pinned codex against the
loopback Responses mock; and the real codex's own turns through sparring: a 40-level MCP
result keeps its call and text, usage and concurrency limits are `rate_limited`, the model
codex recorded is in the report.

- Each scenario of support/codex_streams.py is recorded again with the pinned binary and
  must print what the committed fixture says, event for event and item for item (its run's
  own values aside): a pin that moves fails here until the fixtures are recorded again
  (`.venv/bin/python tests/support/codex_streams.py`).
- The same command lines, given to the real codex and to the fake, end with the same exit
  code, the same events (by type) and the same first line on stderr.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import codex_streams
from support.debates import Debate
from support.responses_mock import ResponsesMock, text

pytestmark = pytest.mark.integration

FAKE = Path(__file__).resolve().parents[1] / "support" / "bin" / "codex"
RECORD_AGAIN = ("the pinned codex prints something else now: record the fixtures again with "
                "`.venv/bin/python tests/support/codex_streams.py`")


@pytest.mark.parametrize("name", list(codex_streams.SCENARIOS))
def test_the_recorded_stream_is_what_the_pinned_codex_prints(
        name: str, codex_bin: Path, tmp_path: Path) -> None:
    committed = codex_streams.load(name)
    fresh = codex_streams.record(codex_bin, name, tmp_path)
    assert fresh["exit_code"] == committed["exit_code"], RECORD_AGAIN
    assert codex_streams.shape(fresh) == codex_streams.shape(committed), RECORD_AGAIN
    assert sorted(fresh["rollouts"]) == sorted(committed["rollouts"]), RECORD_AGAIN
    assert fresh["argv"] == committed["argv"], RECORD_AGAIN


# -- the fake beside the real one ----------------------------------------------------------


def said(binary: Path, argv: list[str], env: dict[str, str], cwd: Path,
         prompt: bytes) -> tuple[int, list[str], str]:
    """What `binary argv` did: its exit code, its events' types (and items' types), and the
    first line of its stderr that is no warning about the temp folder."""
    done = subprocess.run([str(binary), *argv], input=prompt, capture_output=True, env=env,
                          cwd=cwd, timeout=120, check=False)
    kinds = []
    for line in done.stdout.decode().splitlines():
        event = json.loads(line)
        item = event.get("item") or {}
        kinds.append(f"{event['type']}:{item['type']}" if item else event["type"])
    lines = [line for line in done.stderr.decode().splitlines()
             if line.strip() and not line.startswith("WARNING: proceeding")]
    return done.returncode, kinds, lines[0] if lines else ""


def differential_cases(work: Path, thread: str) -> list[tuple[list[str], bytes]]:
    """Command lines sparring builds, and the mistakes the reference lists, by argv."""
    from sparring.codex import exec_argv
    from sparring.config import TurnSettings

    settings = TurnSettings.from_record({})  # what a turn runs with by default
    new = exec_argv("codex", cwd=work, settings=settings, thread_id=None,
                    output_schema=None)[1:]
    resumed = exec_argv("codex", cwd=work, settings=settings, thread_id=thread,
                        output_schema=None)[1:]
    return [
        (new, b"Is SQLite enough?"),
        (resumed, b"And for the cache?"),
        (["exec", "-s", "read-only", "resume", "01a2011f-f78c-7750-8dfd-09024cb0f320",
          "--json", "--skip-git-repo-check", "-"], b"again"),
        (["exec", "--approval-policy", "never", "--json", "-"], b"hi"),
        (["exec", "-s", "bogus", "--json", "-"], b"hi"),
        (["exec", "resume", "-s", "read-only", thread, "--json", "-"], b"hi"),
        (["exec", "--json", "--skip-git-repo-check", "-C", str(work), "-"], b""),
        (["exec", "--json", "-C", str(work), "-"], b"hi"),
    ]


def test_the_fake_codex_does_what_the_pinned_codex_does(
        codex_bin: Path, tmp_path: Path) -> None:
    """Same argv, same exit code, same events and the same first stderr line: a new
    thread, that thread resumed, an unknown thread, a flag exec rejects, a bad sandbox,
    `-s` after resume, an empty prompt, a folder outside git without the flag for it."""
    results = {}
    for who, binary in (("real", codex_bin), ("fake", FAKE)):
        work = tmp_path / who / "work"
        work.mkdir(parents=True)
        with ResponsesMock(default=text("mock reply")) as mock:
            home = mock.codex_home(tmp_path / who / "codex-home", model="gpt-5.5")
            env = {**mock.codex_env(home, tmp_path / who / "home"),
                   "FAKE_CODEX_PYTHON": sys.executable, "FAKE_CODEX_REPLY": "mock reply"}
            first = said(binary, differential_cases(work, "x")[0][0], env, work,
                         b"Is SQLite enough?")
            thread = next(json.loads(line)["thread_id"] for line in subprocess.run(
                [str(binary), *differential_cases(work, "x")[0][0]], input=b"q", env=env,
                cwd=work, capture_output=True, timeout=120, check=False).stdout.decode()
                .splitlines() if '"thread.started"' in line)
            results[who] = [first] + [said(binary, argv, env, work, prompt) for argv, prompt
                                      in differential_cases(work, thread)[1:]]
    paths = {str(tmp_path / who): "<tmp>" for who in ("real", "fake")}

    def plain(found: list[tuple[int, list[str], str]]) -> list[tuple[int, list[str], str]]:
        out = []
        for code, kinds, line in found:
            for real, placeholder in paths.items():
                line = line.replace(real, placeholder)
            out.append((code, kinds, line))
        return out

    real, fake = plain(results["real"]), plain(results["fake"])
    for n, (theirs, ours) in enumerate(zip(real, fake, strict=True)):
        assert theirs == ours, f"case {n}: the real codex {theirs}, the fake {ours}"


# -- the real codex's turns through sparring -----------------------------------------------------


@pytest.fixture
def scenario_codex(codex_bin: Path, tmp_path: Path, responses_mock: ResponsesMock,
                   monkeypatch: pytest.MonkeyPatch) -> Any:
    """The real codex for sparring's turns, pointed at the mock, set up as a scenario of
    support/codex_streams.py needs (its config, its answers)."""
    def setup(name: str) -> None:
        scenario = codex_streams.SCENARIOS[name]
        home = responses_mock.codex_home(tmp_path / "codex-home", model=scenario.model)
        with (home / "config.toml").open("a", encoding="utf-8") as config:
            config.write(scenario.config)
        if scenario.router is not None:
            responses_mock.router = scenario.router()
        else:
            assert scenario.answers is not None
            responses_mock.script(*scenario.answers())
        monkeypatch.setenv("SPARRING_CODEX", str(codex_bin))
        monkeypatch.setenv("CODEX_HOME", str(home))
        monkeypatch.setenv("MOCK_OPENAI_KEY", "dummy")
    return setup


ANALYSIS = ("# My analysis\n\n- C-1: " + codex_streams.mcp_notes.NOTE.replace("\n", ", ")
            + "; a sweep job every hour keeps the table small.\n")


def test_a_real_mcp_result_40_levels_deep_keeps_its_call_and_voids_independence(
        scenario_codex: Any, sparring: Any, scratch: Path, repo: Path) -> None:
    scenario_codex("mcp_call")
    debate = Debate(sparring, None, scratch)
    debate.start()
    waited = debate.wait("--full")
    assert waited["status"] == "completed", waited
    assert {"kind": "tool_call", "server": "notes", "tool": "read_note",
            "status": "completed"} in waited["activities"]
    done = sparring("wait", debate.sid, "--seal", debate.file("analysis.md", ANALYSIS))
    independence = done.out["independence"]
    assert independence["state"] == "void", independence
    assert independence["why"].startswith("in round one Codex's MCP tool call "
                                          "`notes.read_note {\"name\": \"draft\"}` showed it")


@pytest.mark.parametrize("name", ["usage_limit", "concurrency_limit"])
def test_real_usage_and_concurrency_limits_are_rate_limited(
        name: str, scenario_codex: Any, sparring: Any, scratch: Path, repo: Path) -> None:
    scenario_codex(name)
    debate = Debate(sparring, None, scratch)
    started = sparring("start", debate.sid, "--template", "think-about/round1", "--var",
                       "QUESTION=Redis or SQLite?")
    error = started.out["error"] if started.exit_code else debate.wait()["error"]
    assert error["code"] == "rate_limited", error
    if name == "usage_limit":
        assert error["retry_at"].endswith(" (local time)")
        assert error["hint"].startswith(f"wait until {error['retry_at']}, when Codex says")


def test_the_model_the_real_codex_ran_is_in_the_report(
        scenario_codex: Any, sparring: Any, scratch: Path, repo: Path) -> None:
    scenario_codex("answer")
    debate = Debate(sparring, None, scratch)
    version = codex_streams.CODEX_VERSION
    # Within start's window the real codex has recorded its turn (it begins in about 0.3 s);
    # on a machine too busy for that, start says it is not recorded yet.
    assert debate.start()["codex"] in (f"gpt-5-mock, effort high (codex {version})",
                                       f"the default model, effort high (codex {version}; "
                                       "not recorded yet)")
    report = debate.agreed_report()
    assert (f"- Codex: gpt-5-mock, effort high, every round (codex "
            f"{codex_streams.CODEX_VERSION};") in report
