"""What the real codex prints, replayed: the streams support/codex_streams.py recorded from
the pinned codex against the loopback mock (tests/fixtures/codex/<version>/), read by the
events reader and run through whole turns by the fake codex's `replay` mode.

- every activity reaches the independence check: a shell command, code mode's nested
  command, a unified-exec command polled to its end, an MCP tool call whose result nests 40
  levels deep, web searches, and a sub-agent whose command only its own rollout records;
- failures say what to do: the ChatGPT plan's usage limit and a gateway's concurrency limit
  are `rate_limited` (with the time Codex gives), a full context window is its own error,
  never offered `--recover`, and a failure after part of an answer is a failure;
- the model and effort Codex recorded are on record, shown at start, in `status` and in the
  report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sparring.codex import events
from support import codex_streams, mcp_notes
from support.debates import Debate, answer, cpt, pt

NOTE_LINE = mcp_notes.NOTE.splitlines()[0]  # "the nightly batch window cannot absorb …"
# Claude's analysis holds the words of the user's note, which lies nowhere in the project.
ANALYSIS = (f"# My analysis\n\n- C-1: {mcp_notes.NOTE.replace(chr(10), ', ')}; "
            "a sweep job every hour keeps the table small.\n")
COMPLETED = ["answer", "command", "file_change", "mcp_call", "mcp_resource", "web_search",
             "code_mode", "unified_exec", "sub_agent", "failed_command", "reasoning"]
FAILED = ["usage_limit", "concurrency_limit", "context_window", "partial_then_failure"]


def recorded(name: str) -> events.TurnView:
    fixture = codex_streams.load(name)
    return events.parse(("\n".join(fixture["events"]) + "\n").encode(), finished=True)


def test_every_scenario_is_recorded_at_the_pin() -> None:
    assert sorted(COMPLETED + FAILED) == sorted(codex_streams.SCENARIOS)
    for name in codex_streams.SCENARIOS:
        fixture = codex_streams.load(name)
        assert fixture["codex"] == codex_streams.CODEX_VERSION, name


@pytest.mark.parametrize("name", COMPLETED)
def test_a_completed_recording_reads_whole(name: str) -> None:
    view = recorded(name)
    assert view.malformed == 0 and view.legacy == 0
    assert view.completed and view.failure is None
    assert json.loads(view.final_message or "")["position"].startswith("SQLite in WAL")


@pytest.mark.parametrize("name", FAILED)
def test_a_failed_recording_reads_as_failed(name: str) -> None:
    view = recorded(name)
    assert view.malformed == 0 and view.failure and not view.completed


def test_a_40_level_mcp_result_keeps_its_call_and_its_text() -> None:
    """The real MCP item nests its structured content past the reader's bound, on the line
    that also holds the result's flat text: the line is read, its structure cut, its text
    kept (before, the whole line was dropped, call and all)."""
    view = recorded("mcp_call")
    assert {"kind": "tool_call", "server": "notes", "tool": "read_note",
            "status": "completed"} in view.activities
    [call] = [item for item in view.items if item["type"] == "mcp_tool_call"]
    assert NOTE_LINE in call["result"]["content"][0]["text"]
    structured = json.dumps(call["result"]["structured_content"])
    assert "the leaf" not in structured and "nightly batch window" in structured


# -- older dialects -----------------------------------------------------------------------------


def test_codex_044s_stream_reads_whole() -> None:
    """codex 0.44.0 (recorded), the first with `type`-tagged items: read as today's."""
    fixture = codex_streams.load("answer", "0.44.0")
    view = events.parse(("\n".join(fixture["events"]) + "\n").encode(), finished=True)
    assert view.completed and view.malformed == 0
    assert json.loads(view.final_message or "")["points"][0]["id"] == "X-1"


def test_codex_042s_id_msg_stream_is_codex_too_old_not_a_crash(
        debate: Debate, sparring: Any) -> None:
    """codex 0.42.0 (recorded) printed `{"id", "msg"}` lines: a turn that gets them fails as
    `codex_too_old`, saying which codex sparring needs (start refuses such a codex by its
    version before this can happen; a codex that hides its version still cannot look like
    a crash)."""
    view = events.parse(("\n".join(codex_streams.load("answer", "0.42.0")["events"])
                         + "\n").encode(), finished=True)
    assert view.legacy == 4 and view.events == 0 and view.malformed == 2
    debate.fake.mode("replay", replay=str(codex_streams.FIXTURES / "0.42.0" / "answer.json"))
    started = sparring("start", debate.sid, input=b"Redis or SQLite?")
    error = started.out["error"] if started.exit_code else debate.wait()["error"]
    assert error["code"] == "codex_too_old", started.raw
    assert "codex 0.42 and older" in error["message"] and "0.132.0 or newer" in error["message"]


# -- every activity reaches the check --------------------------------------------------------


@pytest.fixture
def debate(sparring: Any, fake_codex: Any, scratch: Path, repo: Path) -> Debate:
    return Debate(sparring, fake_codex, scratch)


def sealed(debate: Debate, scenario: str, analysis: str = ANALYSIS) -> dict[str, Any]:
    """Round one replays `scenario`; Claude seals its analysis once it has ended."""
    debate.fake.mode("replay", replay=scenario)
    debate.start()
    waited = debate.wait()
    assert waited["status"] == "completed" and waited["review"] is None, waited
    done = debate.sparring("wait", debate.sid, "--seal", debate.file("analysis.md", analysis))
    assert done.exit_code == 0, done.raw
    return dict(done.out["independence"])


def seen(debate: Debate) -> list[dict[str, Any]]:
    from sparring.store.sessions import resolve

    data = resolve(debate.sid, Path.cwd()).load()
    return list(data["engine"]["independence"]["seen"])


@pytest.mark.parametrize(("scenario", "command"), [
    ("command", "`/bin/bash -lc 'cat notes.md'`"),
    ("code_mode", "`/bin/bash -lc 'cat notes.md'`"),
    ("unified_exec", "`/bin/bash -lc 'sleep 1; cat notes.md'`"),
])
def test_a_command_that_showed_codex_the_analysis_voids_independence(
        debate: Debate, scenario: str, command: str) -> None:
    """A shell command, a command code mode's script ran, a command polled to its end with
    write_stdin: each one's output is read, and a copy of the analysis in it is named."""
    independence = sealed(debate, scenario)
    assert independence["state"] == "void", independence
    assert independence["why"].startswith(f"in round one Codex's command {command} showed "
                                           "it text of Claude's analysis")


def test_what_a_code_mode_script_printed_is_read_from_the_rollout(
        debate: Debate, tmp_path: Path) -> None:
    """Code mode's script may print what it made of a command's output: the events show
    the nested command, never the script's own output; the thread's rollout does. Here the
    command's output in the events says nothing of the note, the script's printout does."""
    fixture = codex_streams.load("code_mode")
    fixture["events"] = [line.replace(json.dumps(mcp_notes.NOTE)[1:-1], "# notes\\n")
                         for line in fixture["events"]]
    assert not any(NOTE_LINE in line for line in fixture["events"])
    [rollout] = fixture["rollouts"].values()
    assert any(NOTE_LINE in line for line in rollout)  # in the script's output alone
    edited = tmp_path / "code_mode.json"
    edited.write_text(json.dumps(fixture))

    independence = sealed(debate, str(edited))
    assert independence["state"] == "void", independence
    [found] = seen(debate)
    assert found["command"].startswith("code mode script `const run = await "
                                       "tools.exec_command("), found
    assert "output holds Claude's analysis" in found["detail"]


def test_an_mcp_tool_result_40_levels_deep_voids_independence(debate: Debate) -> None:
    independence = sealed(debate, "mcp_call")
    assert independence["state"] == "void", independence
    assert independence["why"].startswith(
        "in round one Codex's MCP tool call `notes.read_note {\"name\": \"draft\"}` showed it")
    [found] = seen(debate)
    assert found["saw"] == "analysis" and "output holds" in found["detail"]


def test_a_file_read_as_an_mcp_resource_voids_independence(debate: Debate) -> None:
    """codex hands back a resource's file as a JSON text (its lines escaped inside): the
    check reads the file's own text, whose runs of words span its lines (the run here
    spans the note's two lines, which JSON's `\\n` would have split)."""
    spanning = "# My analysis\n\n- C-1: at peak load so expiry needs a sweep job, hourly.\n"
    independence = sealed(debate, "mcp_resource", spanning)
    assert independence["state"] == "void", independence
    assert independence["why"].startswith("in round one Codex's MCP tool call "
                                          "`notes.read_mcp_resource {")


def test_a_web_search_for_the_analysis_voids_independence(debate: Debate) -> None:
    """Codex searching the web for words only the analysis holds had seen them."""
    independence = sealed(debate, "web_search")
    assert independence["state"] == "void", independence
    assert independence["why"].startswith(f"in round one Codex's web search `'{NOTE_LINE}' "
                                          "in https://example.com/notes` showed it")


def test_a_sub_agents_command_is_read_from_its_own_rollout(debate: Debate) -> None:
    """The sub-agent's grep never reaches the primary thread's events (they show only the
    spawn and the wait, whose answer here says nothing of the note): its rollout does."""
    independence = sealed(debate, "sub_agent")
    assert independence["state"] == "void", independence
    [found] = seen(debate)
    assert found["command"].startswith("sub-agent ") and found["command"].endswith(
        "'s exec_command `grep -rn 'batch window' .`"), found
    assert "output holds Claude's analysis" in found["detail"]


def test_a_sub_agent_whose_rollout_is_gone_leaves_independence_not_measured(
        debate: Debate) -> None:
    debate.fake.mode("replay", replay="sub_agent")
    debate.start()
    assert debate.wait()["status"] == "completed"
    from sparring.codex import rollout

    thread = debate.sparring("status", debate.sid).out["thread_id"]
    rollouts = list((rollout.codex_home() / "sessions").rglob("rollout-*.jsonl"))
    assert len(rollouts) == 2, rollouts
    for path in rollouts:
        if thread not in path.name:
            path.unlink()
    done = debate.sparring("wait", debate.sid, "--seal", debate.file("analysis.md", ANALYSIS))
    assert done.out["independence"]["state"] == "not_measured", done.out
    assert "sub-agent" in done.out["independence"]["why"]


@pytest.mark.parametrize("scenario", ["command", "code_mode"])
def test_reading_the_projects_own_file_keeps_independence(debate: Debate, repo: Path,
                                                          scenario: str) -> None:
    """The same recorded command, when the note it printed is the project's own file: no
    copy, nothing void (what Claude quotes of the project is no leak); code mode's script,
    whose printout (read from the rollout) holds the same note, likewise."""
    (repo / "notes.md").write_text(codex_streams.NOTES)
    from support.gitrepo import git

    git(repo, "add", "notes.md")
    git(repo, "commit", "-qm", "notes")
    assert sealed(debate, scenario)["state"] == "checked"


def test_a_failed_command_is_shown_and_checked_like_any_other(debate: Debate) -> None:
    """A command that failed (`status: failed`, exit 1, the real codex's stream) is one of
    round one's activities all the same, and the check reads it."""
    assert sealed(debate, "failed_command")["state"] == "checked"
    shown = debate.sparring("wait", debate.sid, "--full").out["activities"]
    [command] = [a for a in shown if a["kind"] == "command"]
    assert "cat missing.md" in command["command"], command
    assert (command["status"], command["exit_code"]) == ("failed", 1), command


def test_a_reasoning_summary_is_not_the_answer(debate: Debate) -> None:
    """Codex's reasoning item comes before its answer (the real codex's stream): the answer
    shown at the seal is the message, not the summary."""
    debate.fake.mode("replay", replay="reasoning")
    debate.start()
    assert debate.wait()["status"] == "completed"
    done = debate.sparring("wait", debate.sid, "--seal", debate.file("analysis.md", ANALYSIS))
    review = done.out["review"]
    assert review["data"]["position"].startswith("SQLite in WAL"), review
    assert "Weighing the write rate." not in json.dumps(review)


# -- failures say what to do -------------------------------------------------------------------


def ended(debate: Debate, scenario: str) -> dict[str, Any]:
    """Round one replays `scenario`, which fails at once: `start` says so (with the turn's
    error, as `wait` gives it after)."""
    from support.debates import QUESTION

    debate.fake.mode("replay", replay=scenario)
    started = debate.sparring("start", debate.sid, "--template", "think-about/round1",
                              "--var", f"QUESTION={QUESTION}")
    out = debate.wait("--full")
    if started.exit_code:  # within start's window, as it does on a machine not overloaded
        assert started.out["error"]["code"] == out["error"]["code"], started.raw
        assert started.out["error"]["hint"] == out["error"]["hint"], started.raw
    return out


def test_the_usage_limit_is_rate_limited_with_the_time_codex_gives(debate: Debate) -> None:
    """"You’ve hit your usage limit … or try again at 3:51 PM." (with the typographic
    apostrophe codex prints) asks to wait until then."""
    fixture = codex_streams.load("usage_limit")
    said = json.loads(fixture["events"][-1])["error"]["message"]
    assert said.startswith("You\u2019ve hit your usage limit")
    clock = said.rsplit("try again at ", 1)[1].rstrip(".")
    out = ended(debate, "usage_limit")
    assert out["status"] == "failed" and out["recoverable"] is True
    error = out["error"]
    assert error["code"] == "rate_limited" and error["message"] == said
    assert error["retry_at"] == f"{clock} (local time)"
    assert error["hint"].startswith(f"wait until {clock} (local time), when Codex says the "
                                    "limit lifts, then `sparring resume")


def test_a_concurrency_limit_is_rate_limited(debate: Debate) -> None:
    out = ended(debate, "concurrency_limit")
    assert "Concurrency limit exceeded" in out["error"]["message"]
    assert out["error"]["code"] == "rate_limited" and out["recoverable"] is True
    assert "retry_at" not in out["error"]
    assert out["error"]["hint"].startswith("wait, then `sparring resume")


def test_a_full_context_window_is_its_own_error_and_never_recovered(debate: Debate) -> None:
    out = ended(debate, "context_window")
    assert out["error"]["code"] == "context_window_exceeded"
    assert out["recoverable"] is False
    assert "--recover" not in out["error"]["hint"]
    refused = debate.sparring("resume", debate.sid, "--recover")
    assert refused.error_code == "invalid_transition", refused.raw
    assert "context_window_exceeded" in refused.out["error"]["message"]


def test_a_failure_after_part_of_an_answer_is_a_failure(debate: Debate) -> None:
    out = ended(debate, "partial_then_failure")
    assert out["status"] == "failed" and out["review"] is None
    assert out["error"]["code"] == "turn_failed" and out["recoverable"] is True


# -- the model that ran is on record ----------------------------------------------------------


def test_the_model_codex_recorded_is_shown_at_start_in_status_and_in_the_report(
        debate: Debate) -> None:
    """sparring passes no model: the recorded codex ran the mock's configured model, at the
    effort sparring passed, and its rollout says so."""
    debate.fake.mode("replay", replay="answer")
    started = debate.start()
    assert started["codex"] == "gpt-5-mock, effort high (codex 0.171.0)", started
    assert debate.wait()["status"] == "completed"
    status = debate.sparring("status", debate.sid).out
    assert status["turns"][0]["ran"] == {"model": "gpt-5-mock", "effort": "high",
                                         "sandbox": "read-only",
                                         "approval_policy": "never"}
    assert status["codex_ran"] == {"line": "Codex: gpt-5-mock, effort high, every round",
                                   "warnings": []}
    report = debate.agreed_report()
    assert "- Codex: gpt-5-mock, effort high, every round (codex 0.171.0;" in report


def test_a_turn_stopped_before_codex_started_is_not_one_codex_ran() -> None:
    """A re-ask the user's stop overtook never ran Codex: it is not "codex's default model"
    in the report's line (seen when a stop came while round two's answer was re-asked)."""
    from sparring.turn.summary import codex_ran

    settings = {"model": None, "effort": "high", "sandbox": "read-only"}
    ran = {"model": "gpt-5-mock", "effort": "high"}
    data = {"codex_before": None, "turns": [
        {"n": 1, "round": 1, "settings": settings, "ran": ran, "started_at": 1.0,
         "ended_at": 2.0},
        {"n": 2, "round": 2, "settings": settings, "ran": ran, "started_at": 3.0,
         "ended_at": 4.0},
        {"n": 3, "round": 2, "settings": settings, "ran": None, "started_at": None,
         "ended_at": 5.0}]}
    assert codex_ran(data)["line"] == "Codex: gpt-5-mock, effort high, every round"


def test_a_model_that_changed_between_rounds_is_a_warning(debate: Debate) -> None:
    debate.fake.script([{"mode": "replay", "replay": "answer"},
                        {"mode": "ok", "reply": json.dumps(answer([cpt("X-1", "agree")]))}])
    debate.start()
    debate.seal()
    debate.wait()
    decided = debate.verdict({"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
                              "convergence": {"state": "continue", "reason": "r"}})
    assert decided.out.get("next", {}).get("action") == "wait", decided.out
    assert debate.wait()["status"] == "completed"
    ran = debate.sparring("status", debate.sid).out["codex_ran"]
    # the fake's own turn records the model it runs by default: another than the recording's
    assert ran["line"] == ("Codex: gpt-5-mock, effort high in round 1; gpt-6.1-sol, effort "
                           "high in round 2")
    assert ran["warnings"] == [f"Codex's model or effort changed between rounds "
                               f"({ran['line'][7:]})"]


def test_a_model_other_than_the_users_last_debates_is_a_warning(
        debate: Debate, sparring: Any, fake_codex: Any, scratch: Path) -> None:
    fake_codex.mode("replay", replay="answer")
    debate.start()
    assert debate.wait()["status"] == "completed"
    fake_codex.mode("ok", reply=json.dumps(answer([cpt("X-1", "agree")])))
    later = Debate(sparring, fake_codex, scratch)
    started = later.start()
    said = (f"Codex runs gpt-6.1-sol, effort high; your last debate (session {debate.sid}) "
            "ran model gpt-5-mock")
    assert started["warnings"] == [said], started
    assert later.wait()["status"] == "completed"
    assert sparring("status", later.sid).out["codex_ran"]["warnings"] == [said]
    assert sparring("status", debate.sid).out["codex_ran"]["warnings"] == []
