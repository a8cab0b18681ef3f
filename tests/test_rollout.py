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
