"""The typed records (records.py) describe the files sparring writes, once: the shape check
reads each record's keys and types from its class, every key a real session writes is
declared, and a session file from before the engine record still loads."""

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

# The records the shape check reads from records.py: a valid one of each, as sparring writes
# them, and for each a key it must have.
VALID: dict[Any, tuple[dict[str, Any], str]] = {
    records.Message: ({"round": 1, "speaker": "claude", "text": "hi"}, "speaker"),
    records.DebateRecord: ({"dir": "/p/d", "question": "q", "sent": {}, "max_rounds": 6},
                           "sent"),
    records.DiscussionRecord: ({"effort": "high", "model": "CODEX", "max_rounds": 10,
                                "topic": None, "messages": []}, "messages"),
    records.ProcessRecord: ({"pid": 12, "started": 1.5}, "started"),
}


def keys(record: Any) -> set[str]:
    return set(record.__annotations__)  # a TypedDict's own and its bases'


def test_every_turn_key_a_session_record_names_is_a_turn_records() -> None:
    assert {"n", "status", "settings", "runner", "answer_sha256"} <= keys(records.TurnRecord)


@pytest.mark.parametrize("record", list(VALID), ids=lambda r: r.__name__)
def test_a_record_is_checked_as_its_class_declares_it(record: Any) -> None:
    """One class per record: its keys and their types are what the shape check asks for."""
    valid, needed = VALID[record]
    assert shapes.record_problem(valid, record, "it") is None
    assert shapes.record_problem({k: v for k, v in valid.items() if k != needed}, record,
                                 "it") == f"it has no {needed!r}"
    assert shapes.record_problem({**valid, needed: True}, record, "it") is not None
    assert shapes.record_problem([valid], record, "it") == "it is not an object"


@pytest.mark.parametrize(("key", "value", "said"), [
    ("runner", {"pid": "12", "started": 1.0}, "turns[0].runner.pid is not a whole number"),
    ("status", "paused", "turns[0].status is not a turn status"),
    ("argv", ["codex", 3], "turns[0].argv[1] is not text"),
    ("summary_id", None, None),
    ("created_at", float("nan"), "turns[0].created_at is not a finite number"),
])
def test_a_turn_is_checked_as_turn_record_declares_it(
        key: str, value: Any, said: str | None, sparring: Any, session: str,
        repo: Path) -> None:
    data = Session(repo / ".sparring" / "sessions" / session).load()
    turn = {"n": 1, "round": 1, "purpose": "round", "status": "completed", "created_at": 1.0,
            "settings": {"effort": "high", "model": None, "sandbox": "read-only",
                         "timeout": 60.0, "stall_after": 60.0}, "argv": ["codex"]}
    assert shapes.session_problem({**data, "turns": [turn]}) is None
    assert shapes.session_problem({**data, "turns": [{**turn, key: value}]}) == said


def test_every_key_a_whole_debate_writes_is_declared(sparring: Any, fake_codex: Any,
                                                     repo: Path, scratch: Path) -> None:
    (repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    debate = Debate(sparring, fake_codex, scratch)
    fake_codex.script([{"reply": answer([cpt("X-1", "agree")], state="agree",
                                        proposed="SQLite, with TTL sweeps (X-1).")}])
    debate.start()
    debate.seal()
    debate.wait()
    agree = {"points": [pt("X-1", "agree", cls="genuine_agreement")], "position": "SQLite",
             "convergence": {"state": "agree", "reason": "we agree"}, "approve_summary": "S-1"}
    assert debate.verdict(agree).out["decision"] == "unchallenged"
    assert debate.sparring("verdict", debate.sid, "--rejudge", "1", "--file", debate.file(
        "again.json", {**agree, "message": "X-1: on reflection, the same"})).exit_code == 0
    debate.report(SYNTHESIS)
    path = repo / ".sparring" / "sessions" / debate.sid / "session.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) <= keys(records.SessionRecord), set(data) - keys(records.SessionRecord)
    for turn in data["turns"]:
        assert set(turn) <= keys(records.TurnRecord), set(turn) - keys(records.TurnRecord)
    state = data["engine"]
    # rejudged included; a concession sent back, a challenge turned off by start, and the
    # fallback of a decision a challenge tests do not arise here
    assert set(state) == keys(records.EngineRecord) - {"sent_back", "challenge_off"}
    assert set(state["seal"]) == keys(records.Seal)
    assert set(state["decisions"]["1"]) == keys(records.DecisionRecord) - {"fallback"}
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
