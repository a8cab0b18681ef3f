"""`sparring seal`: record Claude's own round-one analysis before Codex's is revealed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.turn import barrier


def seal(ref: str, cwd: Path, content: bytes) -> dict[str, Any]:
    return barrier.seal(ref, cwd, content)
