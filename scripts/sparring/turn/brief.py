"""The brief poll object: what Claude needs round after round, printed by `poll`, `wait`,
`start`, `resume` and `stop`. `--full` prints the whole object (view.py)."""

from __future__ import annotations

from typing import Any

BRIEF_ACTIVITIES = 5


def brief(full: dict[str, Any], review: bool = True) -> dict[str, Any]:
    """The poll object as Claude needs it round after round: the status and what to act on,
    the answer, the guard's verdict, the tokens (against the budget, when there is one).
    `--full` prints the rest (also on disk: session.json and the turn's folder)."""
    found = {key: full[key] for key in ("session", "status")}
    if full["error"]:  # a failed turn: what went wrong and what to do, before anything else
        found.update(error=full["error"], recoverable=full["recoverable"])
    found.update((key, full[key]) for key in ("round", "turn", "purpose", "elapsed_s"))
    # The guard's verdict and the tokens before Codex's answer: an output cut short (a long
    # answer) still says them.
    guard = full["guard"]
    withheld = review and full["review_withheld"] and full["status"] == "completed"
    if guard is not None and not (withheld and guard.get("clean")):
        found["guard"] = {"clean": True} if guard.get("clean") else guard
    # Withheld only matters for an answer there is: a failed turn has none to reveal. Until
    # the seal, Claude acts only on the round having ended (and on files changed during it);
    # a clean guard and the tokens come with the answer (`wait --seal`).
    if full["malformed_lines"]:
        found["malformed_lines"] = full["malformed_lines"]
    if withheld:
        found.update(review=None, review_withheld=full["review_withheld"])
        return found
    found["usage"] = {"round": tokens(full["usage"]["round"])}
    if full["usage"]["total"] != full["usage"]["round"]:  # the first turn's are the same
        found["usage"]["total"] = tokens(full["usage"]["total"])
    if full["usage"]["budget"] is not None:
        found["usage"]["budget"] = full["usage"]["budget"]
    if full["status"] == "running":
        found["last_event_s"] = full["last_event_s"]
        found["activities"] = full["activities"][-BRIEF_ACTIVITIES:]
    if review:
        found["review"] = _one_form(full["review"])
    return found


def _one_form(review: dict[str, Any] | None) -> dict[str, Any] | None:
    """Codex's answer once: parsed when it is structured (its text is that same JSON), with
    the id of the summary it proposes, which a verdict approves it by."""
    if review is None:
        return None
    if review.get("cut"):
        return {"text": review["text"], "cut": review["cut"]}
    if review.get("data") is None:
        return {"text": review["text"]}
    if review.get("summary_id"):
        return {"data": review["data"], "summary_id": review["summary_id"]}
    return {"data": review["data"]}


def tokens(usage: dict[str, Any] | None) -> dict[str, int] | None:
    """Input and output tokens: what a round cost (cached and reasoning are in --full)."""
    if usage is None:
        return None
    return {"input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0)}


# Where a workflow stands (arch-debate's `debate`, deep-discussion's `discussion`), as a round
# prints it: what Claude acts on. `--full` (and `debate status`, `discuss status`) print all;
# a stuck debate's positions side by side are DECISION-NEEDED.md's, which Claude shows.
LEFT_TO_FULL = ("dir", "files", "max_rounds", "stuck", "label", "positions")


def lean_status(status: dict[str, Any]) -> dict[str, Any]:
    """The workflow's status without what is empty (no rule break, no search request, no
    proposal yet...) and without what Claude does not act on round after round."""
    return {key: lean_status(value) if isinstance(value, dict) else value
            for key, value in status.items()
            if key not in LEFT_TO_FULL and value is not None and value != [] and value != ""}

