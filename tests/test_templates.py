"""Prompt templates: strict, literal, and every one of them renders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparring import templates
from sparring.errors import SparringError

USAGE = {"input_tokens": 10, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
         "output_tokens": 5, "reasoning_output_tokens": 0}
# The report model (report.py) with nothing in it but what every report has.
REPORT = {"R": {
    "title": "Q?", "constraints": None, "skill": "think-about", "session": "s",
    "generated_at": "now", "date": "2026-12-02", "decision_makers": ["Claude"],
    "consulted": [], "revisit_when": [],
    "outcome": "incomplete: no round was judged", "outcome_reasons": [], "decision": None,
    "degraded": [], "consensus_points": [], "rejected_points": [], "disagreements": [],
    "confidence": None, "choices": None, "challenge": None, "codex_position": None,
    "claude_position": None, "summary": None, "synthesis": None, "sources": [],
    "agreement_audit": {
        "summary": "Agreement: no points on record.", "counts": {"independent": 0},
        "unchallenged": False, "points": [], "concessions": [], "minority": [],
        "contested": [],
        "independence": {"state": "not_measured", "why": "never sealed", "seen": []},
        "notes": [], "moved": {"sentence": None}, "revisit_when": []},
    "rounds": [], "usage_total": USAGE, "budget": None,
    "duration_s": 0,
    "codex": {"path": None, "version": None},
    "applied": {"effort": "high", "model": None, "sandbox": "read-only",
                "source": "command line"},
    "codex_ran": {"line": "Codex did not run", "warnings": []},
    "claude_ran": {"line": "Claude: claude-test, every round", "models": ["claude-test"]},
    "codex_part": {"every_round": False, "rounds": [], "answered": [], "threads": [],
                   "models": [], "tokens": 0, "line": "Codex took part in no round"},
    "sandbox": None,
    "seal": None, "guard": [], "rejudged": []}}

# The smallest context each template renders with. A new template without an
# entry here fails test_every_template_has_a_minimal_context.
MINIMAL: dict[str, dict[str, Any]] = {
    "think-about/round1": {"QUESTION": "Q?"},
    "think-about/claude-analysis": {"QUESTION": "Q?"},
    "think-about/round2+": {"AGREED_POINTS": "-", "DISAGREED_POINTS": "-",
                            "NEW_PERSPECTIVES": "-", "CONTINUE_OR_CONSENSUS_OR_STALEMATE": "go"},
    "dual-model/dispatch": {"QUESTION": "Q?"},
    "dual-model/continue": {"FOLLOW_UP": "why?"},
    "reconsider": {"POINTS": [{"point": "X-2", "from": "disagree", "to": "agree",
                               "evidence": [{"cited": "a.py:3", "mark": "not_matching",
                                             "why": "the quote is not there"}]}]},
    "challenge": {"QUESTION": "Q?", "SUMMARY": "X-1 holds.", "POINTS": "- **X-1** (agreed)",
                  "NEXT_ID": 2},
    "arch-debate/protocol": {"QUESTION": "Q?"},
    "arch-debate/codex-round": {"ROUND": 2, "FIRST_TURN": False,
                                "CLAUDE_ROUND": "text", "CLAUDE_AGREED": False},
    "arch-debate/agreed": {"ROUND": 3, "QUESTION": "Q?", "PROPOSED_BY": "Claude",
                           "PROPOSED_IN": "round-2-claude.md", "CONFIRMED_BY": "Codex",
                           "CONFIRMED_IN": "round-3-codex.md", "BRIEF": "b", **REPORT},
    "arch-debate/decision-needed": {"QUESTION": "Q?", "STUCK": "stuck", "RULE_BREAKS": [],
                                    "ROUNDS": [{"round": 0, "claude": "c", "codex": ""}],
                                    **REPORT},
    "deep-discussion/first": {"TOPIC": "t", "FRAMING": "f", "EFFORT": "high",
                              "CLAUDE_VIEW": "v"},
    "deep-discussion/round": {"ROUND": 2, "CLAUDE_RESPONSE": "r"},
    "deep-discussion/synthesis": {"TOPIC": "t", "OUTCOME": "consensus"},
    "deep-discussion/report": {**REPORT, "D": {
        "timestamp": "now", "topic": "Q?", "framing": "f", "model": "CODEX", "effort": "high",
        "rounds": 0, "consensus": False, "transcript": [], "codex_synthesis": None,
        "synthesis": dict.fromkeys(("agreed_points", "key_trade_offs", "recommended_approach",
                                    "open_questions", "implementation_hints",
                                    "final_observations"), "-")}},
    "think-about/report": REPORT,
    "dual-model/report": REPORT,
    "reask": {"PROBLEMS": "- points[0].stance: 'maybe' is not one of the allowed values"},
}


def test_every_template_has_a_minimal_context() -> None:
    assert sorted(MINIMAL) == [n for n in templates.names() if n in MINIMAL]
    assert set(templates.names()) <= set(MINIMAL), "add the new template to MINIMAL"


@pytest.mark.parametrize("name", sorted(MINIMAL))
def test_each_template_renders_with_its_minimal_context(name: str) -> None:
    text = templates.render(name, MINIMAL[name])
    assert text.strip()
    assert "{{" not in text and "{%" not in text
    for value in MINIMAL[name].values():
        if isinstance(value, str) and len(value) > 2:
            assert value in text
    if "R" in MINIMAL[name]:  # every record ends with how the run went
        assert "## Process" in text and "Q?" in text


@pytest.mark.parametrize("name", sorted(MINIMAL))
def test_each_required_variable_is_enforced(name: str) -> None:
    for missing in MINIMAL[name]:
        context = {k: v for k, v in MINIMAL[name].items() if k != missing}
        with pytest.raises(SparringError) as err:
            templates.render(name, context)
        assert err.value.code == "template_missing_var"
        assert err.value.details["variable"] == missing


def test_user_text_is_inserted_literally() -> None:
    nasty = "{{ 7*7 }} {% for x in y %}boom{% endfor %} `rm -rf /` $(id) \"q\" 'q' {#c#}"
    text = templates.render("think-about/round1", {"QUESTION": nasty})
    assert nasty in text and "49" not in text


def test_render_cli_names_the_missing_variable(sparring: Any, repo: Path) -> None:
    result = sparring("render", "think-about/round1", "--var", "CONSTRAINTS=none")
    assert result.exit_code == 1
    assert result.out["error"]["code"] == "template_missing_var"
    assert "QUESTION" in result.out["error"]["message"]


def test_unknown_template_lists_the_available_ones(sparring: Any, repo: Path) -> None:
    result = sparring("render", "think-about/round3")
    assert result.out["error"]["code"] == "template_not_found"
    assert "think-about/round1" in result.out["error"]["hint"]


def test_variables_from_yaml_json_files_and_options(sparring: Any, repo: Path,
                                                    scratch: Path) -> None:
    (scratch / "v.yaml").write_text("QUESTION: from yaml\nCONSTRAINTS: |\n  multi\n  line\n")
    (scratch / "v.json").write_text(json.dumps({"QUESTION": "from json"}))
    (scratch / "ctx.md").write_text("context with `backticks` and {{ braces }}\n")
    out = sparring("render", "think-about/round1", "--vars-file", str(scratch / "v.yaml"),
                   "--var-file", f"PROJECT_CONTEXT={scratch / 'ctx.md'}").out
    assert "from yaml" in out["text"] and "multi\nline" in out["text"]
    assert "context with `backticks` and {{ braces }}" in out["text"]
    out = sparring("render", "think-about/round1", "--vars-file", str(scratch / "v.json"),
                   "--var", "QUESTION=from the option").out
    assert "from the option" in out["text"]
    raw = sparring("render", "think-about/round1", "--var", "QUESTION=raw?", "--raw").raw
    assert raw.startswith("You are the second of two independent analysts") and "raw?" in raw


@pytest.mark.parametrize("args, code", [
    (["--var", "NOEQUALS"], "usage_error"),
    (["--var", "=value"], "usage_error"),
    (["--vars-file", "no/such.yaml"], "file_not_found"),
    (["--var-file", "QUESTION=no/such.md"], "file_not_found"),
    (["--vars-file", "/no/such.yaml"], "path_outside_project"),  # outside: refused unread
    (["--var-file", "QUESTION=/no/such.md"], "path_outside_project"),
])
def test_bad_variables_are_clear_errors(sparring: Any, repo: Path, args: list[str],
                                        code: str) -> None:
    result = sparring("render", "think-about/round1", *args)
    assert result.out["error"]["code"] == code


def test_vars_file_must_be_a_mapping(sparring: Any, repo: Path, scratch: Path) -> None:
    (scratch / "list.yaml").write_text("- a\n- b\n")
    result = sparring("render", "think-about/round1", "--vars-file", str(scratch / "list.yaml"))
    assert result.out["error"]["code"] == "usage_error"
    assert "mapping" in result.out["error"]["message"]


def test_start_sends_the_rendered_template(sparring: Any, session: str,
                                           fake_codex: Any) -> None:
    fake_codex.mode("ok")
    started = sparring("start", session, "--template", "think-about/round1",
                       "--var", "QUESTION=Redis or SQLite for sessions?")
    assert started.exit_code == 0, started.raw
    sparring("wait", session)
    expected = templates.render("think-about/round1",
                                {"QUESTION": "Redis or SQLite for sessions?"})
    assert fake_codex.stdin_of(-1) == expected.encode()


def test_template_and_prompt_file_are_exclusive(sparring: Any, session: str,
                                                scratch: Path) -> None:
    (scratch / "p.md").write_text("x")
    result = sparring("start", session, "--template", "think-about/round1",
                      "--prompt-file", str(scratch / "p.md"), "--var", "QUESTION=q")
    assert result.out["error"]["code"] == "usage_error"
    orphan_var = sparring("start", session, "--var", "QUESTION=q", input=b"x")
    assert orphan_var.out["error"]["code"] == "usage_error"


# Every prompt sparring writes for Codex: it names neither side (the other one is "the other
# analyst"), and asks for no confidence the other side would see.
CODEX_BOUND = ("think-about/round1", "think-about/round2+", "dual-model/dispatch",
               "dual-model/continue", "reask", "reconsider", "challenge", "arch-debate/protocol",
               "arch-debate/codex-round", "deep-discussion/first", "deep-discussion/round",
               "deep-discussion/synthesis")
EVERY_BRANCH: dict[str, dict[str, Any]] = {
    "think-about/round1": {"OPTIONS": "Redis\nSQLite", "OUTPUT_FORMAT": "a table",
                           "PROJECT_CONTEXT": "c", "RELEVANT_FILES": "f", "CONSTRAINTS": "k"},
    "think-about/round2+": {"MESSAGE": "X-1: why?", "REJECTED_POINTS": "- C-1", "ROUND": 3},
    "dual-model/dispatch": {"OPTIONS": "Redis\nSQLite", "FOCUS": "load", "CONTEXT": "c"},
    "dual-model/continue": {"POINTS_OF_DIFFERENCE": "- X-2"},
    "arch-debate/codex-round": {"FIRST_TURN": True, "DEBATE_DIR": "debate", "PROTOCOL": "p",
                                "CLAUDE_AGREED": True},
    "deep-discussion/first": {"CONTEXT": "c", "MAX_ROUNDS": 4},
    "deep-discussion/round": {"SEARCH_RESULTS": "r"},
}


@pytest.mark.parametrize("name", CODEX_BOUND)
def test_no_prompt_for_codex_names_a_side(name: str) -> None:
    for context in (MINIMAL[name], {**MINIMAL[name], **EVERY_BRANCH.get(name, {})}):
        text = templates.render(name, context).casefold()
        assert "claude" not in text and "anthropic" not in text, name
    assert set(CODEX_BOUND) <= set(templates.names())
