"""Limits: NaN, infinities and absurd values are refused wherever a limit is read (options,
SPARRING_* variables, sparring.yaml, `wait --timeout`), nothing starts, the session stays
usable, and no output ever contains NaN."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from sparring.output import emit

BAD = ["nan", "NaN", "inf", "-inf", "1e309", "1e9", "-1", "0"]


def strict_json(text: str) -> Any:
    """Parse as JSON proper: Python's NaN / Infinity extensions are an error."""
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the output: {text}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("option", ["--timeout", "--stall-after"])
def test_a_bad_limit_option_starts_nothing(sparring: Any, session: str, fake_codex: Any,
                                           option: str, value: str) -> None:
    refused = sparring("start", session, option, value, input=b"q")
    assert refused.exit_code == 2 and refused.error_code == "usage_error"
    assert "not a number of seconds" in refused.out["error"]["message"]
    strict_json(refused.raw)
    assert fake_codex.turn_calls() == []
    # The session is as it was: the same start with a sane limit works.
    started = sparring("start", session, option, "30", input=b"q")
    assert started.exit_code == 0, started.raw
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"


@pytest.mark.parametrize("variable", ["SPARRING_TIMEOUT", "SPARRING_STALL_AFTER"])
@pytest.mark.parametrize("value", ["nan", "inf", "1e12", "soon"])
def test_a_bad_limit_variable_is_config_invalid(sparring: Any, session: str, fake_codex: Any,
                                                monkeypatch: pytest.MonkeyPatch, variable: str,
                                                value: str) -> None:
    monkeypatch.setenv(variable, value)
    refused = sparring("start", session, input=b"q")
    assert refused.error_code == "config_invalid", refused.raw
    assert variable in refused.out["error"]["message"] and variable in refused.out["error"]["hint"]
    assert fake_codex.turn_calls() == []
    monkeypatch.delenv(variable)
    assert sparring("start", session, input=b"q").exit_code == 0


@pytest.mark.parametrize("line", ["timeout: .nan", "stall_after: .inf", "timeout: 10000000"])
def test_a_bad_limit_in_sparring_yaml_is_config_invalid(sparring: Any, session: str,
                                                        fake_codex: Any, repo: Path,
                                                        line: str) -> None:
    (repo / "sparring.yaml").write_text(line + "\n")
    refused = sparring("start", session, input=b"q")
    assert refused.error_code == "config_invalid", refused.raw
    assert fake_codex.turn_calls() == []


def test_limits_of_the_workflow_verbs_are_checked_too(sparring: Any, repo: Path,
                                                      fake_codex: Any) -> None:
    new = sparring("discuss", "new", "--args", "high")
    framing = b"TOPIC: t\nFRAMING: f\nCLAUDE_VIEW: v\n"
    refused = sparring("discuss", "frame", new.out["session"], "--timeout", "nan",
                       input=framing)
    assert refused.error_code == "usage_error"
    debate = sparring("debate", "new", "debate/x", "Which queue?")
    refused = sparring("debate", "round", "debate/x", "--stall-after", "inf", input=b"r")
    assert debate.exit_code == 0 and refused.error_code == "usage_error"
    assert fake_codex.turn_calls() == []


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e9"])
def test_wait_refuses_a_timeout_it_could_never_reach(sparring: Any, session: str,
                                                     value: str) -> None:
    began = time.monotonic()
    refused = sparring("wait", session, "--timeout", value)
    assert refused.error_code == "usage_error" and time.monotonic() - began < 5


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "31"])
def test_a_bad_start_window_is_refused_before_anything_starts(
        sparring: Any, session: str, fake_codex: Any, monkeypatch: pytest.MonkeyPatch,
        value: str) -> None:
    monkeypatch.setenv("SPARRING_STARTSECS", value)
    refused = sparring("start", session, input=b"q")
    assert refused.error_code == "config_invalid", refused.raw
    assert "SPARRING_STARTSECS" in refused.out["error"]["message"]
    assert fake_codex.turn_calls() == []
    assert sparring("status", session).out["turns"] == []


def test_a_state_file_holding_nan_is_state_corrupt_never_printed(
        sparring: Any, session: str, repo: Path) -> None:
    assert sparring("start", session, input=b"q").exit_code == 0
    sparring("wait", session, "--timeout", "30")
    path = repo / ".sparring" / "sessions" / session / "session.json"
    text = path.read_text()
    data = json.loads(text)
    assert data["turns"][0]["settings"]["timeout"] > 0
    tampered = text.replace(f'"timeout": {json.dumps(data["turns"][0]["settings"]["timeout"])}',
                            '"timeout": NaN', 1)
    assert tampered != text
    path.write_text(tampered)
    for verb in ("poll", "wait", "status"):
        result = sparring(verb, session)
        assert result.error_code == "state_corrupt", result.raw
        strict_json(result.raw)
    assert path.read_text() == tampered  # left exactly as it was


def test_output_never_contains_nan(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr("sys.stdout", buffer)
    emit({"ok": True, "elapsed_s": float("nan"), "nested": [{"x": float("inf")}, 1.5]})
    assert strict_json(buffer.getvalue()) == {"ok": True, "elapsed_s": None,
                                              "nested": [{"x": None}, 1.5]}
