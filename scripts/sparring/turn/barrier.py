"""The seal barrier: Claude's own analysis on record before Codex's answer is shown.

In a sealed workflow (think-about, dual-model) `seal` records Claude's round-one analysis;
until then no answer of Codex's is shown (`withheld` says why). The first time a verb
shows Codex's answer it calls `reveal`, which records when: the verdict on round one
needs that moment, and a seal after it would prove nothing.

Light at import: poll's fast path (turn/quick.py) asks `withheld` too.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from sparring.store.session import Session


def seal(ref: str, cwd: str | Path, content: bytes) -> dict[str, Any]:
    import hashlib

    from sparring.errors import SparringError
    from sparring.store import session as sessions
    from sparring.store.session import SEALED_FILE, local_time
    from sparring.store.state import write_private

    session = sessions.resolve(ref, cwd)
    if not content.strip():
        raise SparringError("input_empty", "the analysis to seal is empty",
                            "write your analysis to a file and pass --file FILE")
    digest = hashlib.sha256(content).hexdigest()
    path = session.dir / SEALED_FILE
    with session.update() as data:
        state = data["engine"]
        existing = state["seal"]
        if existing and existing["sha256"] != digest:
            raise SparringError("already_sealed", f"another analysis was sealed at "
                                f"{local_time(existing['sealed_at'])}", "a seal cannot be "
                                "replaced: that is what makes it a seal; continue with the "
                                "debate")
        if existing is None:
            if state["revealed_at"] or any(t["round"] > 1 for t in data["turns"]):
                raise SparringError("invalid_transition", "Codex's answer was already "
                                    "revealed; sealing now would prove nothing", "continue "
                                    "with `sparring verdict`")
            write_private(path, content, witness=True)  # a record: see store/witness.py
            state["seal"] = {"sha256": digest, "sealed_at": time.time(),
                             "bytes": len(content), "file": str(path)}
        kept = state["seal"]
        assert kept is not None  # sealed now, or before with the same content
        sealed = dict(kept)
    return {"session": session.id, "sealed": True, **sealed,
            "already_sealed": existing is not None}


def withheld(data: dict[str, Any]) -> str | None:
    """Why Codex's answer stays hidden: Claude has not sealed its own analysis yet (in a
    sealed workflow no answer of Codex's, of any round, is shown before the seal)."""
    state = data["engine"]
    if not state["barrier"] or state["seal"]:
        return None
    return ("Codex's answer stays hidden until you seal your own analysis: write it to a file, "
            f"then `sparring seal {data['id']} --file FILE`")


def reveal(session: Session, data: dict[str, Any]) -> None:
    """Codex's answer is being shown: the first time in a sealed session, that is the reveal."""
    state = data["engine"]
    if not state["barrier"] or state["revealed_at"]:
        return
    with session.update() as locked:
        locked["engine"]["revealed_at"] = locked["engine"]["revealed_at"] or time.time()
