"""A prompt over codex's input limit (issue 11, case 7) is refused before codex starts, naming
the limit and the size; the session stays usable; notes carried into the next prompt are
bounded with a visible marker; `--recover` says what really went wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparring.codex import MAX_PROMPT_CHARS
from support.debates import FRAME, Debate, answer, cpt, pt

TOO_LONG = b"x" * (MAX_PROMPT_CHARS + 1)


def refused_for_size(result: Any, size: int = MAX_PROMPT_CHARS + 1) -> None:
    assert result.exit_code == 1 and result.error_code == "prompt_too_large", result.raw[:400]
    error = result.out["error"]
    assert error["size"] == size and error["limit"] == MAX_PROMPT_CHARS
    assert f"{size:,} characters" in error["message"]
    assert f"at most {MAX_PROMPT_CHARS:,}" in error["message"]


def test_start_refuses_a_prompt_codex_would_refuse_and_the_session_stays_usable(
        sparring: Any, session: str, fake_codex: Any) -> None:
    refused_for_size(sparring("start", session, input=TOO_LONG))
    assert fake_codex.turn_calls() == []
    assert sparring("status", session).out["turns"] == []
    assert sparring("start", session, input=b"a question of sane size").exit_code == 0
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"


def test_the_limit_counts_characters_not_bytes(sparring: Any, session: str,
                                               fake_codex: Any) -> None:
    at_the_limit = ("é" * MAX_PROMPT_CHARS).encode()  # 2 MiB, but 1,048,576 characters
    assert sparring("start", session, input=at_the_limit).exit_code == 0
    assert sparring("wait", session, "--timeout", "60").out["status"] == "completed"
    assert len(fake_codex.stdin_of(-1)) == 2 * MAX_PROMPT_CHARS


def test_resume_refuses_it_too_and_the_thread_goes_on(sparring: Any, session: str,
                                                      fake_codex: Any) -> None:
    sparring("start", session, input=b"round one")
    sparring("wait", session, "--timeout", "30")
    refused_for_size(sparring("resume", session, input=TOO_LONG))
    assert len(fake_codex.turn_calls()) == 1
    assert sparring("resume", session, input=b"round two").exit_code == 0
    out = sparring("wait", session, "--timeout", "30").out
    assert out["status"] == "completed" and out["round"] == 2


def test_a_debate_round_too_long_can_be_handed_in_again_shorter(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    sparring("debate", "new", "debate/q", "Which queue?")
    long_round = scratch / "round.md"
    long_round.write_bytes(TOO_LONG)
    refused = sparring("debate", "round", "debate/q", "--file", str(long_round))
    assert refused.error_code == "prompt_too_large", refused.raw[:300]
    assert fake_codex.turn_calls() == []
    long_round.write_text("My opening: use the database as the queue.\n")
    again = sparring("debate", "round", "debate/q", "--file", str(long_round))
    assert again.exit_code == 0, again.raw
    assert (repo / "debate" / "q" / "round-0-claude.md").read_text().startswith("My opening")


def test_a_discussion_response_too_long_is_not_recorded(sparring: Any, fake_codex: Any,
                                                        repo: Path) -> None:
    sid = sparring("discuss", "new", "--args", "high").out["session"]
    sparring("discuss", "frame", sid, input=FRAME)
    sparring("wait", sid, "--timeout", "30")
    huge = b"response: |\n  " + TOO_LONG + b"\n"
    refused = sparring("discuss", "round", sid, input=huge)
    assert refused.error_code == "prompt_too_large", refused.raw[:300]
    status = sparring("discuss", "status", sid).out
    assert status["last_message"]["speaker"] == "codex"  # Claude's response was not kept
    assert sparring("discuss", "round", sid, input=b"response: shorter\n").exit_code == 0


def test_a_long_note_is_carried_into_the_next_prompt_bounded_and_marked(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    debate = Debate(sparring, fake_codex, scratch)
    fake_codex.script([{"reply": answer([cpt("X-1", "agree")])},
                       {"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    debate.seal()
    debate.wait()
    note = "n" * 2_000_000
    decided = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement",
                                            note=note, evidence=["e" * 2_000_000])],
                              "convergence": {"state": "continue", "reason": "r"},
                              "message": "X-1: " + "m" * 1_995})  # a message is capped
    assert decided.out["next"]["action"] == "wait" and decided.out["next"]["started"], \
        decided.raw[:400]
    assert debate.wait()["status"] == "completed"
    prompt = fake_codex.stdin_of(-1).decode()
    assert len(prompt) < 100_000
    assert prompt.count("[… truncated by sparring: ") == 2  # the note, the evidence
    assert "1,996,000 more characters not carried into this prompt]" in prompt


def test_a_prompt_codex_itself_refuses_is_named_and_leaves_the_session_usable(
        sparring: Any, session: str, fake_codex: Any) -> None:
    # A codex with a smaller limit than ours: the runner's own check cannot know it.
    fake_codex.mode("ok", max_input_chars="50")
    started = sparring("start", session, input=b"y" * 100)
    # codex refuses within the start window (start says so) or, on a loaded machine, after it.
    out = started.out if started.exit_code != 0 else sparring("wait", session, "--timeout",
                                                                "30").out
    error = out["error"]
    assert error["code"] == "prompt_too_large" and "input_too_large" in error["stderr_tail"]
    assert sparring("poll", session).out["recoverable"] is False
    recover = sparring("resume", session, "--recover")
    assert recover.error_code == "no_thread"
    assert "prompt_too_large" in recover.out["error"]["message"]
    # Not stuck: codex kept no thread, so round one starts afresh.
    fake_codex.mode("ok", max_input_chars=str(MAX_PROMPT_CHARS))
    assert sparring("start", session, input=b"short").exit_code == 0
    assert sparring("wait", session, "--timeout", "30").out["status"] == "completed"


@pytest.mark.parametrize("script, needle", [
    ([{"mode": "ok"}, {"mode": "rate_limited"}, {"mode": "rate_limited"}],
     "already was the one recovery of round 2, and it failed too (rate_limited)"),
    ([{"mode": "ok"}, {"mode": "ok"}], "it completed; there is nothing to ask again"),
])
def test_recover_says_why_it_cannot(sparring: Any, session: str, fake_codex: Any,
                                    script: list[Any], needle: str) -> None:
    fake_codex.script(script)
    sparring("start", session, input=b"one")
    sparring("wait", session, "--timeout", "30")
    sparring("resume", session, input=b"two")
    if sparring("wait", session, "--timeout", "30").out["status"] == "failed":
        sparring("resume", session, "--recover")
        sparring("wait", session, "--timeout", "30")
    refused = sparring("resume", session, "--recover")
    assert refused.exit_code == 1, refused.raw
    assert needle in refused.out["error"]["message"], refused.out["error"]
