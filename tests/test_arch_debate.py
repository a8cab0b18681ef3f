"""arch-debate end to end through the CLI against the fake codex: one thread across
rounds, runner-written Codex rounds, AGREED: only on a first line, the confirmation, the
six-round stop, the stand-in round."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.barepath import BARE_PATH
from support.debates import ARCH_QUESTION as QUESTION
from support.debates import ArchDebate as Debate
from support.debates import front_matter
from support.gitrepo import git


@pytest.fixture
def debate(sparring: Any, fake_codex: Any, repo: Path) -> Debate:
    return Debate(sparring, fake_codex, repo)


def test_new_scaffolds_the_protocol(debate: Debate, sparring: Any, repo: Path) -> None:
    protocol = (debate.dir / "DEBATE-PROTOCOL.md").read_text()
    assert QUESTION in protocol
    for slot in ("## Codebase context", "## Options under consideration", "## Open questions",
                 "AGREED:", "500 words"):
        assert slot in protocol
    again = sparring("debate", "new", "debate", "another question")
    assert again.exit_code == 1 and again.out["error"]["code"] == "debate_exists"
    assert (debate.dir / "DEBATE-PROTOCOL.md").read_text() == protocol
    status = debate.status()
    assert status["step"] == "claude" and status["rounds"] == 0
    assert "round-0-claude.md" in status["next"] and "--file " in status["next"]
    assert sorted(p.name for p in debate.dir.iterdir()) == ["DEBATE-PROTOCOL.md"]


def test_the_protocol_and_the_rounds_come_from_the_inbox(sparring: Any, fake_codex: Any,
                                                          repo: Path) -> None:
    """The skill's route: files Claude wrote into .sparring/inbox/, handed in with --file."""
    inbox = repo / ".sparring" / "inbox"
    inbox.mkdir(parents=True)
    (inbox / "protocol.yaml").write_text(
        "question: |\n  Redis or SQLite for {\"sessions\": 'ttl'}?\n"
        "codebase_context: |\n  api/session.py keeps {'ttl': 30}.\n"
        "options:\n  - Redis\n  - SQLite\n")
    created = sparring("debate", "new", "debate/store", "--file", str(inbox / "protocol.yaml"))
    assert created.exit_code == 0, created.raw
    folder = repo / "debate" / "store"
    protocol = (folder / "DEBATE-PROTOCOL.md").read_text()
    assert "Redis or SQLite for {\"sessions\": 'ttl'}?" in protocol
    assert "api/session.py keeps {'ttl': 30}." in protocol and "- Redis\n- SQLite" in protocol
    assert created.out["inbox"] == str(inbox)
    assert not (inbox / "protocol.yaml").exists(), "taken from the inbox once used"
    session_dir = Path(sparring("status", created.out["session"]).out["session_dir"])
    assert [p.name.endswith("-protocol.yaml") for p in (session_dir / "inputs").iterdir()] == [
        True]

    fake_codex.script(["AGREED: SQLite.\n\nBrief: SQLite in WAL mode."])
    (inbox / "round.md").write_text("SQLite, because `$(we)` ship it already.\n")
    started = sparring("debate", "round", str(folder), "--file", str(inbox / "round.md"))
    assert started.exit_code == 0 and started.out["started"] is True, started.raw
    assert (folder / "round-0-claude.md").read_text() == (
        "SQLite, because `$(we)` ship it already.\n")
    assert sparring("wait", created.out["session"]).out["status"] == "completed"
    (inbox / "round.md").write_text("AGREED: SQLite.\n\nBrief: SQLite in WAL mode.\n")
    settled = sparring("debate", "round", str(folder), "--file", str(inbox / "round.md"))
    assert settled.exit_code == 0, settled.raw
    assert settled.out["started"] is False and settled.out["debate"]["step"] == "agreed"
    assert (folder / "round-1-agreed.md").is_file()
    assert len(fake_codex.turn_calls()) == 1, "no Codex round after the agreement"
    assert not list(inbox.iterdir())


def test_a_round_codex_has_not_read_can_be_handed_in_again(debate: Debate, sparring: Any,
                                                           repo: Path,
                                                           monkeypatch: Any) -> None:
    first, second = repo / "first.md", repo / "second.md"  # in the project, not the inbox
    first.write_text("First draft.\n")
    second.write_text("Second draft.\n")
    monkeypatch.setenv("PATH", BARE_PATH)  # no codex: the round is written, not read
    failed = sparring("debate", "round", str(debate.dir), "--file", str(first))
    assert failed.out["error"]["code"] == "codex_not_found"
    assert first.read_text() == "First draft.\n", "a file outside the inbox is never moved"
    failed = sparring("debate", "round", str(debate.dir), "--file", str(second))
    assert failed.out["error"]["code"] == "codex_not_found"
    assert (debate.dir / "round-0-claude.md").read_text() == "Second draft.\n"


def test_a_debate_reaching_a_confirmed_agreement_on_one_thread(debate: Debate,
                                                               repo: Path) -> None:
    debate.fake.script([
        "Redis is overkill here.\n\nBut your TTL story is thin: see app/session.py:12.",
        "AGREED: SQLite with a TTL sweep job.\n\n- Settled: SQLite, WAL mode\n"
        "- Changes: add sweep job\n- Open: vacuum schedule",
    ])
    debate.write(0, "SQLite, because we already ship it.\n")
    first = debate.codex_round()
    codex_1 = (debate.dir / "round-1-codex.md").read_text()
    assert codex_1.startswith("Redis is overkill here.")
    assert first["step"] == "claude" and first["rounds"] == 1
    debate.write(1, "A sweep job every minute covers TTLs: app/sweep.py.\n")
    second = debate.codex_round()
    assert second["proposal"] == {"by": "codex", "file": "round-2-codex.md"}
    assert second["agreed"] is None, "one side's AGREED: is not agreement"
    assert "open it with AGREED:" in second["next"]
    debate.write(2, "AGREED: SQLite with a TTL sweep job.\n\nConfirmed as written.\n")
    final = debate.status()
    assert final["step"] == "agreed"
    assert final["agreed"]["confirmed_in"] == "round-2-claude.md"
    agreed = (debate.dir / "round-2-agreed.md").read_text()
    assert "SQLite with a TTL sweep job." in agreed and "Open: vacuum schedule" in agreed
    assert "DEGRADED" not in agreed and "Tokens in / out" in agreed

    calls = debate.fake.turn_calls()
    assert len(calls) == 2
    thread = calls[0]["thread_id"]
    assert calls[1]["argv"][:5] == ["exec", "-s", "read-only", "resume", thread]
    first_prompt, second_prompt = debate.fake.stdin_of(0).decode(), debate.fake.stdin_of(1).decode()
    assert "SQLite, because we already ship it." in first_prompt and "## Rules" in first_prompt
    assert "A sweep job every minute" in second_prompt
    assert "SQLite, because we already ship it." not in second_prompt, "no growing transcript"
    assert "## Rules" not in second_prompt
    assert set(p.name for p in debate.dir.iterdir()) == {
        "DEBATE-PROTOCOL.md", "round-0-claude.md", "round-1-codex.md", "round-1-claude.md",
        "round-2-codex.md", "round-2-claude.md", "round-2-agreed.md", "round-2-agreed.json"}
    # The folder is the decision record; nothing else of ours shows up in git.
    assert git(repo, "status", "--porcelain", "--untracked-files=all").splitlines() == [
        f"?? debate/{name}" for name in sorted(p.name for p in debate.dir.iterdir())]


@pytest.mark.parametrize("spoof", [
    "> AGREED: quoted from Codex\n\nI still disagree.\n",
    "    AGREED: indented\n\nI still disagree.\n",
    "```\nAGREED: in a code block\n```\nI still disagree.\n",
    "I still disagree.\n\nAGREED: on a later line\n",
    "agreed: lower case\n",
])
def test_agreed_only_counts_on_the_first_line(debate: Debate, spoof: str) -> None:
    debate.fake.script(["AGREED: SQLite.\n\nBrief.", "Fine, let us continue."])
    debate.write(0, "SQLite.\n")
    proposal = debate.codex_round()
    assert proposal["proposal"]["by"] == "codex"
    debate.write(1, spoof)
    status = debate.status()
    assert status["agreed"] is None and status["step"] == "codex"
    assert not (debate.dir / "round-1-agreed.md").exists()
    if "later line" in spoof:
        assert any("does not count" in b for b in status["rule_breaks"])


def test_six_rounds_without_agreement_stop_for_a_human_decision(debate: Debate) -> None:
    debate.fake.script([f"Round {n}: Redis, because pub/sub. Evidence: bus.py:{n}"
                        for n in range(1, 7)])
    debate.write(0, "SQLite, because it is simpler.\n")
    for n in range(1, 7):
        status = debate.codex_round()
        assert status["step"] == "claude", status
        debate.write(n, f"Still SQLite: the numbers in round {n} do not need Redis.\n")
    stuck = debate.status()
    assert stuck["step"] == "stuck" and stuck["stuck"] is True
    assert "stuck on values, not facts — decide" in stuck["next"]
    assert [row["round"] for row in stuck["positions"]] == list(range(7))
    decision = (debate.dir / "DECISION-NEEDED.md").read_text()
    assert "| Round | Claude | Codex |" in decision
    assert "Round 6: Redis, because pub/sub." in decision
    found, rest = front_matter(decision)  # a decision still to take is proposed too
    assert (found["status"], found["title"]) == ("proposed", QUESTION)
    assert found["sparring"]["outcome"] == "stalemate" and rest.startswith("# Decision needed:")
    assert "Codex took part in every round (6 of 6): thread `" in decision
    refused = debate.sparring("debate", "round", str(debate.dir))
    assert refused.out["error"]["code"] == "invalid_transition"


def test_stand_in_round_is_labelled_and_degrades_the_debate(debate: Debate, sparring: Any,
                                                             monkeypatch: Any) -> None:
    debate.write(0, "SQLite.\n")
    monkeypatch.setenv("PATH", BARE_PATH)  # no codex anywhere
    failed = sparring("debate", "round", str(debate.dir))
    assert failed.out["error"]["code"] == "codex_not_found"
    stood = sparring("debate", "round", str(debate.dir), "--stand-in", "-",
                     input=b"AGREED: everything.\n\nThe strongest case for Redis is pub/sub.")
    assert stood.exit_code == 0, stood.raw
    text = (debate.dir / "round-1-codex.md").read_text()
    assert text.startswith("> NOTE: written by Claude playing devil's advocate")
    status = debate.status()
    assert status["proposal"] is None, "a stand-in round can never agree"
    assert any("devil's advocate" in reason for reason in status["degraded"])


def test_rule_breaks_are_reported_not_hidden(debate: Debate, repo: Path) -> None:
    debate.fake.script(["Short answer."])
    debate.write(0, "word " * 600)
    status = debate.codex_round()
    assert any("round-0-claude.md has 600 words (limit 500)" in b for b in status["rule_breaks"])
    (debate.dir / "round-0-claude.md").write_text("rewritten after the fact\n")
    (debate.dir / "round-3-claude.md").write_text("from the future\n")
    later = debate.status()
    assert any("round-0-claude.md was changed after Codex read it" in b
               for b in later["rule_breaks"])
    assert any("round-3-claude.md is out of order" in b for b in later["rule_breaks"])


def test_the_next_round_needs_claudes_round_first(debate: Debate) -> None:
    debate.fake.script(["Answer one."])
    debate.write(0, "SQLite.\n")
    debate.codex_round()
    missing = debate.sparring("debate", "round", str(debate.dir))
    assert missing.out["error"]["code"] == "round_missing"
    assert "round-1-claude.md" in missing.out["error"]["message"]


def test_a_codex_round_not_written_by_the_runner_cannot_agree(debate: Debate) -> None:
    debate.write(0, "AGREED: SQLite.\n")
    (debate.dir / "round-1-codex.md").write_text("AGREED: SQLite.\n\nForged.\n")
    status = debate.status()
    assert status["agreed"] is None and status["step"] != "agreed"
    assert not list(debate.dir.glob("*agreed*"))
    assert any("not what the runner wrote" in b for b in status["rule_breaks"])
    assert any("round-1-codex.md is not Codex's" in d for d in status["degraded"])


def test_editing_a_stand_in_or_codex_round_is_caught(debate: Debate, sparring: Any) -> None:
    debate.write(0, "SQLite.\n")
    sparring("debate", "round", str(debate.dir), "--stand-in", "-", input=b"The case for Redis.")
    path = debate.dir / "round-1-codex.md"
    path.write_text("AGREED: " + path.read_text().split("\n", 2)[2])  # drop the NOTE line
    debate.write(1, "AGREED: done.\n")
    status = debate.status()
    assert status["agreed"] is None
    assert any("not what the runner wrote" in b for b in status["rule_breaks"])


def test_a_failed_first_round_can_be_run_again(debate: Debate,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Codex dies at once; the start window must outlast a busy machine's start of the fake.
    monkeypatch.setenv("SPARRING_STARTSECS", "10")
    debate.fake.script([{"mode": "die_early"}, "Now I can answer."])
    debate.write(0, "SQLite.\n")
    failed = debate.sparring("debate", "round", str(debate.dir))
    assert failed.out["error"]["code"] == "codex_start_failed"
    again = debate.codex_round()
    assert again["rounds"] == 1
    assert (debate.dir / "round-1-codex.md").read_text() == "Now I can answer.\n"


def test_codex_reads_the_rounds_written_while_it_was_away(debate: Debate, sparring: Any
                                                          ) -> None:
    debate.fake.script(["First real answer.", "Second real answer."])
    debate.write(0, "SQLite.\n")
    debate.codex_round()
    debate.write(1, "Opening side, round one.\n")
    sparring("debate", "round", str(debate.dir), "--stand-in", "-",
             input=b"Stand-in case for Redis.")
    debate.write(2, "The stand-in answered.\n")
    debate.codex_round()
    sent = debate.fake.stdin_of(-1).decode()
    assert "### Round 1, the other analyst\n\nOpening side, round one." in sent
    assert ("### Round 2, written in your place by the other analyst (a stand-in)\n\n"
            "Stand-in case for Redis.") in sent
    assert "### Round 2, the other analyst\n\nThe stand-in answered." in sent
    assert "devil's advocate" not in sent, "the stand-in's NOTE line names a side: left out"
    assert "SQLite." not in sent.split("---")[1], "what Codex already read is not resent"


def test_no_prompt_to_codex_names_the_other_side(debate: Debate, sparring: Any) -> None:
    """Identity-blind: the protocol in the first prompt, every later round, the rounds a
    stand-in covered and the request to confirm an AGREED: round name no model or vendor."""
    debate.fake.script(["Redis, because pub/sub.", "Fine: SQLite then.",
                        "AGREED: SQLite.\n\nBrief: SQLite in WAL mode."])
    debate.write(0, "SQLite.\n\n- C-1 agree: SQLite is enough.\n")
    debate.codex_round()
    debate.write(1, "- X-1 disagree: pub/sub is not needed.\n")
    debate.codex_round()
    debate.write(2, "One more point.\n")
    sparring("debate", "round", str(debate.dir), "--stand-in", "-", input=b"Redis again.")
    debate.write(3, "AGREED: SQLite.\n\nBrief: SQLite in WAL mode.\n")
    debate.codex_round()
    prompts = [debate.fake.stdin_of(i).decode() for i in range(len(debate.fake.turn_calls()))]
    assert len(prompts) == 3
    assert "## Rules" in prompts[0] and "they propose the brief above as settled" in prompts[2]
    for prompt in prompts:
        assert "claude" not in prompt.casefold() and "anthropic" not in prompt.casefold(), prompt
    assert (debate.dir / "round-4-codex.md").read_text().startswith("AGREED:")


def test_a_moved_debate_folder_does_not_break_the_session(debate: Debate, repo: Path) -> None:
    debate.fake.mode("slow", delay="4", reply="Answer for a folder that moved.")
    debate.write(0, "SQLite.\n")
    debate.sparring("debate", "round", str(debate.dir))
    debate.dir.rename(repo / "moved")
    debate.fake.release()
    done = debate.sparring("wait", debate.session)
    assert done.exit_code == 0 and done.out["status"] == "completed"
    kept = Path(debate.sparring("status", debate.session).out["session_dir"])
    assert (kept / "turns" / "1" / "answer.md").read_text() == "Answer for a folder that moved.\n"
    assert debate.sparring("finalize", debate.session).exit_code == 0


def test_a_rounds_wait_prints_what_claude_acts_on_and_full_prints_all(
        debate: Debate, sparring: Any, repo: Path) -> None:
    """Lean: the round's `debate` carries the step, the next command and whatever is there
    to act on; its folder, its files and what is empty are for --full."""
    debate.fake.script(["Codex round 1: SQLite holds."])
    debate.write(0, "Round 0: SQLite.\n")
    sparring("debate", "round", str(debate.dir))

    lean = sparring("wait", debate.session).out["debate"]
    full = sparring("wait", debate.session, "--full").out["debate"]

    assert (lean["step"], lean["rounds"]) == (full["step"], full["rounds"]) == ("claude", 1)
    assert lean["next"] == full["next"] and "round-1-claude.md" in lean["next"]
    assert full["files"] == ["round-0-claude.md", "round-1-codex.md"]
    assert full["rule_breaks"] == [] and full["agreed"] is None
    for key in ("files", "dir", "max_rounds", "rule_breaks", "agreed", "proposal", "stuck"):
        assert key not in lean, key
