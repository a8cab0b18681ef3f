"""What codex itself recorded about a thread, from its rollout file.

Codex appends every turn of a thread to
`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread_id>.jsonl`;
its `turn_context` lines say which model, effort, sandbox and approval
policy a turn really ran with. We only read it, and only to report.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


def codex_home() -> Path:
    from pathlib import Path

    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def find(thread_id: str) -> Path | None:
    matches = sorted((codex_home() / "sessions").glob(f"*/*/*/rollout-*-{thread_id}.jsonl"))
    return matches[-1] if matches else None


def turn_context(thread_id: str | None) -> dict[str, Any] | None:
    """The settings of the thread's latest turn as codex recorded them, or None."""
    path = find(thread_id) if thread_id else None
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
    from sparring.fastjson import loads  # json.loads, without loading json (`status`)

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
