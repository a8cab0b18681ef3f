"""Input nested absurdly deep (case 10 of issue 11) is refused with the verb's own error code,
never an internal_error from a RecursionError, and the session stays usable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparring import jsontext
from sparring.codex import events
from support.debates import Debate, answer, cpt, pt

DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_YAML = "points: " + "[" * 100_000 + "]" * 100_000 + "\n"
SHALLOW_BUT_TOO_DEEP = json.dumps({"points": [], "convergence": {"state": "continue",
                                                                 "reason": "r"},
                                   "message": "x", "position": "p",
                                   "proposed_summary": None}).replace(
    '"x"', "[" * 40 + "]" * 40)


@pytest.fixture
def debate(sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> Debate:
    return Debate(sparring, fake_codex, scratch)


def _answered(debate: Debate) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    debate.seal()
    debate.wait()


@pytest.mark.parametrize("body", [DEEP_JSON, "{\"points\": " + DEEP_JSON + "}", DEEP_YAML,
                                  SHALLOW_BUT_TOO_DEEP])
def test_a_deeply_nested_verdict_is_verdict_invalid(debate: Debate, body: str) -> None:
    _answered(debate)
    refused = debate.sparring("verdict", debate.sid, "--file", debate.file("deep.json", body))
    assert refused.exit_code == 1 and refused.error_code == "verdict_invalid", refused.raw[:300]
    assert "nested" in refused.out["error"]["message"]
    judged = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                             "convergence": {"state": "continue", "reason": "r"}})
    assert judged.exit_code == 0, judged.raw


@pytest.mark.parametrize("body", [DEEP_JSON, DEEP_YAML])
def test_a_deeply_nested_synthesis_is_synthesis_invalid(debate: Debate, repo: Path,
                                                        body: str) -> None:
    _answered(debate)
    refused = debate.sparring("report", debate.sid, "--synthesis",
                              debate.file("synthesis.json", body))
    assert refused.error_code == "synthesis_invalid", refused.raw[:300]
    assert not (repo / "docs").exists()  # no report written


def test_deeply_nested_yaml_for_the_workflow_verbs_is_a_usage_error(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    talk = sparring("discuss", "new", "--args", "high").out["session"]
    deep = ("TOPIC: " + "[" * 100_000 + "]" * 100_000 + "\n").encode()
    refused = sparring("discuss", "frame", talk, input=deep)
    assert refused.error_code == "usage_error" and "nested" in refused.out["error"]["message"]
    vars_file = scratch / "vars.json"
    vars_file.write_text("{\"QUESTION\": " + DEEP_JSON + "}")
    rendered = sparring("render", "think-about/round1", "--vars-file", str(vars_file))
    assert rendered.error_code == "usage_error", rendered.raw[:300]
    assert fake_codex.turn_calls() == []


def test_a_deeply_nested_codex_answer_is_not_an_answer(debate: Debate) -> None:
    debate.fake.script([{"reply": DEEP_JSON}, {"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    debate.seal()
    out = debate.wait()
    assert out["status"] == "completed" and out["purpose"] == "reask", out
    assert out["review"]["data"]["points"][0]["id"] == "X-1"


def test_a_deeply_nested_event_line_keeps_its_text() -> None:
    """An event nesting past the bound is read, never dropped: its structure is cut there
    and its text kept, however deep (past what the standard library's json parses too)."""
    deep = ('{"type":"item.completed","item":{"id":"a","type":"x","status":'
            + "[" * 100_000 + '"buried words"' + "]" * 100_000 + "}}\n")
    nested = ('{"type":"item.completed","item":{"id":"b","type":"x","status":'
              + '{"k":' * 900 + '"deep text"' + "}" * 900 + "}}\n")
    view = events.parse((deep + nested).encode(), finished=True)
    assert view.malformed == 0 and view.events == 2
    statuses = [a["status"] for a in view.activities]
    assert not jsontext.too_deep(statuses) and jsontext.text_of(statuses[0]) == "buried words"
    assert jsontext.text_of(statuses[1]).endswith("k\ndeep text")


def test_a_deep_line_that_is_not_json_is_still_malformed() -> None:
    broken = ('{"type":"item.completed","item":{"id":"a","type":"x","status":'
              + "[" * 100_000 + '"w"' + "]" * 99_999 + "}}\n")
    view = events.parse(broken.encode(), finished=True)
    assert view.malformed == 1 and view.events == 0


def test_half_a_utf16_pair_is_mended_not_dropped() -> None:
    line = b'{"type":"item.completed","item":{"id":"a","type":"x","status":"ok \\ud800 go"}}\n'
    view = events.parse(line, finished=True)
    assert view.malformed == 0 and view.activities[0]["status"] == "ok \ufffd go"
