"""Reading codex's JSONL: the vocabulary of the reference, and what is not JSONL."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sparring.codex import events


def lines(*objs: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


THREAD = {"type": "thread.started", "thread_id": "01a2011f-f78c-7750-8dfd-09024cb0f320"}
USAGE = {"input_tokens": 9554, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
         "output_tokens": 7, "reasoning_output_tokens": 0}


def test_completed_turn_gives_thread_answer_and_cumulative_usage() -> None:
    view = events.parse(lines(
        THREAD, {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                            "text": "hi from mock"}},
        {"type": "turn.completed", "usage": USAGE}), finished=True)
    assert view.thread_id == THREAD["thread_id"]
    assert view.completed and view.failure is None
    assert view.final_message == "hi from mock"
    assert view.usage == USAGE


def test_commands_files_and_reasoning_become_activities() -> None:
    command = {"id": "item_0", "type": "command_execution",
               "command": "/bin/bash -lc 'rg -n TODO'", "aggregated_output": "",
               "exit_code": None, "status": "in_progress"}
    done = {**command, "aggregated_output": "a.py:1: TODO\n", "exit_code": 0,
            "status": "completed"}
    change = {"id": "item_1", "type": "file_change", "status": "completed",
              "changes": [{"path": "/repo/new.txt", "kind": "add"}]}
    view = events.parse(lines(
        THREAD, {"type": "item.started", "item": command},
        {"type": "item.completed", "item": done},
        {"type": "item.completed", "item": change},
        {"type": "item.completed", "item": {"id": "item_2", "type": "reasoning",
                                            "text": "**Reading** the scheduler"}}),
        finished=False)
    assert view.activities == [
        {"kind": "command", "command": "/bin/bash -lc 'rg -n TODO'", "status": "completed",
         "exit_code": 0},
        {"kind": "file_change", "path": "/repo/new.txt", "change": "add", "status": "completed"},
        {"kind": "reasoning", "text": "**Reading** the scheduler"},
    ]


def test_retry_notices_are_not_failures_but_turn_failed_is() -> None:
    notice = "Reconnecting... 1/5 (We’re currently experiencing high demand)"
    view = events.parse(lines(THREAD, {"type": "turn.started"},
                              {"type": "error", "message": notice}), finished=False)
    assert view.failure is None and view.notices == [notice]
    failed = events.parse(lines(
        THREAD, {"type": "error", "message": "exceeded retry limit, last status: 429"},
        {"type": "turn.failed", "error": {"message": "exceeded retry limit, last status: 429"}}),
        finished=True)
    assert failed.failure == "exceeded retry limit, last status: 429"
    assert not failed.completed


def test_malformed_lines_are_counted_and_skipped() -> None:
    data = (lines(THREAD) + b"not json at all\n" + b'{"type":"item.completed","item":\n'
            + b"[1, 2]\n" + b'{"no_type": true}\n' + b"\xff\xfe\n"
            + lines({"type": "turn.completed", "usage": USAGE}))
    view = events.parse(data, finished=True)
    assert view.malformed == 5
    assert view.completed and view.thread_id == THREAD["thread_id"]


def test_unterminated_last_line_waits_until_the_stream_ends() -> None:
    data = lines(THREAD) + json.dumps({"type": "turn.completed", "usage": USAGE}).encode()
    assert not events.parse(data, finished=False).completed
    assert events.parse(data, finished=True).completed


def test_usage_ignores_unknown_and_non_integer_values() -> None:
    assert events.usage_of({"input_tokens": 5, "output_tokens": "7", "extra": 1}) == {
        "input_tokens": 5, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
        "output_tokens": 0, "reasoning_output_tokens": 0}


@pytest.mark.parametrize("said", ["--sandbox=danger-full-access", "-c", "a b", "x;rm -rf /",
                                  "", "é" * 3, "t" * 200])
def test_a_thread_id_codex_gives_is_taken_only_as_a_thread_id(said: str) -> None:
    """Codex is not trusted: a thread id that could read as a flag (or anything else but a
    plain word) on `codex exec resume`'s command line is not taken."""
    view = events.parse(lines({"type": "thread.started", "thread_id": said},
                              {"type": "turn.started"}), finished=True)
    assert view.thread_id is None
    taken = events.parse(lines(THREAD), finished=True)
    assert taken.thread_id == THREAD["thread_id"]


@pytest.mark.parametrize("also_completed", [False, True])
def test_a_turn_failed_event_is_a_failure_even_when_codex_exits_0(also_completed: bool) -> None:
    """Only turn.failed and the exit code mean failure (top-level `error` events are retry
    notices): a stream that says turn.failed failed, whatever else it says."""
    from sparring.turn import turns

    said = [THREAD, {"type": "turn.started"}, {"type": "error", "message": "Reconnecting..."},
            {"type": "item.completed", "item": {"id": "m", "type": "agent_message",
                                                "text": "an answer"}},
            {"type": "turn.failed", "error": {"message": "stream error"}}]
    if also_completed:
        said.append({"type": "turn.completed", "usage": USAGE})
    turn: Any = {"settings": {"timeout": 600, "stall_after": 120}}
    outcome = turns.classify(events.parse(lines(*said), finished=True), 0, None, "", turn)
    assert outcome.status == "failed" and "stream error" in outcome.error["message"]
    notices = events.parse(lines(THREAD, {"type": "error", "message": "Reconnecting... 1/5"},
                                 *said[3:4], {"type": "turn.completed", "usage": USAGE}),
                           finished=True)
    assert turns.classify(notices, 0, None, "", turn).status == "completed", \
        "a retry notice alone is no failure"


def test_codex_043s_item_type_dialect_reads_as_todays() -> None:
    """codex 0.43 (openai/codex#4525, before #4610) tagged items `item_type` and called the
    answer `assistant_message`: a completed turn of it is read whole, its commands too."""
    view = events.parse(lines(
        THREAD, {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "item_type": "command_execution",
                                            "command": "bash -lc 'cat note.txt'",
                                            "aggregated_output": "PING\n", "exit_code": 0,
                                            "status": "completed"}},
        {"type": "item.completed", "item": {"id": "item_1", "item_type": "assistant_message",
                                            "text": "Created note.txt"}},
        {"type": "turn.completed", "usage": USAGE}), finished=True)
    assert view.completed and view.final_message == "Created note.txt"
    assert view.activities == [{"kind": "command", "command": "bash -lc 'cat note.txt'",
                                "status": "completed", "exit_code": 0}]
