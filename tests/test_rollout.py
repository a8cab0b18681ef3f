"""codex/rollout.py finds a thread's rollout file as pathlib's glob would, without it: the
newest by its path, through hidden and linked folders, never a near miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparring.codex import rollout

THREAD = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


def glob(home: Path, thread: str) -> Path | None:
    found = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    return found[-1] if found else None


@pytest.mark.parametrize("thread", [THREAD, "other", "a[b]c"])
def test_the_rollout_found_is_pathlibs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       thread: str) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    sessions = tmp_path / "sessions"
    for name in (f"2026/11/24/rollout-2026-11-24T10-00-00-{THREAD}.jsonl",
                 f"2026/11/25/rollout-2026-11-25T09-00-00-{THREAD}.jsonl",
                 f"2026/11/25/rollout-2026-11-25T08-00-00-{THREAD}.jsonl",
                 f"2026/11/.hidden/rollout-x-{THREAD}.jsonl",
                 f"2026/11/25/rollout-{THREAD}.jsonl",  # no stamp: not the pattern
                 f"2026/11/25/rollout--{THREAD}.jsonl.bak",
                 f"2026/11-25/rollout-z-{THREAD}.jsonl",  # sorts apart as parts, not text
                 f"2026/rollout-y-{THREAD}.jsonl",  # too shallow
                 "2026/11/25/rollout-q-a[b]c.jsonl", "2026/11/25/rollout-q-abc.jsonl"):
        (sessions / name).parent.mkdir(parents=True, exist_ok=True)
        (sessions / name).write_text("{}\n")
    (sessions / "2027").symlink_to(sessions / "2026", target_is_directory=True)
    expected = glob(tmp_path, thread)
    assert rollout.find(thread) == expected
    assert rollout.rollout_file(thread) == (None if expected is None else str(expected))


def test_no_sessions_folder_no_rollout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "nothing"))
    assert rollout.find(THREAD) is None and rollout.rollout_file(THREAD) is None


def rollout_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *contexts: str) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    path = tmp_path / "sessions/2026/12/02" / f"rollout-2026-12-02T15-00-00-{THREAD}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(f'{{"timestamp":"{stamp}","type":"turn_context","payload":{body}}}\n'
                            for stamp, body in (c.split(" ", 1) for c in contexts)))


def test_what_codex_leaves_out_stays_out_and_both_sandbox_spellings_are_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Measured: codex leaves `effort` out of turn_context when the model's default is used,
    and spells the sandbox `{"type": …}` (0.100 on) or `{"mode": …}` (0.44); what it left
    out is not there at all, so it never overwrites what sparring passed."""
    rollout_with(tmp_path, monkeypatch,
                 '2026-12-02T15:00:01.000Z {"model":"gpt-5.5","sandbox_policy":'
                 '{"mode":"read-only"},"approval_policy":"never"}')
    assert rollout.turn_context(THREAD) == {"model": "gpt-5.5", "sandbox": "read-only",
                                            "approval_policy": "never"}
    from sparring.turn.summary import ran_with

    turn = {"settings": {"model": None, "effort": "high"},
            "ran": rollout.turn_context(THREAD)}
    assert ran_with(turn) == {"model": "gpt-5.5", "effort": "high", "recorded": True}


def test_a_turn_takes_only_the_settings_codex_recorded_since_it_began(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn that failed before codex recorded it must not take the settings of the turn
    before it."""
    import calendar
    import time

    rollout_with(tmp_path, monkeypatch,
                 '2026-12-02T15:00:01.000Z {"model":"gpt-5.5","effort":"low",'
                 '"sandbox_policy":{"type":"read-only"}}',
                 '2026-12-02T15:10:00.500Z {"model":"gpt-6.1-sol","effort":"high",'
                 '"sandbox_policy":{"type":"workspace-write"}}')
    began = calendar.timegm(time.strptime("2026-12-02T15:05:00", "%Y-%m-%dT%H:%M:%S"))
    assert rollout.turn_context(THREAD, since=began) == {
        "model": "gpt-6.1-sol", "effort": "high", "sandbox": "workspace-write"}
    assert rollout.turn_context(THREAD, since=began + 601) is None
    assert rollout.turn_context(THREAD)["model"] == "gpt-6.1-sol"
