"""Picking a debate up where it stopped: `sparring status --open` lists the project's
unfinished sessions, each with its question and the step its record says comes next, for a
conversation that lost track of it (a new one, or one whose context was reset)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.debates import FRAME, ArchDebate, Debate, Discussion, answer, cpt, pt


def open_sessions(sparring: Any) -> dict[str, dict[str, Any]]:
    listed = sparring("status", "--open")
    assert listed.exit_code == 0, listed.raw
    return {row["session"]: row for row in listed.out["sessions"]}


def test_think_about_picks_up_at_the_verdict_then_at_the_next_round(
        sparring: Any, fake_codex: Any, scratch: Path) -> None:
    fake_codex.script([{"reply": answer([cpt("X-1", "agree"), cpt("X-2", "disagree")])},
                       {"mode": "slow", "delay": 3, "reply": answer([cpt("X-2", "disagree")])}])
    debate = Debate(sparring, fake_codex, scratch)
    assert "think-about/round1" in open_sessions(sparring)[debate.sid]["next"]
    debate.start()
    debate.seal()
    debate.wait()

    row = open_sessions(sparring)[debate.sid]
    assert row["question"] == "Should sessions live in Redis or SQLite?"
    assert "not judged" in row["next"]
    assert f"sparring wait {debate.sid}`" in row["next"]
    assert f"sparring verdict {debate.sid} --file" in row["next"]

    judged = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement"),
                                        pt("X-2", "disagree", cls="genuine_disagreement")],
                             "convergence": {"state": "continue", "reason": "X-2"}})
    assert judged.out["next"]["started"]
    assert f"Codex is answering round 2: `sparring wait {debate.sid}`" in \
        open_sessions(sparring)[debate.sid]["next"]
    fake_codex.release()
    debate.wait()
    assert "round 2 and you have not judged it" in open_sessions(sparring)[debate.sid]["next"]


def test_think_about_before_the_seal_picks_up_at_the_seal(
        sparring: Any, fake_codex: Any, scratch: Path) -> None:
    fake_codex.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate = Debate(sparring, fake_codex, scratch)
    debate.start()
    debate.wait()
    assert f"sparring wait {debate.sid} --seal" in open_sessions(sparring)[debate.sid]["next"]


def test_dual_model_picked_up_while_codex_answers_waits_then_seals(
        sparring: Any, fake_codex: Any, scratch: Path) -> None:
    """The conversation ended while Codex was still answering round one: the next step is to
    wait for it, then to write and seal the analysis (no seal is taken before); once Codex
    has answered, the seal."""
    fake_codex.script([{"mode": "slow", "delay": 3, "reply": answer([cpt("X-1", "agree")])}])
    sid = sparring("init", "--skill", "dual-model").out["session"]
    sparring("start", sid, "--template", "dual-model/dispatch", "--var", "QUESTION=Postgres?")
    assert sparring("status", sid).out["status"] == "running"

    step = open_sessions(sparring)[sid]["next"]

    assert step.startswith(f"Codex is answering round 1: `sparring wait {sid}` until it has "
                           "ended") and f"`sparring wait {sid} --seal " in step
    fake_codex.release()
    assert sparring("wait", sid).out["status"] == "completed"
    step = open_sessions(sparring)[sid]["next"]
    assert "not sealed yet" in step and f"`sparring wait {sid} --seal " in step
    waited = sparring("wait", sid, "--seal", "-", input=b"C-1: mine\n")
    assert waited.out["status"] == "completed" and waited.out["sealed"] is True


def test_dual_model_picks_up_at_its_dispatch_then_at_the_report(
        sparring: Any, fake_codex: Any, scratch: Path) -> None:
    fake_codex.script([{"reply": answer([cpt("X-1", "agree")])}])
    sid = sparring("init", "--skill", "dual-model").out["session"]
    assert "dual-model/dispatch --vars-file" in open_sessions(sparring)[sid]["next"]
    sparring("start", sid, "--template", "dual-model/dispatch", "--var", "QUESTION=Postgres?")
    sparring("wait", sid)
    sparring("wait", sid, "--seal", "-", input=b"C-1: mine\n")
    verdict = {"position": "p", "points": [pt("X-1", "agree", cls="genuine_agreement"),
                                           pt("C-1", "withdraw", cls="claude_only",
                                              note="X-1 holds it")],
               "convergence": {"state": "continue", "reason": "r"}}
    judged = sparring("verdict", sid, input=json.dumps(verdict).encode())
    assert judged.exit_code == 0, judged.raw

    row = open_sessions(sparring)[sid]
    assert row["question"] == "Postgres?"
    assert f"sparring report {sid} --synthesis" in row["next"]


def test_a_failed_round_picks_up_at_its_one_recovery(sparring: Any, fake_codex: Any,
                                                     scratch: Path) -> None:
    fake_codex.mode("crash", event_delay="0.3")
    debate = Debate(sparring, fake_codex, scratch)
    debate.start()
    assert debate.wait()["status"] == "failed"
    assert f"sparring resume {debate.sid} --recover` once" in \
        open_sessions(sparring)[debate.sid]["next"]


def test_arch_debate_picks_up_in_its_folder_at_claudes_round(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.script(["Codex round 1: SQLite holds."])
    arch = ArchDebate(sparring, fake_codex, repo)
    row = open_sessions(sparring)[arch.session]
    assert "round-0-claude.md" in row["next"] and "step claude" in row["next"]
    arch.write(0, "Round 0: SQLite.\n")
    arch.codex_round()

    row = open_sessions(sparring)[arch.session]
    assert row["question"] == "Should we use Redis or SQLite for sessions?"
    assert "round-1-claude.md" in row["next"]
    # A new conversation has not seen Codex's round: it reads it before answering.
    assert f"read Codex's round {repo / 'debate'}/round-1-codex.md whole, then write" in \
        row["next"]
    # The command names the folder as the next call, run where this one ran, finds it.
    assert "`sparring debate round debate --file .sparring/inbox/round.md`" in row["next"]


def test_deep_discussion_picks_up_at_its_framing(sparring: Any, repo: Path) -> None:
    sid = sparring("discuss", "new", "--args", "xhigh").out["session"]
    assert f"sparring discuss frame {sid} --file" in open_sessions(sparring)[sid]["next"]


def test_deep_discussion_picks_up_at_codex_round_shown_again(sparring: Any, fake_codex: Any,
                                                            repo: Path) -> None:
    """Codex's round is in, unread by the conversation that picks it up: `wait` shows it
    again before Claude answers (`discuss status` itself, every round, says less)."""
    fake_codex.script(["Codex round 1: an audit table."])
    talk = Discussion(sparring, fake_codex, "high")
    talk.step("frame", FRAME)
    assert talk.wait()["next"].startswith("answer Codex: ")

    step = open_sessions(sparring)[talk.sid]["next"]

    assert step.startswith(f"Codex's round 1 is in: `sparring wait {talk.sid}` shows it again")
    assert f"`sparring discuss round {talk.sid} --file " in step
    shown = sparring("wait", talk.sid).out
    assert shown["discussion"]["last_message"]["text"].startswith("Codex round 1")


def test_a_finalized_session_is_not_open(sparring: Any, fake_codex: Any,
                                         scratch: Path) -> None:
    done = sparring("init", "--skill", "think-about").out["session"]
    sparring("finalize", done)
    going = sparring("init", "--skill", "think-about").out["session"]

    assert list(open_sessions(sparring)) == [going]
    assert set(open_sessions(sparring)[going]) == {"session", "skill", "status", "rounds",
                                                   "created", "question", "next"}
    every = sparring("status").out["sessions"]
    assert {r["session"] for r in every} == {done, going}
    assert "next" not in next(r for r in every if r["session"] == done)


def test_a_session_of_a_workflow_sparring_does_not_know_is_listed_without_a_next_step(
        sparring: Any, repo: Path) -> None:
    sid = sparring("init", "--skill", "think-about").out["session"]
    path = repo / ".sparring" / "sessions" / sid / "session.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "skill": "chess"}))

    row = open_sessions(sparring)[sid]

    assert row["skill"] == "chess" and "next" not in row
    assert sparring("status", sid).exit_code == 0
