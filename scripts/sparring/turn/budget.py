"""The token budget: what a session may spend on Codex, checked before every turn starts.

A session's budget is set when it is created (workflows/sessions.py); a verb that starts a
turn may set it anew with its own `--budget-tokens`.
What counts is what `usage.total` shows: Codex's input plus output tokens over all turns.
Once that reaches the budget no turn starts (`budget_exhausted`, with both figures), and the
session remembers the refusal so its report says DEGRADED: budget reached. A turn that
starts after the budget was raised clears it again.
"""

from __future__ import annotations

from typing import Any

from sparring.codex.events import USAGE_KEYS
from sparring.errors import SparringError
from sparring.store.sessions import Session

STOP_KEY = "budget_stop"  # in session.json: the latest refusal, until a turn starts again


def total_usage(data: dict[str, Any]) -> dict[str, int]:
    """The session's tokens so far, by kind (input, cached input, output, reasoning...)."""
    total = dict.fromkeys(USAGE_KEYS, 0)
    for turn in data["turns"]:
        for key, value in (turn.get("usage") or {}).items():
            total[key] = total.get(key, 0) + value
    return total


def used(turns: list[dict[str, Any]]) -> int:
    """Input plus output tokens of every turn so far."""
    return sum(used_of(t.get("usage") or {}) for t in turns)


def used_of(usage: dict[str, Any]) -> int:
    """Input plus output tokens of one usage record (a turn's, or a session's total)."""
    return sum(usage.get(key, 0) for key in ("input_tokens", "output_tokens"))


def figures(data: dict[str, Any]) -> dict[str, int] | None:
    """{used, budget} when the session has a budget."""
    budget = data.get("budget_tokens")
    if budget is None:
        return None
    return {"used": used(data["turns"]), "budget": int(budget)}


def reached(data: dict[str, Any]) -> dict[str, int] | None:
    """{used, budget} when the session has used its budget, else None."""
    found = figures(data)
    return found if found is not None and found["used"] >= found["budget"] else None


def require(session: Session, given: int | None = None) -> None:
    """Before a turn starts: take a budget the verb was given, then refuse the turn when the
    session has spent its budget (the refusal is recorded for the report)."""
    with session.update() as data:
        if given is not None:
            data["budget_tokens"] = given
        found = reached(data)
        if found is None:
            data.pop(STOP_KEY, None)
            return
        data[STOP_KEY] = found
    raise exhausted(found)


def exhausted(found: dict[str, int]) -> SparringError:
    return SparringError(
        "budget_exhausted",
        f"this session has used {found['used']:,} tokens of its {found['budget']:,}-token "
        "budget: no further Codex turn starts",
        "tell the user what the debate cost and close it with what you have (the report is "
        "marked DEGRADED: budget reached); to go on, the user can raise the budget: run the "
        "same command again with `--budget-tokens N`, N above the tokens used",
        **found)


def degraded_reason(data: dict[str, Any]) -> str | None:
    """The report's DEGRADED line when the budget stopped the debate."""
    stop = data.get(STOP_KEY)
    if not stop:
        return None
    return (f"budget reached: {stop['used']:,} of {stop['budget']:,} tokens used; "
            "no further Codex round was started")
