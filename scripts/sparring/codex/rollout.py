"""What codex itself recorded about a thread, from its rollout file.

Codex appends every turn of a thread to
`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread_id>.jsonl`;
its `turn_context` lines say which model, effort, sandbox and approval
policy a turn really ran with. We only read it, and only to report.
"""

from __future__ import annotations

import os

from sparring.jsontext import loads

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def codex_home() -> Path:
    from pathlib import Path

    return Path(_home())


def _home() -> str:
    """Codex's folder: CODEX_HOME, else ~/.codex (as str: `status` reads it every round)."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def find(thread_id: str) -> Path | None:
    """The newest of `sessions/*/*/*/rollout-*-<thread_id>.jsonl` (by its path's parts)."""
    from pathlib import Path

    found = rollout_file(thread_id)
    return None if found is None else Path(found)


def rollout_file(thread_id: str) -> str | None:
    """find, as str, and without pathlib's glob (which loads fnmatch and re): `status`
    reads it every round. An id holding a glob character takes pathlib's own glob."""
    sessions = os.path.join(_home(), "sessions")
    if any(c in thread_id for c in "*?["):
        from pathlib import Path

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


def turn_context(thread_id: str | None) -> dict[str, Any] | None:
    """The settings of the thread's latest turn as codex recorded them, or None."""
    path = rollout_file(thread_id) if thread_id else None
    if path is None:
        return None
    found: dict[str, Any] | None = None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if '"turn_context"' in line:
                    found = _settings(line) or found
    except OSError:
        return None
    return found


def _settings(line: str) -> dict[str, Any] | None:
    try:
        payload = loads(line).get("payload") or {}
    except (ValueError, AttributeError):
        return None
    sandbox = payload.get("sandbox_policy")
    return {
        "model": payload.get("model"),
        "effort": payload.get("effort"),
        "sandbox": sandbox.get("type") if isinstance(sandbox, dict) else sandbox,
        "approval_policy": payload.get("approval_policy"),
    }
