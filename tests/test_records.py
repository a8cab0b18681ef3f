"""The typed records (records.py) describe the files sparring writes: every key shapes.py
checks, and every key a real session writes, is declared; a session file from before the
engine record still loads and is judged as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparring import records
from sparring.store import shapes
from sparring.store.sessions import Session
from sparring.workflows.registry import WORKFLOWS
from support.debates import SYNTHESIS, Debate, answer, cpt, pt

RECORDS = [(records.SessionRecord, shapes._SESSION), (records.TurnRecord, shapes._TURN),
           (records.EngineRecord, shapes._ENGINE), (records.DebateRecord, shapes._DEBATE),
           (records.DiscussionRecord, shapes._DISCUSSION), (records.Message, shapes._MESSAGE)]


def keys(record: Any) -> set[str]:
    return set(record.__annotations__)


@pytest.mark.parametrize(("record", "shape"), RECORDS, ids=[r.__name__ for r, _ in RECORDS])
def test_every_key_shapes_checks_is_declared(record: Any, shape: dict[str, str]) -> None:
    assert set(shape) <= keys(record)


def test_every_key_a_whole_debate_writes_is_declared(sparring: Any, fake_codex: Any,
                                                     repo: Path, scratch: Path) -> None:
    debate = Debate(sparring, fake_codex, scratch)
    fake_codex.script([{"reply": answer([cpt("X-1", "agree")], state="agree",
                                        proposed="SQLite, with TTL sweeps.")}])
    debate.start()
    debate.seal()
    debate.wait()
    agree = {"points": [pt("X-1", "agree", cls="genuine_agreement")], "position": "SQLite",
             "convergence": {"state": "agree", "reason": "we agree"}, "approve_summary": "S-1"}
    assert debate.verdict(agree).out["decision"] == "consensus"
    assert debate.sparring("verdict", debate.sid, "--rejudge", "1", "--file", debate.file(
        "again.json", {**agree, "message": "on reflection, the same"})).exit_code == 0
    debate.report(SYNTHESIS)
    path = repo / ".sparring" / "sessions" / debate.sid / "session.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) <= keys(records.SessionRecord), set(data) - keys(records.SessionRecord)
    for turn in data["turns"]:
        assert set(turn) <= keys(records.TurnRecord), set(turn) - keys(records.TurnRecord)
    state = data["engine"]
    assert set(state) == keys(records.EngineRecord)  # rejudged included
    assert set(state["seal"]) == keys(records.Seal)
    assert set(state["decisions"]["1"]) == keys(records.DecisionRecord)
    assert set(state["rejudged"][0]) == keys(records.Rejudged)
    assert set(state["verdicts"]["1"]) <= keys(records.Verdict)
    assert set(data["turns"][0]["answer"]) == keys(records.Answer)


def test_a_session_from_before_the_engine_record_loads_and_gets_one(sparring: Any,
                                                                   repo: Path) -> None:
    sid = sparring("init", "--skill", "dual-model").out["session"]
    session = Session(repo / ".sparring" / "sessions" / sid)
    with session.update() as data:
        del data["engine"]  # as the runner wrote sessions before the debate engine
    assert "engine" not in json.loads(session.state.path.read_text())
    status = sparring("status", sid)
    assert status.exit_code == 0, status.raw
    state = session.load()["engine"]
    assert state == WORKFLOWS["dual-model"].engine_record() and state["barrier"] is True
    with session.update():
        pass
    assert json.loads(session.state.path.read_text())["engine"] == state
