"""`sparring seal`: record Claude's own round-one analysis before Codex's is revealed."""

from __future__ import annotations

from typing import Any

from sparring.store.inputs import read_input
from sparring.turn import seal as sealing


def seal(here: str, session: str, file: str | None) -> dict[str, Any]:
    return sealing.seal(session, here, read_input(file, "--file"))
