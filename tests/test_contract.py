"""The JSON output is a contract: pinned version, envelope keys and error codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.errors import CODES
from sparring.output import SCHEMA_VERSION

README = Path(__file__).resolve().parents[1] / "README.md"

# Renaming or removing one of these breaks every SKILL.md that branches on it.
PINNED_CODES = {
    "usage_error", "config_invalid", "codex_not_found", "codex_usage_error",
    "codex_start_failed", "codex_crashed", "codex_protocol_error", "turn_failed",
    "rate_limited", "turn_timeout", "turn_stalled", "turn_stopped", "runner_died",
    "thread_not_found", "session_not_found", "session_busy", "invalid_transition", "no_thread",
    "recovery_exhausted", "state_corrupt", "state_version_unsupported", "prompt_empty",
    "file_not_found", "not_writable", "internal_error", "budget_exhausted",
}


def test_schema_version_is_pinned() -> None:
    assert SCHEMA_VERSION == 1


def test_error_codes_are_only_ever_added() -> None:
    assert set(CODES) >= PINNED_CODES


def test_every_error_code_is_documented_in_the_readme() -> None:
    text = README.read_text()
    missing = [code for code in CODES if f"`{code}`" not in text]
    assert not missing, f"README lacks error codes: {missing}"


def test_success_and_error_envelopes(sparring: Any, repo: Path) -> None:
    ok = sparring("init", "--skill", "think-about").out
    assert {"schema_version", "ok", "verb"} <= set(ok) and ok["ok"] is True
    bad = sparring("poll", "nope").out
    assert set(bad) == {"schema_version", "ok", "verb", "error"}
    assert bad["ok"] is False and bad["verb"] == "poll"
    assert {"code", "message", "hint"} <= set(bad["error"])
    assert all(isinstance(bad["error"][k], str) and bad["error"][k] for k in
               ("code", "message", "hint"))


def test_usage_errors_are_json_too(sparring: Any, repo: Path) -> None:
    for args in (["start"], ["wait", "x", "--timeout", "soon"], ["frobnicate"],
                 ["start", "x", "--effort", "maximum"]):
        result = sparring(*args)
        assert result.exit_code == 2, args
        assert result.out["error"]["code"] == "usage_error"
        assert "--help" in result.out["error"]["hint"]


def test_help_is_plain_text_and_complete(sparring: Any) -> None:
    for verb in ("init", "start", "poll", "wait", "resume", "stop", "finalize", "status",
                 "doctor"):
        result = sparring(verb, "--help")
        assert result.exit_code == 0 and result.out == {}
        assert f"Usage: sparring {verb}" in result.raw
    assert "running|completed|failed|timeout|stalled|stopped" in sparring("poll", "--help").raw
