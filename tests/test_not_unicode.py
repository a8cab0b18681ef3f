"""Text that no file can hold (issue 21): half a UTF-16 pair, as a `\\ud800` escape in JSON
or YAML makes it.

The bytes handed in are UTF-8 and the escape is six plain characters, so the UTF-8 check at
the check lets them through; the parser then makes a text that cannot be written as UTF-8.
Carried into session.json it survives (as an escape), but into a round file, a prompt or a
report it crashed the verb, and every later verb that wrote the session's report: a read-only
Codex answering so, or a verdict Claude was steered to write, ended the debate in
internal_error. Each is refused where it is parsed, with its own error and hint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.debates import FRAME, Debate, answer, cpt, pt


def test_codexs_json_answer_holding_half_a_pair_is_not_an_answer(
        sparring: Any, fake_codex: Any, scratch: Path) -> None:
    debate = Debate(sparring, fake_codex, scratch)
    reply = json.dumps(answer([cpt("X-1", "agree", claim="SQLite \ud800 wins")]))
    assert "\\ud800" in reply
    fake_codex.script([{"reply": reply}, {"reply": reply}])
    debate.start()
    debate.seal()
    waited = debate.wait()
    assert waited["error"]["code"] == "invalid_answer", waited
    judged = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
                             "convergence": {"state": "continue", "reason": "r"}})
    assert judged.error_code != "internal_error", judged.raw
    reported = sparring("report", debate.sid, "--out", str(scratch / "report.md"))
    assert reported.exit_code == 0, reported.raw


def test_a_verdict_holding_half_a_pair_is_refused_and_the_report_still_writes(
        sparring: Any, fake_codex: Any, scratch: Path) -> None:
    debate = Debate(sparring, fake_codex, scratch)
    fake_codex.script([{"reply": json.dumps(answer([cpt("X-1", "agree")]))}])
    debate.start()
    debate.seal()
    debate.wait()
    for body in ('{"points": [{"id": "X-1", "stance": "disagree", "class": '
                 '"genuine_disagreement", "evidence": ["a.py:1"], "note": "x \\ud800"}], '
                 '"convergence": {"state": "continue", "reason": "r"}}',
                 'points:\n- id: X-1\n  stance: disagree\n  class: genuine_disagreement\n'
                 '  evidence: ["a.py:1"]\n  note: "x \\ud800"\nconvergence:\n'
                 '  state: continue\n  reason: r\n'):
        refused = sparring("verdict", debate.sid, "--file", debate.file("v.json", body))
        assert refused.error_code == "verdict_invalid", refused.raw
        assert "UTF-16" in refused.out["error"]["message"]
    assert sparring("report", debate.sid, "--out", str(scratch / "r.md")).exit_code == 0


def test_vars_and_framings_holding_half_a_pair_are_refused(
        sparring: Any, fake_codex: Any, scratch: Path) -> None:
    (scratch / "vars.json").write_text('{"QUESTION": "q \\ud800"}')
    refused = sparring("render", "think-about/round1", "--vars-file", str(scratch / "vars.json"))
    assert refused.error_code == "usage_error" and "UTF-16" in refused.raw, refused.raw
    sid = sparring("discuss", "new", "--args", "-", input=b"high").out["session"]
    frame = FRAME.replace(b"TOPIC: Event sourcing for the billing service?",
                          b'TOPIC: "Event sourcing \\ud800 for billing?"')
    assert frame != FRAME
    (scratch / "frame.yaml").write_bytes(frame)
    framed = sparring("discuss", "frame", sid, "--file", str(scratch / "frame.yaml"))
    assert framed.error_code == "usage_error" and "UTF-16" in framed.raw, framed.raw


def test_an_argument_that_is_not_utf8_is_refused_before_anything(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    """Bytes that are not UTF-8 reach Python as surrogate escapes: a question or a --var
    holding them crashed `debate new` and `start` (internal_error) once they met a file."""
    question = b"Redis \xff or SQLite?".decode("utf-8", "surrogateescape")
    refused = sparring("debate", "new", "debate", question)
    assert refused.error_code == "not_utf8" and refused.out["error"]["argument"] == 4
    assert not (repo / "debate").exists()
    sid = sparring("init", "--skill", "think-about").out["session"]
    refused = sparring("start", sid, "--template", "think-about/round1", "--var",
                       f"QUESTION={question}")
    assert refused.error_code == "not_utf8", refused.raw
    assert fake_codex.calls() == []
    # Every round's calls refuse it the same way.
    for argv in (["status", question], ["poll", question], ["wait", question],
                 ["debate", "status", question], ["discuss", "status", question],
                 ["guard", "check", "--baseline", question]):
        assert sparring(*argv).error_code == "not_utf8", argv
