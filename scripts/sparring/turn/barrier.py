"""The seal barrier: Claude's own analysis and Codex's first answer, each out of the other's
reach until both exist, in a sealed workflow (think-about, dual-model).

- **Codex cannot read Claude's analysis in round one.** `seal` takes it only once Codex's
  round one has ended (no round-one turn starting or running), and no round-one turn starts
  once it is sealed (`require_open`): while Codex works on round one the analysis lies
  nowhere, and the skills have Claude write it only then.
- **Claude cannot read Codex's answer before its own is sealed.** What each turn's codex
  prints lies out of the project (store/locate.outputs_folder), where Claude Code asks
  before Claude reads; the answer goes into session.json only once sealed
  (turn/turns.keep_withheld); and until then no verb shows it (`withheld`). The first time
  a verb shows it, `reveal` records when: a seal after that would prove nothing.
- **What the mechanism cannot cover is checked** when the seal is taken (turn/seal.py,
  turn/independence.py): a copy of the analysis Codex found elsewhere, or sparring's own
  records read. Its result is kept in the engine record (`independence`).

The rules, here; taking the seal, in turn/seal.py.
"""

from __future__ import annotations

import time
from typing import Any

from sparring.errors import SparringError
from sparring.store.sessions import Session


def require_open(data: dict[str, Any], round_no: int) -> None:
    """No round-one turn starts in a sealed session once Claude's analysis is sealed: that
    Codex could read it."""
    state = data["engine"]
    if round_no == 1 and state["barrier"] and state["seal"]:
        raise SparringError("invalid_transition", "Claude's analysis is sealed: round one is "
                            "not asked again, since Codex could now read that analysis",
                            "report what you have; a new session asks Codex afresh")


def withheld(data: dict[str, Any]) -> str | None:
    """Why Codex's answer stays hidden: Claude has not sealed its own analysis yet (in a
    sealed workflow no answer of Codex's, of any round, is shown before the seal)."""
    state = data["engine"]
    if not state["barrier"] or state["seal"]:
        return None
    return f"hidden until you seal your own analysis: `sparring wait {data['id']} --seal FILE`"


def reveal(session: Session, data: dict[str, Any]) -> None:
    """Codex's answer is being shown: the first time in a sealed session, that is the reveal."""
    state = data["engine"]
    if not state["barrier"] or state["revealed_at"]:
        return
    with session.update() as locked:
        locked["engine"]["revealed_at"] = locked["engine"]["revealed_at"] or time.time()
