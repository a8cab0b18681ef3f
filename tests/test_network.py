"""Telling a Codex that only reconnects from one that works (sparring/network.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparring.codex.network import OfflineWatch, reconnect_notice

WAITING = "Reconnecting... waiting for network (Connection failed: error sending request)"


def line(kind: str, **fields: object) -> bytes:
    return json.dumps({"type": kind, **fields}).encode() + b"\n"


@pytest.mark.parametrize("raw, counts", [
    (line("error", message=WAITING), True),
    (line("error", message="Reconnecting... 1/5 (stream disconnected before completion: "
                           "idle timeout waiting for SSE)"), True),
    (line("error", message="Reconnecting... 2/5 (exceeded retry limit, last status: 429 "
                           "Too Many Requests)"), False),  # codex ends those itself
    (line("error", message="We’re currently experiencing high demand"), False),
    (line("item.completed", item={"type": "agent_message", "text": WAITING}), False),
    (b"not json", False),
])
def test_what_counts_as_a_reconnect_notice(raw: bytes, counts: bool) -> None:
    assert (reconnect_notice(raw.strip()) is not None) is counts


def test_the_clock_runs_from_the_first_notice_and_any_other_event_resets_it(
        tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    watch = OfflineWatch(events, limit=10)
    assert not watch.passed(0)  # no file yet

    events.write_bytes(line("thread.started", thread_id="t") + line("turn.started"))
    assert not watch.passed(1) and watch.since is None
    with events.open("ab") as f:
        f.write(line("error", message=WAITING))
    assert not watch.passed(2) and watch.since == 2
    with events.open("ab") as f:
        f.write(line("error", message=WAITING))
    assert not watch.passed(7) and watch.since == 2  # still offline since the first notice
    assert watch.passed(12.5)

    with events.open("ab") as f:  # the network came back: an item arrives
        f.write(line("item.completed", item={"id": "item_0", "type": "reasoning", "text": "x"}))
    assert not watch.passed(13) and watch.since is None


def test_a_line_still_being_written_waits_for_its_end(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    whole = line("error", message=WAITING)
    events.write_bytes(whole[:20])
    watch = OfflineWatch(events, limit=1)
    assert not watch.passed(0) and watch.since is None
    with events.open("ab") as f:
        f.write(whole[20:])
    assert not watch.passed(5) and watch.since == 5
    assert watch.passed(6.5)
