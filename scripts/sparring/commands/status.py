"""`sparring status`: one session in detail, or every session of this project."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sparring import states
from sparring.errors import SparringError
from sparring.output import Text
from sparring.store import sessions, workspace
from sparring.store.inputs import project_folder
from sparring.turn import budget, lifecycle
from sparring.turn.summary import question, summarize
from sparring.workflows import registry


def status(here: str, session: str | None, cwd: str, only_open: bool, table: bool | None
           ) -> dict[str, Any] | Text:
    """`sparring status`: one session, or every session of the project (--cwd's), as JSON or
    as text for a person (`table` None: text on a terminal, JSON for a program)."""
    folder = project_folder(cwd)
    if table is None:
        table = sys.stdout.isatty()
    result = shown(session, str(folder), only_open)
    if not table:
        return result
    return Text((as_table(result) if session is None else as_text(result)) + "\n")


def shown(ref: str | None, cwd: str | Path, only_open: bool = False) -> dict[str, Any]:
    if ref is not None:
        session = sessions.resolve(ref, cwd)
        data = session.load()
        if data["turns"]:  # a dead runner's turn is recorded first
            data, _ = lifecycle.settle(session)
        summary = summarize(session, data)
        summary.pop("finalized_at")
        return {**summary, **_where(session, data, cwd)}
    root = workspace.find_root(cwd)
    found = sessions.all_sessions(root)
    if only_open:  # what picking one up needs: which it is, and where it stopped; only a
        # session the runner wrote (one planted in .sparring, or a clone's, is never picked up)
        rows = [{k: v for k, v in r.items() if k not in _NOT_TO_PICK_UP}
                for r in (_row(s, cwd) for s in found if s.witnessed())
                if not r.get("finalized")]
    else:
        rows = [_row(s, cwd) for s in found]
    return {"root": str(root), "sessions": rows}


# What `status --open` leaves to `status` (and to `status SESSION`).
_NOT_TO_PICK_UP = ("thread_id", "tokens", "budget", "finalized")


def _where(session: sessions.Session, data: dict[str, Any], cwd: str | Path) -> dict[str, Any]:
    """An unfinished session's question and the step its record says comes next (the
    workflow's `next_step`), so that a conversation that lost track picks it up there."""
    if data.get("finalized_at"):
        return {}
    flow = registry.WORKFLOWS.get(data["skill"])  # one sparring does not know is only watched
    step = flow.part("next_step") if flow is not None else None
    found: dict[str, Any] = {"question": _question(data)}
    if step is not None:
        try:
            found["next"] = step(session, data, cwd)
        except SparringError as exc:  # its own files gone, say: the others still show
            found["next"] = None
            found["next_error"] = exc.to_dict()
    return found


def _question(data: dict[str, Any]) -> str | None:
    own = data.get("debate") or data.get("discussion") or {}
    return question(data) or own.get("question") or own.get("topic")


def _row(session: sessions.Session, cwd: str | Path) -> dict[str, Any]:
    try:
        data = session.load()
        latest = sessions.latest_turn(data)
        if latest is not None and not states.is_terminal(latest["status"]):
            data, latest = lifecycle.settle(session)  # a dead runner's turn is recorded first
    except SparringError as exc:  # one unreadable session must not hide the others
        return {"session": session.id, "status": "unreadable", "error": exc.to_dict()}
    return {
        "session": session.id,
        "skill": data["skill"],
        "status": states.reported(latest["status"]) if latest else "new",
        "rounds": latest["round"] if latest else 0,
        "created": sessions.local_time(data["created_at"]),
        "thread_id": data.get("thread_id"),
        "tokens": budget.used(data["turns"]),  # cached and reasoning tokens are in these
        "budget": budget.figures(data),
        "finalized": bool(data.get("finalized_at")),
        **_where(session, data, cwd),
    }


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):  # the budget: used of budget
        return f"{value['used']:,}/{value['budget']:,}"
    return str(value)


def as_table(result: dict[str, Any]) -> str:
    """The session list for a person (`status --table`, or `status` on a terminal)."""
    columns = ("session", "skill", "status", "rounds", "created", "tokens", "budget")
    lines = _columns(columns, [{c: _cell(r.get(c)) for c in columns} for r in result["sessions"]])
    if not result["sessions"]:
        lines.append(f"(no sessions under {result['root']}/.sparring)")
    return "\n".join(lines)


def as_text(result: dict[str, Any]) -> str:
    """One session for a person: what it is and where it stands, then a line per turn."""
    facts = [("session", result["session"]), ("skill", result["skill"]),
             ("status", result["status"]), ("rounds", result["rounds"]),
             ("tokens", f"{budget.used_of(result['usage_total']):,}"),
             ("budget", _cell(result.get("budget")) or None),
             ("codex", result["codex_ran"]["line"]), ("claude", result["claude_ran"]["line"]),
             ("question", result.get("question")),
             ("next", result.get("next"))]
    lines = [f"{name + ':':<10}{_cell(value)}" for name, value in facts if value is not None]
    lines += [f"{'warning:':<10}{warning}" for warning in result["codex_ran"]["warnings"]]
    columns = ("turn", "round", "purpose", "status", "duration_s", "tokens", "model")
    turns = [{**{c: _cell(t.get(c)) for c in columns},
              "tokens": f"{budget.used_of(t.get('usage') or {}):,}"} for t in result["turns"]]
    return "\n".join([*lines, "", *_columns(columns, turns)] if turns else lines)


def _columns(columns: tuple[str, ...], rows: list[dict[str, str]]) -> list[str]:
    """A header and one line per row, each column as wide as its widest cell."""
    widths = [max([len(c)] + [len(r[c]) for r in rows]) for c in columns]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(r[c].ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()
              for r in rows]
    return lines
