"""`sparring seal`: record Claude's own round-one analysis before Codex's is revealed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.turn import seal as sealing


def seal(ref: str, cwd: Path, content: bytes) -> dict[str, Any]:
    return sealing.seal(ref, cwd, content)
