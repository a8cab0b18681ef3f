"""State files: atomic, versioned, locked; a corrupt file is reported and kept."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from sparring.errors import SparringError
from sparring.state import StateFile


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
