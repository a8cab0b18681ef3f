"""A decision never changes silently (issue 11, case 6; issue 21, case 10): verdicts are
recorded under the session lock, the same verdict twice changes nothing, a different one needs
--rejudge ROUND naming its round before the next round starts (rejudge_too_late after) and is
kept with the first in the record and the report, and a verdict racing another gets
session_busy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sparring.store.sessions import Session
from support.debates import SYNTHESIS, Debate, answer, cpt, pt

CONSENSUS = {"points": [pt("X-1", "agree", cls="genuine_agreement")],
             "convergence": {"state": "agree", "reason": "we agree"}, "approve_summary": "S-1"}
CONTINUE = {"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
            "convergence": {"state": "continue", "reason": "on reflection, no"}}


# An agreement no point was disputed on, with the challenge turn off: the verdicts' record is
# what these tests are about, not what tests an agreement.
AGREED = "unchallenged"


@pytest.fixture
def debate(sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> Debate:
    (repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    found = Debate(sparring, fake_codex, scratch)
    fake_codex.script([{"reply": answer([cpt("X-1", "agree")], state="agree",
                                        proposed="SQLite, with TTL sweeps (X-1).")},
                       {"reply": answer([cpt("X-1", "agree")])}])
    found.start()
    found.seal()
    found.wait()
    return found


def engine_state(repo: Path, sid: str) -> dict[str, Any]:
    data: dict[str, Any] = Session(repo / ".sparring" / "sessions" / sid).load()["engine"]
    return data


def test_a_different_verdict_for_a_decided_round_is_refused(debate: Debate, repo: Path) -> None:
    first = debate.verdict(CONSENSUS)
    assert first.out["decision"] == AGREED
    refused = debate.verdict(CONTINUE)
    assert refused.error_code == "already_judged", refused.raw
    assert "--rejudge 1" in refused.out["error"]["hint"]
    state = engine_state(repo, debate.sid)
    assert state["decisions"]["1"]["decision"] == AGREED
    assert state["verdicts"]["1"]["convergence"]["reason"] == "we agree"
    assert not state.get("rejudged")
    assert len(debate.fake.turn_calls()) == 1  # nothing started


def test_the_same_verdict_again_changes_nothing(debate: Debate, repo: Path) -> None:
    first = debate.verdict(CONSENSUS)
    again = debate.verdict(CONSENSUS)
    assert again.exit_code == 0 and again.out["already_judged"] is True
    assert again.out["decision"] == first.out["decision"] == AGREED
    assert not engine_state(repo, debate.sid).get("rejudged")


def test_rejudging_is_explicit_kept_with_both_versions_and_reported(debate: Debate,
                                                                    repo: Path) -> None:
    assert debate.verdict(CONSENSUS).out["decision"] == AGREED
    debate.n += 1
    changed = debate.sparring("verdict", debate.sid, "--rejudge", "1",
                              "--file", debate.file("v-rejudge.json", CONTINUE))
    assert changed.exit_code == 0, changed.raw
    assert changed.out["decision"] == "continue"
    assert changed.out["rejudged"] == {"round": 1, "before": AGREED, "after": "continue"}
    [record] = engine_state(repo, debate.sid)["rejudged"]
    assert record["before"]["verdict"]["convergence"]["reason"] == "we agree"
    assert record["before"]["decision"]["decision"] == AGREED
    assert record["after"]["verdict"]["convergence"]["reason"] == "on reflection, no"
    out, text = debate.report(SYNTHESIS)
    assert "Re-judged rounds" in text and f"decision {AGREED} → continue" in text
    saved = json.loads(Path(out["json"]).read_text())
    assert saved["rejudged"][0]["verdicts"]["before"]["approve_summary"] == "S-1"


def test_no_rejudging_once_the_next_round_started(debate: Debate, repo: Path) -> None:
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")], state="agree",
                                         proposed="SQLite.")},
                        {"mode": "slow", "delay": 2, "reply": answer([cpt("X-1", "agree")])}])
    started = debate.verdict(CONTINUE)
    assert started.out["next"]["action"] == "wait"
    debate.n += 1
    late = debate.sparring("verdict", debate.sid, "--rejudge", "1",
                           "--file", debate.file("late.json", CONSENSUS))
    assert late.error_code == "rejudge_too_late", late.raw
    assert "round 1" in late.out["error"]["message"] and "round 2" in late.out["error"]["message"]
    assert engine_state(repo, debate.sid)["decisions"]["1"]["decision"] == "continue"
    debate.fake.release()
    debate.wait()
    # Round 2 answered: a re-judgement of round 1 is still refused, never taken for round 2's
    # verdict (it was, before --rejudge named its round).
    again = debate.sparring("verdict", debate.sid, "--rejudge", "1",
                            "--file", debate.file("late-again.json", CONSENSUS))
    assert again.error_code == "rejudge_too_late", again.raw
    state = engine_state(repo, debate.sid)
    assert "2" not in state["decisions"] and state["decisions"]["1"]["decision"] == "continue"
    # Round 2 has no verdict yet: there is nothing of it to re-judge either.
    early = debate.sparring("verdict", debate.sid, "--rejudge", "2",
                            "--file", debate.file("early.json", CONSENSUS))
    assert early.error_code == "invalid_transition" and "no verdict" in early.raw
    judged = debate.verdict(CONSENSUS)
    assert judged.out["round"] == 2
    state = engine_state(repo, debate.sid)
    assert state["decisions"]["1"]["decision"] == "continue" and not state.get("rejudged")


def test_rejudge_names_a_round_that_exists(debate: Debate) -> None:
    assert debate.verdict(CONSENSUS).out["decision"] == AGREED
    ahead = debate.sparring("verdict", debate.sid, "--rejudge", "3",
                            "--file", debate.file("ahead.json", CONTINUE))
    assert ahead.error_code == "invalid_transition" and "--rejudge 1" in ahead.raw
    assert debate.sparring("verdict", debate.sid, "--rejudge", "0", "--file",
                           debate.file("zero.json", CONTINUE)).error_code == "usage_error"


def test_racing_verdicts_one_wins_the_other_is_told(debate: Debate, repo: Path,
                                                    scratch: Path) -> None:
    """Two `sparring verdict` processes at once with different verdicts: exactly one is
    recorded; the other gets session_busy or already_judged, never a silent success."""
    files = [debate.file(f"race-{i}.json", body) for i, body in enumerate((CONSENSUS,
                                                                           CONTINUE))]
    # Hold the verdict lock, as a verdict being recorded does, and send both meanwhile.
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK,
                               str(repo / ".sparring" / "sessions" / debate.sid)],
                              stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
    busy = [debate.sparring("verdict", debate.sid, "--file", f) for f in files]
    assert [r.error_code for r in busy] == ["session_busy", "session_busy"]
    assert holder.communicate(b"go\n", timeout=10)[1] is None
    runs = [subprocess.Popen([sys.executable, "-m", "sparring", "verdict", debate.sid,
                              "--file", f], cwd=repo, stdout=subprocess.PIPE) for f in files]
    outs = [json.loads(r.communicate(timeout=60)[0]) for r in runs]
    codes = sorted((o.get("error") or {}).get("code", "ok") for o in outs)
    assert codes in (["already_judged", "ok"], ["ok", "session_busy"]), outs
    winner = next(o for o in outs if o["ok"])
    assert engine_state(repo, debate.sid)["decisions"]["1"]["decision"] == winner["decision"]


HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(os.path.join(sys.argv[1], "verdict.lock"), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.readline()
"""
