"""State files: atomic, versioned, locked; a corrupt file is reported and kept."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sparring.errors import SparringError
from sparring.store.statefile import StateFile
from support.damage import LOCK_DAMAGE, damage_lock


def test_update_is_read_modify_write_under_a_lock(tmp_path: Path) -> None:
    state = StateFile(tmp_path / "s.json", "session", 1)
    state.create({"count": 0})

    def bump() -> None:
        for _ in range(50):
            with state.update() as data:
                data["count"] += 1

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state.read()["count"] == 200
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("content", ["{not json", "[]", '{"no": "format"}', ""])
def test_corrupt_file_is_reported_and_left_untouched(tmp_path: Path, content: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content)
    with pytest.raises(SparringError) as err:
        StateFile(path, "session", 1).read()
    assert err.value.code == "state_corrupt"
    assert str(path) in err.value.message and err.value.hint
    assert path.read_text() == content


def test_newer_format_is_refused_older_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"format": 3}))
    with pytest.raises(SparringError) as err:
        StateFile(path, "session", 2).read()
    assert err.value.code == "state_version_unsupported"

    path.write_text(json.dumps({"format": 1, "old": 1}))
    state = StateFile(path, "session", 2, {1: lambda d: {**d, "format": 2, "new": d["old"]}})
    assert state.read()["new"] == 1


def test_a_failed_update_writes_nothing(tmp_path: Path) -> None:
    state = StateFile(tmp_path / "s.json", "session", 1)
    state.create({"value": "kept"})
    with pytest.raises(RuntimeError), state.update() as data:
        data["value"] = "lost"
        raise RuntimeError("boom")
    assert state.read()["value"] == "kept"


def _shapes() -> dict[str, bytes | Callable[[dict[str, Any]], Any]]:
    """Ways a session.json can be valid JSON (or not even UTF-8) yet not what sparring wrote."""
    def without(key: str) -> Callable[[dict[str, Any]], Any]:
        return lambda d: {k: v for k, v in d.items() if k != key}

    def turn(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], Any]:
        def apply(d: dict[str, Any]) -> Any:
            change(d["turns"][0])
            return d
        return apply

    return {
        "bad-utf8": b"\xff",
        "only-format": lambda d: {"format": 1, "kind": "session"},
        "no-turns": without("turns"),
        "turns-text": lambda d: {**d, "turns": "none"},
        "skill-not-a-name": lambda d: {**d, "skill": "think about!"},
        "turn-no-settings": turn(lambda t: t.pop("settings")),
        "turn-bad-status": turn(lambda t: t.update(status="exploded")),
        "turn-timeout-text": turn(lambda t: t["settings"].update(timeout="soon")),
        "turn-n-bool": turn(lambda t: t.update(n=True)),
        "codex-pid-text": turn(lambda t: t.update(codex={"pid": "1", "started": 1.0})),
        "verdict-not-object": lambda d: {**d, "engine": {**d["engine"], "verdicts": {"1": 3}}},
        "turn-n-out-of-order": turn(lambda t: t.update(n=5)),
        "turn-listed-twice": lambda d: {**d, "turns": d["turns"] * 2},
    }


@pytest.mark.parametrize("name", list(_shapes()))
def test_a_session_of_the_wrong_shape_is_state_corrupt_and_status_lists_the_rest(
        sparring: Any, repo: Path, fake_codex: Any, name: str) -> None:
    ids = [sparring("init", "--skill", "think-about").out["session"] for _ in range(3)]
    assert sparring("start", ids[1], input=b"q").exit_code == 0
    sparring("wait", ids[1], "--timeout", "30")
    path = repo / ".sparring" / "sessions" / ids[1] / "session.json"
    damage = _shapes()[name]
    if isinstance(damage, bytes):
        path.write_bytes(path.read_bytes() + damage)
    else:
        path.write_text(json.dumps(damage(json.loads(path.read_text()))))
    before = path.read_bytes()
    for verb in (["poll"], ["wait", "--timeout", "1"], ["status"], ["stop"], ["finalize"],
                 ["resume"], ["seal", "--file", "-"], ["verdict", "--file", "-"],
                 ["report"]):
        result = sparring(verb[0], ids[1], *verb[1:], input=b"{}")
        assert result.error_code == "state_corrupt", (verb, result.raw)
        assert str(path) in result.out["error"]["message"]
    listed = sparring("status")
    assert listed.exit_code == 0, listed.raw
    rows = {row["session"]: row for row in listed.out["sessions"]}
    assert set(rows) == set(ids)
    assert rows[ids[1]]["status"] == "unreadable"
    assert rows[ids[1]]["error"]["code"] == "state_corrupt"
    assert rows[ids[0]]["status"] == rows[ids[2]]["status"] == "new"
    assert path.read_bytes() == before  # never repaired, never rewritten


def test_a_session_of_a_workflow_sparring_does_not_know_is_refused_where_it_matters(
        sparring: Any, repo: Path, fake_codex: Any) -> None:
    """Which workflows exist is the registry's business, not the session file's shape: the
    verbs that run a workflow's logic refuse such a session as state_corrupt, naming it; the
    ones that watch, stop and close a session still work, so its Codex can always be stopped."""
    sid = sparring("init", "--skill", "think-about").out["session"]
    assert sparring("start", sid, input=b"q").exit_code == 0
    sparring("wait", sid, "--timeout", "30")
    path = repo / ".sparring" / "sessions" / sid / "session.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "skill": "chess"}))
    before = path.read_bytes()
    for verb in (["verdict", "--file", "-"], ["report"]):
        refused = sparring(verb[0], sid, *verb[1:], input=b"{}")
        assert refused.error_code == "state_corrupt", (verb, refused.raw)
        assert "'chess' is not a workflow this sparring knows" in refused.out["error"]["message"]
    assert path.read_bytes() == before
    for verb in (["poll"], ["status"], ["stop"]):
        assert sparring(verb[0], sid, *verb[1:]).exit_code == 0, verb


def test_a_turn_folder_the_session_does_not_list_is_set_aside_not_reused(
        sparring: Any, repo: Path, fake_codex: Any) -> None:
    """session.json edited by hand back to no turns: the next start is turn 1 again, and
    what the first turn 1 wrote is kept beside it."""
    fake_codex.mode("ok", reply="the first answer")
    sid = sparring("init", "--skill", "deep-discussion").out["session"]
    sparring("start", sid, input=b"first question")
    sparring("wait", sid, "--timeout", "30")
    folder = repo / ".sparring" / "sessions" / sid
    path = folder / "session.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "turns": []}))
    first = {p.name: p.read_bytes() for p in (folder / "turns" / "1").iterdir()}
    fake_codex.mode("ok", reply="the second answer")
    assert sparring("start", sid, input=b"second question").exit_code == 0
    assert sparring("wait", sid, "--timeout", "30").out["review"]["text"] == "the second answer"
    aside = [p for p in (folder / "turns").iterdir() if p.name.startswith("1.unlisted-")]
    assert len(aside) == 1
    assert {p.name: p.read_bytes() for p in aside[0].iterdir()} == first
    assert b"first question" in first["prompt.txt"]


@pytest.mark.parametrize("damage", LOCK_DAMAGE)
def test_a_damaged_lock_is_state_corrupt_for_its_session_alone(
        sparring: Any, fake_codex: Any, repo: Path, tmp_path: Path, damage: str) -> None:
    """What a workspace-write Codex may put where session.json's lock goes: a folder, a link
    to a file outside, a FIFO. Every verb that would write that session says so, naming the
    lock; nothing is created through the link nor waited on; the project's `status` and
    every other session go on."""
    fake_codex.mode("ok")
    sid, other = (sparring("init", "--skill", "deep-discussion").out["session"]
                  for _ in range(2))
    sparring("start", sid, input=b"q")
    sparring("wait", sid, "--timeout", "30")
    lock = repo / ".sparring" / "sessions" / sid / "session.json.lock"
    lock.unlink()
    outside = tmp_path / "outside-lock"
    damage_lock(lock, outside, damage)
    for argv in (("resume", sid), ("stop", sid), ("finalize", sid), ("guard", "accept", sid)):
        refused = sparring(*argv, input=b"again")
        assert refused.error_code == "state_corrupt", (argv, refused.raw)
        assert "session.json.lock" in refused.out["error"]["message"]
    assert not os.path.lexists(outside)
    for argv in (("status",), ("status", "--open"), ("poll", sid), ("status", sid)):
        assert sparring(*argv).exit_code == 0, argv
    assert sparring("start", other, input=b"q").exit_code == 0
    assert sparring("wait", other, "--timeout", "30").out["status"] == "completed"
