"""Settings: command line > sparring.yaml > defaults scaled by effort; typos are errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparring import config
from sparring.errors import SparringError
from sparring.workflows import registry


def test_defaults_scale_with_effort(tmp_path: Path) -> None:
    low = config.resolve_turn({"effort": "low"}, {})
    xhigh = config.resolve_turn({"effort": "xhigh"}, {})
    assert low["sandbox"] == "read-only" and low["model"] is None
    assert low["stall_after"] < xhigh["stall_after"] and low["timeout"] < xhigh["timeout"]
    assert config.resolve_turn({}, {})["effort"] == "high"


def test_file_settings_apply_and_the_command_line_wins(tmp_path: Path) -> None:
    (tmp_path / "sparring.yaml").write_text("effort: low\nstall_after: 42\nmodel: gpt-5.5\n")
    loaded = config.load(tmp_path)
    merged = config.resolve_turn({"effort": "medium", "stall_after": None}, loaded)
    assert (merged["effort"], merged["stall_after"], merged["model"]) == (
        "medium", 42.0, "gpt-5.5")


@pytest.mark.parametrize("text, needle", [
    ("stall_afer: 60\n", "unknown setting 'stall_afer'"),
    ("effort: extreme\n", "must be one of low, medium, high, xhigh"),
    ("timeout: -3\n", "'timeout': -3 is not a number of seconds from more than 0 to 86400"),
    ("timeout: .nan\n", "'timeout': nan is not a number of seconds"),
    ("stall_after: .inf\n", "'stall_after': inf is not a number of seconds"),
    ("timeout: -.inf\n", "'timeout': -inf is not a number of seconds"),
    ("timeout: 1000000000000\n", "'timeout': 1000000000000 is not a number of seconds"),
    ("timeout: '600'\n", "'timeout': must be a number of seconds, not the text '600'"),
    ("stall_after: true\n", "'stall_after': True is not a number of seconds"),
    ("- just\n- a list\n", "mapping"),
    ("think-about:\n  max_rounds: 0\n", "'think-about.max_rounds': 0 is not a whole number"),
    ("think-about:\n  max_rounds: 1000000\n", "from 1 to 100"),
    ("think-about:\n  max_rounds: .nan\n", "'think-about.max_rounds': nan is not a whole"),
    ("think-about:\n  rounds: 3\n", "unknown setting 'think-about.rounds'"),
    ("think-about: 3\n", "section 'think-about' must be a mapping"),
    ("think-about:\n  report_path: 'r/{when}.md'\n", "unknown placeholders ['when']"),
    ("think-about:\n  report_path: 'r/{slug:>3000000000}.md'\n", "['{slug:>3000000000}']"),
    ("deep-discussion:\n  report_path: 'r/{date!r}.md'\n", "placeholders are plain"),
    ("effort: [unclosed\n", "not valid YAML"),
    ("effort: " + "[" * 100_000 + "\n", "not valid YAML"),
])
def test_invalid_file_is_a_clear_error(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "sparring.yaml").write_text(text)
    with pytest.raises(SparringError) as err:
        registry.load_settings(tmp_path)
    assert err.value.code == "config_invalid"
    assert needle in err.value.message


def test_workflow_sections_override_their_defaults(tmp_path: Path) -> None:
    (tmp_path / "sparring.yaml").write_text("think-about:\n  max_rounds: 3\n")
    loaded = registry.load_settings(tmp_path)
    assert registry.settings(loaded, "think-about")["max_rounds"] == 3
    assert registry.settings(loaded, "arch-debate")["max_rounds"] == 6
    assert registry.settings({}, "deep-discussion")["report_path"].startswith(".kkachi/{branch}")


def test_sections_are_known_by_name_where_the_workflows_are_known(tmp_path: Path) -> None:
    """A misspelt section is refused by every verb that knows the workflows; a verb that
    only needs the turn settings (`start`) still checks what such a section holds."""
    (tmp_path / "sparring.yaml").write_text("thnk-about:\n  max_rounds: 3\n")
    with pytest.raises(SparringError, match="unknown setting 'thnk-about'"):
        registry.load_settings(tmp_path)
    assert config.load(tmp_path) == {"thnk-about": {"max_rounds": 3}}
    (tmp_path / "sparring.yaml").write_text("thnk-about:\n  rounds: 3\n")
    with pytest.raises(SparringError, match=r"unknown setting 'thnk-about\.rounds'"):
        config.load(tmp_path)


def test_a_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "sparring.yaml").write_bytes(b"effort: high\nmodel: caf\xe9\n")
    with pytest.raises(SparringError) as err:
        config.load(tmp_path)
    assert err.value.code == "not_utf8" and "sparring.yaml is not UTF-8" in err.value.message
