"""`sparring seal`: record Claude's own round-one analysis before Codex's is revealed."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from sparring import engine
from sparring import session as sessions
from sparring.errors import SparringError
from sparring.state import write_private

SEALED_FILE = "sealed-claude-round-1.md"


def seal(ref: str, cwd: Path, content: bytes) -> dict[str, Any]:
    session = sessions.resolve(ref, cwd)
    if not content.strip():
        raise SparringError("input_empty", "the analysis to seal is empty",
                            "write your analysis to a file and pass --file FILE")
    digest = hashlib.sha256(content).hexdigest()
    path = session.dir / SEALED_FILE
    with session.update() as data:
        state = engine.state(data)
        existing = state["seal"]
        if existing and existing["sha256"] != digest:
            raise SparringError("already_sealed", f"another analysis was sealed at "
                                f"{_when(existing['sealed_at'])}", "a seal cannot be replaced: "
                                "that is what makes it a seal; continue with the debate")
        if existing is None:
            if state["revealed_at"] or any(t["round"] > 1 for t in data["turns"]):
                raise SparringError("invalid_transition", "Codex's answer was already "
                                    "revealed; sealing now would prove nothing", "continue "
                                    "with `sparring verdict`")
            write_private(path, content)
            state["seal"] = {"sha256": digest, "sealed_at": time.time(),
                             "bytes": len(content), "file": str(path)}
        kept = state["seal"]
        assert kept is not None  # sealed now, or before with the same content
        sealed = dict(kept)
    return {"session": session.id, "sealed": True, **sealed,
            "already_sealed": existing is not None}


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))
