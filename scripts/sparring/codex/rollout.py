"""What codex itself recorded about a thread, from its rollout file.

Codex appends every turn of a thread to
`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread_id>.jsonl`;
its `turn_context` lines say which model, effort, sandbox and approval
policy a turn really ran with, and its `response_item` lines hold every tool
call and what it returned, a sub-agent's too (whose calls never reach the
primary thread's `--json` events). We only read it: to report, and for the
independence check.

Measured: a field codex does not set is left out of `turn_context` (no `effort`
when the model's default is used), and the sandbox is
`sandbox_policy: {"type": ...}` from codex 0.100 on, `{"mode": ...}` before
(0.44). The effort recorded is the one asked for: codex 0.171 sends `ultra` to
gpt-5.5 as `xhigh` and still records `ultra`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from sparring.jsontext import loads, loads_kept, text_of
from sparring.paths import read_own


def codex_home() -> Path:
    return Path(_home())


def _home() -> str:
    """Codex's folder: CODEX_HOME, else ~/.codex (as str: `status` reads it every round)."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def find(thread_id: str) -> Path | None:
    """The newest of `sessions/*/*/*/rollout-*-<thread_id>.jsonl` (by its path's parts)."""
    found = rollout_file(thread_id)
    return None if found is None else Path(found)


def rollout_file(thread_id: str) -> str | None:
    """find, as str, and without pathlib's glob (which loads fnmatch and re): `status`
    reads it every round. An id holding a glob character takes pathlib's own glob."""
    sessions = os.path.join(_home(), "sessions")
    if any(c in thread_id for c in "*?["):
        matches = sorted(Path(sessions).glob(f"*/*/*/rollout-*-{thread_id}.jsonl"))
        return str(matches[-1]) if matches else None
    head, tail = "rollout-", f"-{thread_id}.jsonl"
    found = [parts for parts in _three_folders_down(sessions)
             if parts[-1].startswith(head) and parts[-1].endswith(tail)
             and len(parts[-1]) >= len(head) + len(tail)]
    return os.path.join(sessions, *max(found)) if found else None


def _three_folders_down(top: str) -> list[tuple[str, ...]]:
    """(a, b, c, name) of every entry `top/a/b/c/name`, each of a, b, c a folder (links to
    one too), as pathlib's `*/*/*/*` selects them; unreadable folders are passed over."""
    level: list[tuple[str, ...]] = [()]
    for depth in range(4):
        deeper = []
        for parts in level:
            try:
                with os.scandir(os.path.join(top, *parts)) as entries:
                    deeper += [(*parts, e.name) for e in entries
                               if depth == 3 or e.is_dir()]
            except OSError:
                continue
        level = deeper
    return level


def turn_context(thread_id: str | None, since: float | None = None) -> dict[str, Any] | None:
    """The settings of the thread's latest turn as codex recorded them, or None; with
    `since` (a time), only of a turn codex began then or later: a turn that failed before
    codex recorded it must not take the settings of the turn before."""
    path = rollout_file(thread_id) if thread_id else None
    if path is None:
        return None
    # Rollout lines begin with `{"timestamp":"2026-12-02T15:02:13.074Z"` (UTC): compared as
    # text with the second before `since`, as codex writes it.
    after = None if since is None else time.strftime('"%Y-%m-%dT%H:%M:%S',
                                                     time.gmtime(since - 1))
    found: dict[str, Any] | None = None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if '"turn_context"' in line and (after is None or _stamp(line) >= after):
                    found = _settings(line) or found
    except OSError:
        return None
    return found


def _stamp(line: str) -> str:
    """The line's `"timestamp"` as written, from its opening quote."""
    at = line.find('"timestamp":')
    return line[at + 12:at + 32] if at >= 0 else ""


def _settings(line: str) -> dict[str, Any] | None:
    """What a `turn_context` line says, only what it says: a field codex left out is not
    there (None never stands for it)."""
    try:
        payload = loads(line).get("payload") or {}
    except (ValueError, AttributeError):
        return None
    if not isinstance(payload, dict):
        return None
    sandbox = payload.get("sandbox_policy")
    if isinstance(sandbox, dict):  # `type` today, `mode` in older rollouts
        sandbox = sandbox.get("type") or sandbox.get("mode")
    said = {"model": payload.get("model"), "effort": payload.get("effort"),
            "sandbox": sandbox, "approval_policy": payload.get("approval_policy")}
    return {key: value for key, value in said.items() if isinstance(value, str) and value}


# The most of a rollout the independence check reads (a turn writes 35-45 KB).
ROLLOUT_LIMIT = 64 * 1024 * 1024


class ToolCall:
    """One tool call a thread made, from its rollout: its kind and what it ran (`what`),
    what it wrote (the call's arguments) and saw (its output), and the threads it spawned."""

    def __init__(self, kind: str, what: str, wrote: str) -> None:
        self.kind, self.what, self.wrote = kind, what, wrote
        self.saw = ""
        self.agents: list[str] = []


# How much of a rollout's end `usage` reads: many times the lines of one model request.
_USAGE_TAIL = 256 * 1024


def usage(thread_id: str | None) -> dict[str, int] | None:
    """The thread's tokens so far as codex last recorded them (its latest `token_count`,
    written after each model request, cumulative for the thread like `turn.completed`'s),
    read from the rollout's end; None when there is none yet."""
    path = rollout_file(thread_id) if thread_id else None
    raw = read_own(path, ROLLOUT_LIMIT, tail=_USAGE_TAIL) if path else None
    for line in reversed((raw or b"").splitlines()):
        if b'"token_count"' not in line:
            continue
        try:
            info = (loads(line).get("payload") or {}).get("info") or {}
        except (ValueError, AttributeError, RecursionError):
            continue
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if isinstance(total, dict):
            return {key: value for key, value in total.items()
                    if isinstance(value, int) and not isinstance(value, bool)}
    return None


def tool_calls(thread_id: str) -> list[ToolCall] | None:
    """Every tool call the thread's rollout records, with its output; None when there is no
    rollout for it, or none of bounded size."""
    path = rollout_file(thread_id)
    raw = read_own(path, ROLLOUT_LIMIT) if path else None
    if raw is None:
        return None
    calls: dict[str, ToolCall] = {}
    for line in raw.splitlines():
        if b'"response_item"' in line:
            _note_call(calls, line)
    return list(calls.values())


def _note_call(calls: dict[str, ToolCall], line: bytes) -> None:
    try:
        payload = loads_kept(line).get("payload")
    except (ValueError, AttributeError):
        return
    if not isinstance(payload, dict):
        return
    kind, key = str(payload.get("type") or ""), str(payload.get("call_id") or len(calls))
    if kind.endswith("_output") and key in calls:
        call = calls[key]
        call.saw = text_of(payload.get("output"))
        if call.kind == "spawn_agent":
            call.agents = _agent_ids(call.saw)
    elif kind.endswith("_call"):
        arguments = _arguments(payload)
        name = str(payload.get("name") or kind)
        what = arguments.get("cmd") if isinstance(arguments, dict) else None
        calls[key] = ToolCall(name, str(what or text_of(arguments) or name),
                              f"{name} {text_of(arguments)}".strip())


def _arguments(payload: dict[str, Any]) -> Any:
    """A call's arguments: function calls carry them as a JSON string, custom tools their
    input, shell and search calls an action."""
    raw = payload.get("arguments")
    if isinstance(raw, str):
        try:
            return loads_kept(raw)
        except ValueError:
            return raw
    return payload.get("input") or payload.get("action") or raw


def _agent_ids(output: str) -> list[str]:
    """The thread a `spawn_agent` call's output names (`{"agent_id": ...}`)."""
    try:
        said = loads_kept(output)
    except ValueError:
        return []
    found = said.get("agent_id") if isinstance(said, dict) else None
    return [found] if isinstance(found, str) else []
