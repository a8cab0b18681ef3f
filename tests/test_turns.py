"""start / poll / wait / resume / finalize against the fake codex: the happy paths."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from sparring.codex import MAX_PROMPT_CHARS

POLL_KEYS = {"schema_version", "ok", "verb", "session", "session_dir", "skill", "status",
             "round", "turn", "purpose", "thread_id", "elapsed_s", "last_event_s",
             "activities", "activities_total", "review", "review_withheld", "usage", "error",
             "recoverable", "settings", "guard", "malformed_lines", "files"}
# What Claude reads each round (`--full` prints POLL_KEYS): a completed, clean turn.
BRIEF_KEYS = {"schema_version", "ok", "verb", "session", "status", "round", "turn", "purpose",
              "elapsed_s", "review", "guard", "usage"}


def test_a_round_completes_with_the_review_and_its_usage(sparring: Any, session: str,
                                                         fake_codex: Any) -> None:
    fake_codex.mode("ok", reply='{"verdict": "use SQLite", "points": []}')
    started = sparring("start", session, "--effort", "low", input=b"Redis or SQLite?")
    assert started.exit_code == 0, started.raw
    done = sparring("wait", session, "--timeout", "20")
    assert done.exit_code == 0
    out = done.out
    assert set(out) == BRIEF_KEYS
    assert out["status"] == "completed" and out["round"] == 1
    assert out["review"]["data"] == {"verdict": "use SQLite", "points": []}
    assert "text" not in out["review"], "a structured answer is shown once, parsed"
    assert out["guard"] == {"clean": True}
    assert out["usage"]["round"]["input_tokens"] > 0
    assert "total" not in out["usage"], "the first turn's total is its round's: shown once"
    assert set(out["usage"]["round"]) == {"input_tokens", "output_tokens"}
    full = sparring("wait", session, "--full").out
    assert set(full) == POLL_KEYS
    assert full["usage"]["total"] == full["usage"]["round"]
    assert full["thread_id"] and full["error"] is None
    assert full["review"]["data"] == out["review"]["data"]
    assert full["review"]["text"] == '{"verdict": "use SQLite", "points": []}'

    assert "cached_input_tokens" in full["usage"]["round"]


def test_codex_is_called_as_the_reference_says(sparring: Any, session: str, repo: Path,
                                              fake_codex: Any) -> None:
    fake_codex.mode("ok")
    sparring("start", session, "--effort", "medium", "--model", "gpt-5.5", input=b"q")
    sparring("wait", session)
    sparring("resume", session, "--effort", "xhigh", input=b"round two")
    done = sparring("wait", session, "--full").out
    first, second = (c["argv"] for c in fake_codex.turn_calls())
    contained = ["--disable", "multi_agent", "--disable", "multi_agent_v2",
                 "--disable", "memories", "--disable", "hooks"]
    assert first == ["exec", "--json", "--skip-git-repo-check", "-c",
                     "model_reasoning_effort=medium", "-m", "gpt-5.5", *contained,
                     "-s", "read-only", "-C", str(repo), "-"]
    thread = done["thread_id"]
    assert second == ["exec", "-s", "read-only", "resume", thread, "--json",
                      "--skip-git-repo-check", "-c", "model_reasoning_effort=xhigh",
                      "-m", "gpt-5.5", *contained, "-"]
    assert "--last" not in second
    assert fake_codex.turn_calls()[1]["cwd"] == str(repo)


def test_resume_continues_the_thread_and_counts_only_the_new_tokens(
        sparring: Any, session: str, fake_codex: Any) -> None:
    fake_codex.script([{"reply": "first", "usage": {"input_tokens": 100, "output_tokens": 10}},
                       {"reply": "second", "usage": {"input_tokens": 200, "output_tokens": 20}}])
    sparring("start", session, input=b"one")
    one = sparring("wait", session, "--full").out
    sparring("resume", session, input=b"two")
    two = sparring("wait", session, "--full").out
    assert two["thread_id"] == one["thread_id"] and two["round"] == 2
    assert two["review"]["text"] == "second"
    assert two["usage"]["round"]["input_tokens"] == 200
    assert two["usage"]["round"]["output_tokens"] == 20
    assert two["usage"]["total"]["input_tokens"] == 300


def test_prompt_file_and_special_bytes_reach_codex_unchanged(
        sparring: Any, session: str, fake_codex: Any, scratch: Path) -> None:
    weird = "Quote \" ' `backtick` $(rm -rf /) ${HOME} \\n ünïcødé 漢字 🚀\n"
    # As many characters as codex accepts; more bytes than that (multi-byte characters).
    prompt = (weird * (MAX_PROMPT_CHARS // len(weird))).encode()
    assert len(prompt) > 1_200_000
    path = scratch / "prompt.md"
    path.write_bytes(prompt)
    fake_codex.mode("ok")
    sparring("start", session, "--prompt-file", str(path))
    assert sparring("wait", session).out["status"] == "completed"
    assert fake_codex.stdin_of(-1) == prompt


def test_stdin_prompt_is_byte_exact(sparring: Any, session: str, fake_codex: Any) -> None:
    prompt = b"Line one\n\tTabbed `$(whoami)` \"q\" 'q' ; | & > < *\n"
    fake_codex.mode("ok")
    sparring("start", session, input=prompt)
    sparring("wait", session)
    assert fake_codex.stdin_of(-1) == prompt


def test_poll_while_running_shows_concrete_activity(sparring: Any, session: str,
                                                   fake_codex: Any) -> None:
    fake_codex.mode("slow", delay="3")
    started = sparring("start", session, input=b"think")
    assert started.out["status"] == "running"
    deadline = time.monotonic() + 10
    seen: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not any(a["kind"] == "command" for a in seen):
        out = sparring("poll", session).out
        assert out["status"] == "running" and out["review"] is None
        seen = out["activities"]
        assert seen, "poll must never report a bare 'running'"
        time.sleep(0.1)
    assert any(a["kind"] == "command" and "cat notes.md" in a["command"] for a in seen)
    fake_codex.release()
    assert sparring("wait", session, "--timeout", "20").out["status"] == "completed"


def test_wait_returns_when_its_own_timeout_passes(sparring: Any, session: str,
                                                 fake_codex: Any) -> None:
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    began = time.monotonic()
    out = sparring("wait", session, "--timeout", "0.5").out
    assert out["status"] == "running" and out["wait_timed_out"] is True
    assert time.monotonic() - began < 10  # its own 0.5 s, not the turn's end (it hangs)
    sparring("stop", session)


def test_activities_name_commands_and_reasoning(sparring: Any, session: str,
                                               fake_codex: Any) -> None:
    fake_codex.mode("commands", reasoning="**Checking** the lock order")
    sparring("start", session, input=b"q")
    out = sparring("wait", session, "--full").out
    kinds = [a["kind"] for a in out["activities"]]
    assert "command" in kinds and "reasoning" in kinds
    failed = [a for a in out["activities"] if a["kind"] == "command" and a["exit_code"]]
    assert failed and failed[0]["status"] == "failed"


def test_malformed_jsonl_is_survived_and_counted(sparring: Any, session: str,
                                                fake_codex: Any) -> None:
    fake_codex.mode("malformed")
    sparring("start", session, input=b"q")
    out = sparring("wait", session).out
    assert out["status"] == "completed"
    assert out["malformed_lines"] >= 4


def test_finalize_writes_the_summary_and_is_idempotent(sparring: Any, session: str,
                                                      fake_codex: Any) -> None:
    fake_codex.mode("ok")
    sparring("start", session, "--effort", "low", input=b"q")
    sparring("wait", session)
    first = sparring("finalize", session)
    assert first.exit_code == 0
    summary = json.loads(Path(first.out["summary_file"]).read_text())
    assert summary["rounds"] == 1 and summary["turns"][0]["status"] == "completed"
    assert summary["codex"]["version"] == "0.171.0"
    assert summary["applied"]["effort"] == "low"
    assert summary["applied"]["sandbox"] == "read-only"
    assert summary["usage_total"]["input_tokens"] > 0
    again = sparring("finalize", session)
    assert again.exit_code == 0
    assert {k: v for k, v in again.out.items() if k != "finalized_at"} == {
        k: v for k, v in first.out.items() if k != "finalized_at"}


def test_finalize_prints_the_totals_and_full_the_whole_summary(sparring: Any, session: str,
                                                               fake_codex: Any) -> None:
    """The close needs how it ended and what it cost; every turn is in the file."""
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    sparring("wait", session)

    brief = sparring("finalize", session).out
    full = sparring("finalize", session, "--full").out

    assert "turns" not in brief and "applied" not in brief
    assert brief["usage_total"] == {"input_tokens": full["usage_total"]["input_tokens"],
                                    "output_tokens": full["usage_total"]["output_tokens"]}
    assert (brief["status"], brief["rounds"]) == (full["status"], full["rounds"]) == (
        "completed", 1)
    assert brief["summary_file"] == full["summary_file"]
    assert full["turns"][0]["status"] == "completed" and full["codex"]["version"]


def test_status_lists_sessions_and_shows_one(sparring: Any, repo: Path,
                                            fake_codex: Any) -> None:
    fake_codex.mode("ok")
    a = sparring("init", "--skill", "deep-discussion").out["session"]
    b = sparring("init", "--skill", "dual-model").out["session"]
    sparring("start", a, input=b"q")
    sparring("wait", a)
    listing = sparring("status").out["sessions"]
    assert {row["session"]: row["status"] for row in listing} == {a: "completed", b: "new"}
    one = sparring("status", a).out
    assert one["status"] == "completed" and one["rounds"] == 1
    table = sparring("status", "--table").raw
    assert a in table and "completed" in table and "SESSION" in table


@pytest.mark.parametrize("verb", ["poll", "wait", "stop", "finalize", "resume", "status"])
def test_every_verb_accepts_the_session_directory(sparring: Any, session: str,
                                                  fake_codex: Any, verb: str) -> None:
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    where = sparring("poll", session, "--full").out["session_dir"]
    sparring("wait", session)
    result = sparring(verb, where, input=b"next")
    assert result.exit_code == 0, result.raw
    assert result.out["session"] == session
    sparring("stop", session)


def test_codex_gets_the_users_environment_but_what_names_claude(sparring: Any, session: str,
                                                    fake_codex: Any, monkeypatch: Any,
                                                    tmp_path: Path) -> None:
    home = tmp_path / "my-codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("SPARRING_PROBE", "kept")
    monkeypatch.setenv("SPARRING_CLAUDE_MODEL", "claude-opus-4-5")
    claude_codes = {"CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli",
                    "CLAUDE_CODE_SESSION_ID": "5c1f", "CLAUDE_PROJECT_DIR": str(tmp_path)}
    for name, value in {**claude_codes, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}.items():
        monkeypatch.setenv(name, value)
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    sparring("wait", session)
    env = fake_codex.turn_calls()[0]["env"]
    assert env["CODEX_HOME"] == str(home) and env["SPARRING_PROBE"] == "kept"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"  # a provider of the user's
    # but who the other side is: the runner records its model (the turn), Codex is not told
    # it, nor that Claude Code started the round
    assert "SPARRING_CLAUDE_MODEL" not in env and not set(claude_codes) & set(env)
    assert sparring("status", session).out["claude_ran"]["models"] == ["claude-opus-4-5"]
    assert list(home.glob("sessions/*/*/*/rollout-*.jsonl")), "codex used the user's CODEX_HOME"


@pytest.mark.parametrize("flags", [(), ("--full",)])
def test_a_huge_answer_is_cut_and_the_guard_comes_before_it(sparring: Any, session: str,
                                                            fake_codex: Any,
                                                            flags: tuple[str, ...]) -> None:
    """A 2 MB answer is not printed whole (Claude Code keeps 30,000 characters of a Bash
    call's output): its start, how long it is and where it lies whole; the status, the
    guard's verdict and the tokens come first."""
    said = "An answer that goes on. " * 90_000
    fake_codex.script([{"reply": said}])  # through a file: an environment holds no 2 MB
    sparring("start", session, input=b"q")
    done = sparring("wait", session, "--timeout", "30", *flags)
    assert done.exit_code == 0 and done.out["status"] == "completed"
    assert len(done.raw) < 30_000, len(done.raw)
    review = done.out["review"]
    assert said.startswith(review["text"]) and len(review["text"]) == 20_000
    assert review["cut"]["total_chars"] == len(said)
    whole = Path(review["cut"]["whole_in"]).read_text()
    assert said in whole, "the whole answer stays in the turn's events"
    assert done.raw.index('"guard"') < done.raw.index('"review"')
    assert done.raw.index('"usage"') < done.raw.index('"review"')
