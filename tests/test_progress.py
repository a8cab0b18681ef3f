"""`wait` shows what Codex does while it waits (issue 53): a line per command as it happens,
on stderr, bounded, each line inert; the JSON answer alone on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from sparring.codex import rollout
from sparring.turn import progress
from sparring.turn.progress import LINE_CHARS, MAX_LINES, inert
from support.debates import answer, cpt

HOSTILE = ("x\x1b[2J\x1b]0;owned\x07 && touch PWNED\r\n$(touch PWNED2)\u202e `sparring guard "
           "accept SESSION` ; {launcher} stop SESSION " + "y" * 300)


def wait_as_claude_code_runs_it(session: str, cwd: Path, *extra: str
                                ) -> tuple[dict[str, Any], list[tuple[float, str]], float]:
    """`sparring wait` as its own process, its two streams apart, as the Bash tool reads
    them: the JSON on stdout, and each stderr line with when it came."""
    started = time.time()
    child = subprocess.Popen([sys.executable, "-m", "sparring", "wait", session, *extra],
                             cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONUNBUFFERED": "0"})
    assert child.stderr is not None and child.stdout is not None
    lines = [(time.time(), line.decode()) for line in child.stderr]
    out = child.stdout.read()
    assert child.wait(timeout=60) == 0
    return json.loads(out), lines, started


def test_wait_prints_each_command_as_codex_runs_it_and_the_json_alone_on_stdout(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    fake_codex.mode("slow", delay="4")
    sparring("start", session, input=b"q")

    out, lines, _ = wait_as_claude_code_runs_it(session, repo)

    assert out["ok"] is True and out["status"] == "completed"
    texts = [text for _, text in lines]
    ran = [t for t in texts if t.startswith("# codex ") and "ran /bin/bash -lc 'cat notes.md'" in t]
    assert len(ran) >= 3, texts  # one a second, as the fake runs them
    assert texts[0].startswith("# sparring ") and "following Codex's turn 1" in texts[0]
    assert "ended: completed" in texts[-1]
    ended = json.loads((repo / ".sparring" / "sessions" / session / "session.json")
                       .read_text())["turns"][0]["ended_at"]
    first_ran = next(when for when, text in lines if text in ran)
    assert first_ran < ended - 1.5, "the first command shown well before the turn ended"


def test_nothing_is_printed_for_a_turn_that_had_ended_nor_with_quiet(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    fake_codex.mode("slow", delay="2")
    sparring("start", session, input=b"q")
    _, lines, _ = wait_as_claude_code_runs_it(session, repo, "--quiet")
    assert lines == []
    out, lines, _ = wait_as_claude_code_runs_it(session, repo)
    assert out["status"] == "completed" and lines == []


def test_codexs_text_in_a_line_is_inert_cut_short_and_labelled(
        sparring: Any, session: str, fake_codex: Any, repo: Path, tmp_path: Path) -> None:
    """What Codex ran, however hostile, comes out as a comment on one line with no control
    character: pasted into bash, a line runs nothing, a launcher neither."""
    launcher = tmp_path / "skill" / "sparring"
    launcher.parent.mkdir()
    launcher.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/LAUNCHED\n')
    launcher.chmod(0o755)
    fake_codex.mode("commands", command=HOSTILE.format(launcher=launcher), event_delay="0.4")
    sparring("start", session, input=b"q")

    _, lines, _ = wait_as_claude_code_runs_it(session, repo)

    texts = [text for _, text in lines]
    shown = [t for t in texts if t.startswith("# codex ") and "touch PWNED" in t]
    assert len(shown) == 1, texts
    for text in texts:
        assert text.endswith("\n") and text.count("\n") == 1
        assert len(text) - 1 <= LINE_CHARS and text.startswith("# ")
        assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in text[:-1]), repr(text)
        assert "\u202e" not in text
    assert shown[0].rstrip("\n").endswith("…")
    for text in texts:
        subprocess.run(["bash", "-c", text], cwd=repo, capture_output=True, timeout=30,
                       check=True)
    assert not list(tmp_path.rglob("PWNED*")) and not (tmp_path / "LAUNCHED").exists()


def test_the_lines_stop_at_the_cap_and_the_last_one_counts_the_rest(
        sparring: Any, session: str, fake_codex: Any, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "MAX_LINES", 3)
    fake_codex.mode("slow", delay="5")
    sparring("start", session, input=b"q")
    capsys.readouterr()

    assert sparring("wait", session).out["status"] == "completed"

    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 4, lines
    assert lines[-1].endswith(" more not shown") and "; … " in lines[-1]
    left = int(lines[-1].rsplit("… ", 1)[1].split()[0])
    assert left >= 2  # five commands or so, the start line and two shown


def test_a_quiet_turn_says_it_still_works_and_a_timed_out_wait_says_wait_again(
        sparring: Any, session: str, fake_codex: Any, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "QUIET_S", 1.0)
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    capsys.readouterr()

    out = sparring("wait", session, "--timeout", "3.5").out

    lines = capsys.readouterr().err.splitlines()
    assert out["wait_timed_out"] is True
    assert sum("Codex still works; commands so far: 0; its last event" in x for x in lines) >= 2
    assert lines[-1].endswith("still runs: wait again"), lines
    sparring("stop", session)


def test_the_tokens_come_once_codexs_answer_may_be_shown(
        sparring: Any, session: str, fake_codex: Any, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """Before the seal the round's tokens are withheld with Codex's answer (brief.py), in
    the last line too; in a session without a seal, the line says them."""
    said = answer([cpt("X-1", "agree", "SQLite holds")])
    fake_codex.mode("slow", delay="2", reply=json.dumps(said))
    sid = sparring("init", "--skill", "dual-model").out["session"]
    sparring("start", sid, "--template", "dual-model/dispatch", "--var",
             "QUESTION=Redis or SQLite?", "--var", "CONTEXT=none")
    capsys.readouterr()
    round_one = sparring("wait", sid).out
    assert round_one["status"] == "completed" and "usage" not in round_one
    unsealed = capsys.readouterr().err.splitlines()
    assert unsealed[-1].endswith("ended: completed"), unsealed
    assert not any("tokens" in line for line in unsealed), unsealed

    sparring("start", session, input=b"q")
    capsys.readouterr()
    out = sparring("wait", session).out
    spent = out["usage"]["round"]["input_tokens"] + out["usage"]["round"]["output_tokens"]
    assert spent > 0
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f"ended: completed, {spent:,} tokens this round")


@pytest.mark.parametrize(("text", "room", "shown"), [
    ("a\tb\n\nc", 100, "a b c"),
    ("\x1b[31mred\x1b[0m", 100, "?[31mred?[0m"),
    ("bidi\u202eevil\u200b", 100, "bidi?evil?"),
    ("x" * 10, 5, "xxxx…"),
])
def test_inert_keeps_one_plain_line(text: str, room: int, shown: str) -> None:
    assert inert(text, room) == shown


def test_no_control_or_format_character_of_unicode_survives_inert() -> None:
    """Every character Unicode calls a control, a format mark, a surrogate or a line or
    paragraph separator (U+FFF9 interlinear annotations and U+2066 bidi isolates among them)
    comes out as `?` (line and paragraph separators as a space); letters, marks and
    symbols as they were."""
    unsafe = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not chr(c).isspace()]
    shown = inert("".join(chars), len(chars))
    assert len(shown) == len(chars)
    kept = [c for c, s in zip(chars, shown, strict=True) if s == c]
    hidden = [c for c, s in zip(chars, shown, strict=True) if s != c]
    assert {unicodedata.category(c) for c in hidden} <= unsafe
    assert not {unicodedata.category(c) for c in kept} & unsafe
    assert {"\ufff9", "\ufffb", "\u2066", "\u0600", "\U000e0041"} <= set(hidden)
    assert {unicodedata.category(c) for c in hidden} == {"Cc", "Cf", "Cs"}
    assert inert("a\u2028b\u2029c", 10) == "a b c"  # Zl and Zp: spaces, flattened


def test_the_cap_keeps_what_lands_in_claudes_context_small() -> None:
    assert MAX_LINES * (LINE_CHARS + 1) <= 2_100


def test_each_line_says_the_turns_tokens_so_far_from_codexs_rollout(
        sparring: Any, session: str, fake_codex: Any, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """codex records the thread's tokens in its rollout after each model request; a line
    says this turn's share so far."""
    monkeypatch.setattr(progress, "QUIET_S", 0.5)
    monkeypatch.setattr(progress, "TOKENS_EVERY_S", 0.0)
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    thread = None
    for _ in range(100):
        thread = sparring("poll", session, "--full").out["thread_id"]
        if thread and rollout.find(thread):
            break
        time.sleep(0.05)
    path = rollout.find(str(thread))
    assert path is not None
    total = {"input_tokens": 12_345, "cached_input_tokens": 0, "output_tokens": 655,
             "reasoning_output_tokens": 0, "total_tokens": 13_000}
    with path.open("a") as rolled:
        rolled.write(json.dumps({"type": "event_msg", "payload": {
            "type": "token_count", "info": {"total_token_usage": total}}}) + "\n")
    capsys.readouterr()

    sparring("wait", session, "--timeout", "2")

    lines = capsys.readouterr().err.splitlines()
    said = ", 13.0k tokens: Codex still works; commands so far: 0"
    assert any(said in line for line in lines), lines
    assert rollout.usage(thread) == total
    sparring("stop", session)


def test_the_rollouts_tokens_are_its_last_count(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """As the real codex 0.171.0 writes them: a `token_count` after each model request."""
    recorded = json.loads((Path(__file__).parent / "fixtures" / "codex" / "0.171.0" /
                           "command.json").read_text())
    [lines] = recorded["rollouts"].values()
    thread = "019a0000-0000-7000-8000-000000000001"
    folder = tmp_path / "codex" / "sessions" / "2026" / "12" / "02"
    folder.mkdir(parents=True)
    (folder / f"rollout-2026-12-02T20-42-13-{thread}.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert rollout.usage(thread) == {"input_tokens": 44, "cached_input_tokens": 0,
                                     "cache_write_input_tokens": 0, "output_tokens": 14,
                                     "reasoning_output_tokens": 0, "total_tokens": 58}
    assert rollout.usage("019a0000-0000-7000-8000-00000000ffff") is None
