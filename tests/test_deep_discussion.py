"""deep-discussion: arguments, markers (and spoofed ones), the flow on one thread, the
report and where it goes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from sparring.errors import SparringError
from sparring.workflows import markers
from sparring.workflows.deep_discussion import transcript as discussion
from support.barepath import BARE_PATH
from support.debates import FRAME, Discussion
from support.gitrepo import git

SYNTHESIS = b"""agreed_points: "- audit table first"
key_trade_offs: "- replay vs simplicity"
recommended_approach: Audit table now, revisit event sourcing at 10x volume.
open_questions: "- retention period?"
implementation_hints: "- trigger-based capture"
final_observations: Codex pushed harder on replay needs than I expected.
"""


@pytest.mark.parametrize("text, expected", [
    ("", ("high", "CODEX", None)),
    ("high", ("high", "CODEX", None)),
    ("xhigh", ("xhigh", "CODEX", None)),
    ("CODEX", ("high", "CODEX", None)),
    ("none", ("high", "NONE", None)),
    ("NONE high", ("high", "NONE", None)),
    ("codex XHIGH", ("xhigh", "CODEX", None)),
    ("  XHigh\tnOnE ", ("xhigh", "NONE", None)),
    ("high high", ("high", "CODEX", None)),
    ("Should the cache be write-through?", ("high", "CODEX",
                                            "Should the cache be write-through?")),
    ("xhigh NONE Should we  shard\nby tenant?", ("xhigh", "NONE",
                                                 "Should we  shard\nby tenant?")),
    ("CODEX high Redis or SQLite: which is high availability enough?",
     ("high", "CODEX", "Redis or SQLite: which is high availability enough?")),
    ("-- High availability for the queue?", ("high", "CODEX", "High availability for the queue?")),
    ("xhigh -- none of the options?", ("xhigh", "CODEX", "none of the options?")),
    ("-- Low latency or low cost?", ("high", "CODEX", "Low latency or low cost?")),
    ("Should we use gpt-5 for triage?", ("high", "CODEX", "Should we use gpt-5 for triage?")),
])
def test_valid_arguments(text: str, expected: tuple[str, str, str | None]) -> None:
    assert discussion.parse_arguments(text) == expected


@pytest.mark.parametrize("text, needle", [
    ("low", "'low' is neither"),
    ("high medium", "'medium' is neither"),
    ("high xhigh", "two efforts"),
    ("CODEX NONE topic", "two models"),
    ("gpt-5.5", "'gpt-5.5' is neither"),
    # Leading words that look like a setting are never taken into the topic.
    ("low NONE Should we shard?", "'low' is neither"),
    ("medium NONE Should we shard?", "'medium' is neither"),
    ("MINIMAL Should we shard?", "'MINIMAL' is neither"),
    ("gpt-5 high Should we shard?", "'gpt-5' is neither"),
    ("xhigh GPT-5-Codex Should we shard?", "'GPT-5-Codex' is neither"),
    ("o3 Should we shard?", "'o3' is neither"),
    ("Low latency or low cost?", "'Low' is neither"),
    ("--effort high", "'--effort' looks like an option"),
])
def test_invalid_arguments_list_the_valid_forms(text: str, needle: str) -> None:
    with pytest.raises(SparringError) as err:
        discussion.parse_arguments(text)
    assert err.value.code == "invalid_arguments" and needle in err.value.message
    assert "/deep-discussion [high|xhigh] [CODEX|NONE] [topic…]" in err.value.hint


def test_invalid_arguments_through_the_cli(sparring: Any, repo: Path) -> None:
    result = sparring("discuss", "new", "--args", "medium")
    assert result.exit_code == 1 and result.out["error"]["code"] == "invalid_arguments"
    typo = sparring("discuss", "new", "--args", "low NONE Should we shard?")
    assert typo.exit_code == 1 and typo.out["error"]["code"] == "invalid_arguments"
    assert "[high|xhigh] [CODEX|NONE]" in typo.out["error"]["hint"]
    assert not list((repo / ".sparring" / "sessions").glob("deep-discussion-*"))
    piped = sparring("discuss", "new", "--args", "-", input=b"xhigh none\n")
    assert (piped.out["effort"], piped.out["model"], piped.out["topic"]) == ("xhigh", "NONE",
                                                                          None)
    assert "take TOPIC from the conversation" in piped.out["next"]


def test_a_topic_typed_after_the_words_comes_back_for_the_framing(sparring: Any,
                                                                   repo: Path) -> None:
    typed = repo / "args.txt"
    typed.write_text("XHIGH Should the session store move to SQLite?\n")

    out = sparring("discuss", "new", "--file", typed).out

    assert (out["effort"], out["model"]) == ("xhigh", "CODEX")
    assert out["topic"] == "Should the session store move to SQLite?"
    assert "TOPIC is the `topic` the user gave" in out["next"]


@pytest.mark.parametrize("text, counts", [
    ("I agree.\n[CONSENSUS_REACHED]\n", True),
    ("  [CONSENSUS_REACHED]  \n", True),
    ("> [CONSENSUS_REACHED]\n", False),
    ("```\n[CONSENSUS_REACHED]\n```\n", False),
    ("~~~md\n[CONSENSUS_REACHED]\n~~~\n", False),
    ("    [CONSENSUS_REACHED]\n", False),
    ("We are not at [CONSENSUS_REACHED] yet.\n", False),
    ("[consensus_reached]\n", False),
])
def test_consensus_marker_counts_only_on_its_own_line(text: str, counts: bool) -> None:
    assert markers.has_consensus(text) is counts


def test_search_requests_are_parsed_and_spoofs_ignored() -> None:
    text = ('Need data.\n[SEARCH_REQUEST: "sqlite wal throughput"]\n'
            '> [SEARCH_REQUEST: "quoted request"]\n'
            '```\n[SEARCH_REQUEST: "in code"]\n```\n'
            'Inline [SEARCH_REQUEST: "inline"] mention.\n'
            '[SEARCH_REQUEST: "second one"]\n')
    assert markers.search_requests(text) == ["sqlite wal throughput", "second one"]
    assert discussion.Message(1, "codex", text).ignored() == [3, 5, 7]


def test_a_discussion_with_a_search_request_reaching_consensus(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.script([
        'I need numbers.\n[SEARCH_REQUEST: "postgres audit trigger overhead"]\n',
        "With that overhead the audit table wins.\n\n[CONSENSUS_REACHED]\n",
        "## Agreed points\n- audit table\n## Key trade-offs\n- replay\n",
    ])
    talk = Discussion(sparring, fake_codex, "xhigh")
    started = talk.step("frame", FRAME)
    assert started["status"] in ("running", "completed")
    first_call = fake_codex.turn_calls_once(1)[0]
    assert "model_reasoning_effort=xhigh" in first_call["argv"]
    status = talk.wait()
    assert status["search_requests"] == ["postgres audit trigger overhead"]
    talk.step("round", b"response: Here are the numbers.\n"
                       b"search_results: 'Triggers add ~4% write latency (pgbench, 2024).'\n")
    sent = fake_codex.stdin_of(1).decode()  # round 2's codex, perhaps still starting
    assert "Triggers add ~4% write latency" in sent and "Here are the numbers." in sent
    assert "An append-only audit table" not in sent, "each round sends only what is new"
    status = talk.wait()
    assert status["consensus"] == {"claude": False, "other_side": True, "reached": False}
    agreed = talk.step("round", b"response: |\n  Agreed.\n  [CONSENSUS_REACHED]\n")
    assert agreed["consensus"]["reached"] is True
    assert len(fake_codex.turn_calls()) == 2, "consensus reached: no third round"
    assert talk.step("synthesis")["purpose"] == "synthesis"
    talk.wait()
    resumes = [c for c in fake_codex.turn_calls() if "resume" in c["argv"]]
    assert len(resumes) == 2 and len({c["thread_id"] for c in fake_codex.turn_calls()}) == 1

    report = talk.step("report", SYNTHESIS)
    path = Path(report["report"])
    assert re.fullmatch(r"deep-discussion-\d+\.md", path.name)
    assert path.parent == repo / ".kkachi" / "main" / "completed"
    text = path.read_text()
    for field in ("| Timestamp |", "| Topic | Event sourcing for the billing service? |",
                  "| Model | CODEX |", "| Effort | xhigh |", "| Rounds | 2 |",
                  "| Consensus | yes", "### Agreed points", "### Key trade-offs",
                  "### Recommended approach", "### Open questions", "### Implementation hints",
                  "## Claude's final observations", "## Transcript", "### Codex's own synthesis",
                  "Tokens in / out"):
        assert field in text, field
    assert "DEGRADED" not in text
    assert "**Search results Claude passed on:**\n\nTriggers add ~4% write latency" in text


def test_no_prompt_to_codex_names_the_other_side(sparring: Any, fake_codex: Any,
                                                 repo: Path) -> None:
    """Identity-blind: the first prompt, a round with search results, a round that ends
    without consensus and the synthesis name no model or vendor."""
    fake_codex.script(['Numbers first.\n[SEARCH_REQUEST: "trigger overhead"]\n',
                       "Replay stays open.\n", "## Agreed points\n- audit table\n"])
    talk = Discussion(sparring, fake_codex)
    talk.step("frame", FRAME)
    talk.wait()
    talk.step("round", b"response: Here are the numbers.\nsearch_results: '+4% latency'\n")
    talk.wait()
    talk.step("synthesis")
    talk.wait()
    prompts = [fake_codex.stdin_of(i).decode() for i in range(len(fake_codex.turn_calls()))]
    assert len(prompts) == 3
    assert "## The other analyst's opening view" in prompts[0]
    assert "+4% latency" in prompts[1] and "ends here (no consensus)" in prompts[2]
    for prompt in prompts:
        assert "claude" not in prompt.casefold() and "anthropic" not in prompt.casefold(), prompt


def test_spoofed_and_one_sided_consensus_do_not_end_it(sparring: Any, fake_codex: Any,
                                                       repo: Path) -> None:
    fake_codex.script(["You said:\n> [CONSENSUS_REACHED]\nbut I disagree.\n",
                       "Not yet: the replay case is open.\n"])
    talk = Discussion(sparring, fake_codex)
    talk.step("frame", FRAME)
    status = talk.wait()
    assert status["consensus"]["other_side"] is False
    assert status["last_message"]["ignored_markers"] == [2]
    talk.step("round", b"response: |\n  I think we agree.\n  [CONSENSUS_REACHED]\n")
    assert talk.step("status")["consensus"]["reached"] is False
    status = talk.wait()
    assert status["consensus"] == {"claude": True, "other_side": False, "reached": False}
    assert "sparring discuss round" in status["next"]


def test_the_round_cap_ends_the_discussion(sparring: Any, fake_codex: Any, repo: Path) -> None:
    (repo / "sparring.yaml").write_text("deep-discussion:\n  max_rounds: 2\n")
    fake_codex.script(["One.", "Two."])
    talk = Discussion(sparring, fake_codex)
    talk.step("frame", FRAME)
    talk.wait()
    talk.step("round", b"response: more\n")
    status = talk.wait()
    assert "round cap (2) reached" in status["next"]
    refused = sparring("discuss", "round", talk.sid, input=b"response: again\n")
    assert refused.out["error"]["code"] == "invalid_transition"


def test_model_none_has_claude_argue_both_sides_labelled(sparring: Any, fake_codex: Any,
                                                         repo: Path, scratch: Path) -> None:
    talk = Discussion(sparring, fake_codex, "NONE")
    talk.step("frame", FRAME)
    talk.step("round", b"critic: Event sourcing gives replay for free.\n"
                       b"response: Replay is not a requirement.\n")
    talk.step("round", b"critic: |\n  Fair.\n  [CONSENSUS_REACHED]\n"
                       b"response: |\n  Agreed.\n  [CONSENSUS_REACHED]\n")
    status = talk.step("status")
    assert status["consensus"]["reached"] is True and status["model"] == "NONE"
    assert fake_codex.turn_calls() == []
    out = sparring("discuss", "report", talk.sid, "--out", str(scratch / "r.md"),
                   input=SYNTHESIS).out
    text = Path(out["report"]).read_text()
    assert "> **DEGRADED**" in text and "Claude argued both sides" in text
    assert "Claude as critic (standing in for Codex)" in text
    assert out["degraded"] is True


def test_report_path_on_a_detached_head_and_outside_git(sparring: Any, fake_codex: Any,
                                                        repo: Path, tmp_path: Path,
                                                        monkeypatch: Any) -> None:
    sha = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "--detach")
    talk = Discussion(sparring, fake_codex, "NONE")
    talk.step("frame", FRAME)
    path = Path(talk.step("report", SYNTHESIS)["report"])
    assert path.parent == repo / ".kkachi" / f"detached-{sha[:7]}" / "completed"

    git(repo, "checkout", "-q", "-b", "feature/audit")
    talk = Discussion(sparring, fake_codex, "NONE")
    talk.step("frame", FRAME)
    path = Path(talk.step("report", SYNTHESIS)["report"])
    assert path.parent == repo / ".kkachi" / "feature-audit" / "completed"

    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    talk = Discussion(sparring, fake_codex, "NONE")
    talk.step("frame", FRAME)
    path = Path(talk.step("report", SYNTHESIS)["report"])
    assert path.parent == plain / ".kkachi" / "no-git" / "completed"


def test_framing_and_rounds_need_their_fields(sparring: Any, fake_codex: Any,
                                              repo: Path) -> None:
    talk = Discussion(sparring, fake_codex)
    missing = sparring("discuss", "frame", talk.sid, input=b"TOPIC: only a topic\n")
    assert missing.out["error"]["code"] == "usage_error"
    assert "FRAMING, CLAUDE_VIEW" in missing.out["error"]["message"]
    early = sparring("discuss", "round", talk.sid, input=b"response: hi\n")
    assert early.out["error"]["code"] == "invalid_transition"


def test_a_framing_that_could_not_start_codex_can_be_handed_in_again(
        sparring: Any, fake_codex: Any, repo: Path, monkeypatch: Any) -> None:
    talk = Discussion(sparring, fake_codex)
    with_codex = os.environ["PATH"]
    monkeypatch.setenv("PATH", BARE_PATH)
    failed = sparring("discuss", "frame", talk.sid, input=FRAME)
    assert failed.out["error"]["code"] == "codex_not_found"
    monkeypatch.setenv("PATH", with_codex)
    fake_codex.mode("ok", reply="Answer.")
    assert sparring("discuss", "frame", talk.sid, input=FRAME).exit_code == 0
    assert talk.wait()["rounds"] == 1


def test_a_stopped_round_is_asked_again_by_the_next_response(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.script(["One.", {"mode": "hang"}, "Two, at last."])
    talk = Discussion(sparring, fake_codex)
    talk.step("frame", FRAME)
    talk.wait()
    talk.step("round", b"response: second\n")
    sparring("stop", talk.sid)
    again = talk.step("round", b"response: second, rephrased\n")
    assert again["round"] == 2 and again["status"] in ("running", "completed")
    status = talk.wait()
    assert status["rounds"] == 2 and status["last_message"]["text"] == "Two, at last."
    claude = [m for m in discussion.transcript(*_session(repo, talk.sid))
              if m.speaker == "claude"]
    assert [m.text for m in claude][-1] == "second, rephrased" and len(claude) == 2


def test_a_guard_violation_stops_the_discussion_until_accepted(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.script([{"mode": "writes_file", "write_path": "notes.txt", "reply": "One."},
                       "Two."])
    talk = Discussion(sparring, fake_codex)
    talk.step("frame", FRAME)
    assert talk.wait()["rounds"] == 1
    refused = sparring("discuss", "round", talk.sid, input=b"response: next\n")
    assert refused.out["error"]["code"] == "guard_violation"
    assert "notes.txt" in refused.out["error"]["message"]
    accepted = sparring("discuss", "round", talk.sid, "--accept-changes",
                        input=b"response: next\n")
    assert accepted.exit_code == 0, accepted.raw
    assert talk.wait()["rounds"] == 2


def _session(repo: Path, sid: str) -> tuple[Any, dict[str, Any]]:
    from sparring.store.sessions import Session

    session = Session(repo / ".sparring" / "sessions" / sid)
    return session, session.load()


def test_the_report_s_json_ends_in_a_newline_as_every_report_s_does(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    talk = Discussion(sparring, fake_codex, "NONE")
    talk.step("frame", FRAME)
    talk.step("round", b"critic: |\n  Fine.\n  [CONSENSUS_REACHED]\n"
                       b"response: |\n  Agreed.\n  [CONSENSUS_REACHED]\n")
    out = sparring("discuss", "report", talk.sid, "--out", str(scratch / "r.md"),
                   input=SYNTHESIS).out
    beside = Path(out["report"]).with_suffix(".json")
    text = beside.read_text(encoding="utf-8")
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert json.loads(text)["skill"] == "deep-discussion"
    for written in (Path(out["report"]), beside):
        assert written.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("line", [
    '[SEARCH_REQUEST: "redis eviction"]', '[SEARCH_REQUEST:"x"]', '[SEARCH_REQUEST:  "x"  ]',
    '[SEARCH_REQUEST: ""]', '[SEARCH_REQUEST: " "]', '[SEARCH_REQUEST: "a"b"]',
    '[SEARCH_REQUEST: "a"] tail', '[SEARCH_REQUEST: x]', '[SEARCH_REQUEST:]', "[SEARCH_REQUEST:",
    '[SEARCH_REQUEST:\u00a0"x"\u2003]', '[search_request: "x"]', '[SEARCH_REQUEST: "x"',
    '[SEARCH_REQUEST: "]', '[SEARCH_REQUEST: ""x"]',
])
def test_a_search_request_is_read_as_its_pattern(line: str) -> None:
    """markers.py reads a search request with string methods (a discussion's status reads
    its markers every round): what the pattern it stands for reads, and only that."""
    match = re.fullmatch(r'\[SEARCH_REQUEST:\s*"([^"\n]+)"\s*\]', line)
    assert markers.search_requests(line) == ([match.group(1).strip()] if match else [])


def test_a_huge_answer_is_cut_in_the_discussion_as_in_the_review(
        sparring: Any, fake_codex: Any) -> None:
    said = "Codex goes on and on. " * 50_000
    fake_codex.script([{"reply": said}])
    sid = sparring("discuss", "new", "--args", "high").out["session"]
    sparring("discuss", "frame", sid, input=FRAME)
    done = sparring("wait", sid, "--timeout", "30")
    assert done.out["status"] == "completed" and len(done.raw) < 60_000, len(done.raw)
    last = done.out["discussion"]["last_message"]
    assert said.startswith(last["text"]) and last["cut"]["total_chars"] == len(said)
    assert len(done.raw) < 30_000 and "review" not in done.out, "the answer is printed once"
    assert done.raw.index('"guard"') < done.raw.index('"discussion"')
