"""The decision record: what was decided, what is still disputed, how the agreement was
reached (the workflow's agreement audit, audit.py), and how honest the run was (DEGRADED
when a participant failed, timed out, was stood in for, or the guard found changes).

`build` gathers the facts from the session into one dict (saved as JSON
beside the markdown); the workflow's `report` template renders it. `write` writes every
report and decision file sparring makes, whichever workflow's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from sparring import evidence, paths, states
from sparring import ledger as ledgers
from sparring.errors import SparringError
from sparring.records import AnySession, DecisionRecord, EngineRecord, untyped
from sparring.store import workspace
from sparring.store.sessions import Session, local_time
from sparring.turn import budget
from sparring.turn.summary import CLAUDE_UNRECORDED, codex_models, question, summarize
from sparring.workflows import adr, audit

# Turn statuses that mean a participant did not give its answer.
_BAD = {states.FAILED: "failed", states.TIMEOUT: "timed out", states.STALLED: "stalled",
        states.STOPPED: "was stopped"}


def build(session: Session, data: AnySession, synthesis: dict[str, Any] | None,
          agreement_audit: dict[str, Any]) -> dict[str, Any]:
    """The report's facts; `agreement_audit` is the workflow's (audit.compute, from the
    record its package reads)."""
    known = ledgers.ledger_for(data)
    state = data["engine"]
    decision = _latest_decision(data)
    summary = summarize(session, untyped(data))
    outcome, reasons = _outcome(data, decision)
    return {
        "title": (question(data) or "").strip() or f"{data['skill']} session {session.id}",
        "constraints": constraints(data),
        "skill": data["skill"],
        "session": session.id,
        "generated_at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "date": time.strftime("%Y-%m-%d"),
        "decision_makers": [f"Claude ({model or CLAUDE_UNRECORDED})"
                            for model in summary["claude_ran"]["models"]]
        or [f"Claude ({CLAUDE_UNRECORDED})"],
        "consulted": [f"Codex ({said})" for said in codex_models(untyped(data))]
        if summary["codex_part"]["answered"] else [],
        "outcome": outcome,
        "outcome_reasons": reasons,
        "decision": decision,
        "degraded": degraded_reasons(data),
        "consensus_points": [ledgers.point_row(p, evidence.shown)
                             for p in known.points.values() if p.is_agreed()],
        "rejected_points": [p for p in agreement_audit.get("points", [])
                            if p["outcome"] in ("rejected", "withdrawn")],
        "disagreements": [ledgers.point_row(p, evidence.shown)
                          for p in known.points.values() if p.is_open()],
        "codex_position": _last_position(data, ledgers.CODEX),
        "claude_position": _last_position(data, ledgers.CLAUDE),
        "summary": decision.get("summary") if decision else None,
        "synthesis": synthesis,
        "confidence": confidence(synthesis, agreement_audit, outcome),
        "choices": None,  # structured debates: each side's blind first choice
        "challenge": None,  # structured debates: the challenge turn, when one answered
        "sources": sources(agreement_audit),
        "agreement_audit": agreement_audit,
        "rounds": _rounds(data, summary),
        "usage_total": summary["usage_total"],
        "budget": summary["budget"],
        "duration_s": summary["duration_s"],
        "codex": {"path": None, "version": None, **summary["codex"]},
        "applied": summary["applied"],
        "codex_ran": summary["codex_ran"],
        "codex_part": summary["codex_part"],
        "claude_ran": summary["claude_ran"],
        "revisit_when": agreement_audit.get("revisit_when", []),
        "sandbox": summary["sandbox"],
        "seal": _seal(state),
        "guard": _guard_findings(data),
        "rejudged": _rejudged(state),
    }


def prose_outcome(model: dict[str, Any], agreed: str | None, otherwise: str,
                  why: str = "") -> None:
    """A prose debate's outcome (arch-debate, deep-discussion), set in its report's model:
    `agreed` (its word for it) as the record carries it: `contested` or `unchallenged` when
    the audit says so (audit.qualified: no challenge turn runs there); else `otherwise`."""
    if agreed is None:
        model["outcome"], model["outcome_reasons"] = otherwise, [why] if why else []
        return
    word, reasons = audit.qualified(model["agreement_audit"], challenged=None)
    model["outcome"], model["outcome_reasons"] = word or agreed, reasons


def constraints(data: AnySession) -> str | None:
    """What the first round set as fixed, and what Claude assumed instead of asking (an
    unattended run records its assumptions there): the report shows what was taken for
    granted."""
    for turn in data["turns"]:
        found = (turn.get("template") or {}).get("constraints")
        if found:
            return str(found).strip()
    return None


def degraded_reasons(data: AnySession) -> list[str]:
    found = []
    for turn in data["turns"]:
        label = f"Codex, round {turn['round']} ({turn['purpose']})"
        if turn["status"] in _BAD:
            code = (turn.get("error") or {}).get("code", "")
            found.append(f"{label} {_BAD[turn['status']]}" + (f" [{code}]" if code else ""))
        guard = turn.get("guard") or {}
        if guard.get("violation"):
            found.append(f"{label}: files changed during the turn: "
                         + ", ".join(c["path"] for c in guard["changed"][:5]))
        elif guard and guard.get("checked") is False:
            found.append(f"{label}: the file guard could not check the tree")
    found += [f"round {r}: {why}" if r else why for r, why in data.get("degraded_notes", [])]
    stopped = budget.degraded_reason(untyped(data))
    return [*found, stopped] if stopped else found


def _latest_decision(data: AnySession) -> DecisionRecord | None:
    decisions = data["engine"]["decisions"]
    if not decisions:
        return None
    return decisions[max(decisions, key=int)]


def _outcome(data: AnySession, decision: DecisionRecord | None) -> tuple[str, list[str]]:
    """The outcome and why, as the record has it: a consensus a challenge turn was to test
    first, and that turn never answered, is what it is without one (`fallback`)."""
    last = data["turns"][-1] if data["turns"] else None
    fallback = decision.get("fallback") if decision is not None else None
    if fallback and decision is not None and last is not None and (
            last["round"] <= decision["round"] or last["status"] in _BAD):
        why = ("the challenge turn did not start" if last["round"] <= decision["round"] else
               f"the challenge turn {_BAD[last['status']]}")
        return str(fallback["decision"]), [*fallback["reasons"], why]
    if last is not None and last["status"] in _BAD:
        return f"incomplete: Codex's last round {_BAD[last['status']]}", []
    if decision is None:
        return "incomplete: no round was judged", []
    if decision["decision"] == "continue" and decision["round"] < (last or {}).get("round", 0):
        return "incomplete: the last round was not judged", []
    return str(decision["decision"]), list(decision["reasons"])


# What caps a synthesis's confidence: the record, not how sure Claude feels.
_CAPPED = "medium"


def confidence(synthesis: dict[str, Any] | None, agreement_audit: dict[str, Any],
               outcome: str) -> dict[str, Any] | None:
    """Claude's confidence, capped by the record: never `high` with a concession made
    without new evidence, a point still open, or a consensus nobody challenged."""
    if not synthesis:
        return None
    given = synthesis["confidence"]
    counts = agreement_audit.get("counts", {})
    why = [*(["a concession was made without new evidence"]
             if counts.get("without_new_evidence") else []),
           *([f"{counts['open']} point{'s' if counts['open'] != 1 else ''} still open"]
             if counts.get("open") else []),
           *(["the consensus was never challenged"] if outcome == "unchallenged" else []),
           *(["the consensus is contested"] if outcome == "contested" else [])]
    if given["level"] != "high" or not why:
        return {"level": given["level"], "reason": given["reason"], "claimed": None,
                "capped_because": []}
    return {"level": _CAPPED, "reason": given["reason"], "claimed": "high",
            "capped_because": why}


def _last_position(data: AnySession, side: str) -> str | None:
    if side == ledgers.CODEX:
        answers = ledgers.answers_by_round(data)
        return answers[max(answers)].get("position") if answers else None
    verdicts = data["engine"]["verdicts"]
    found = [verdicts[k].get("position") for k in sorted(verdicts, key=int)]
    return next((p for p in reversed(found) if p), None)


def sources(agreement_audit: dict[str, Any]) -> list[dict[str, Any]]:
    """Every citation on record, once, with the mark the runner gave it (evidence.py) and
    who cited it; the last mark each side's citation got counts."""
    found: dict[str, dict[str, Any]] = {}
    for point in agreement_audit.get("points", []):
        for stance in point["stances"]:
            for item in stance["evidence"]:
                row = found.setdefault(item["cited"], {"source": item["cited"], "marks": {}})
                row["marks"][stance["side"]] = item["mark"]
    return [{**row, "cited_by": sorted(row["marks"])} for _, row in sorted(found.items())]


def _rounds(data: AnySession, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The session summary's turn rows, with tokens in and out and each round's decision."""
    decisions = data["engine"]["decisions"]
    rows = []
    for row in summary["turns"]:
        usage = row["usage"] or {}
        decided = decisions.get(str(row["round"]))
        rows.append({
            **{key: row[key] for key in ("round", "turn", "purpose", "status", "error",
                                         "effort", "sandbox")},
            "duration_s": round(row["duration_s"], 1) if row["duration_s"] is not None else None,
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "decision": decided["decision"] if decided else None,
        })
    return rows


def _seal(state: EngineRecord) -> dict[str, Any] | None:
    seal = state.get("seal")
    if not seal:
        return None
    revealed = state.get("revealed_at")
    return {"sealed_at": local_time(seal["sealed_at"]), "sha256": seal["sha256"],
            "revealed_at": local_time(revealed) if revealed else None,
            "before_reveal": revealed is None or seal["sealed_at"] <= revealed}


def _rejudged(state: EngineRecord) -> list[dict[str, Any]]:
    """Rounds whose verdict Claude replaced (`verdict --rejudge`): both versions, and the
    decision each gave. A decision never changes without the record saying so."""
    return [{"round": r["round"], "at": local_time(r["at"]),
             "before": r["before"]["decision"]["decision"],
             "after": r["after"]["decision"]["decision"],
             "reason_before": r["before"]["verdict"]["convergence"]["reason"],
             "reason_after": r["after"]["verdict"]["convergence"]["reason"],
             "verdicts": {"before": r["before"]["verdict"], "after": r["after"]["verdict"]}}
            for r in state.get("rejudged") or []]


def _guard_findings(data: AnySession) -> list[dict[str, Any]]:
    return [{"round": t["round"], "turn": t["n"], "changed": guard["changed"],
             "accepted": bool(guard.get("accepted")),
             "reverted": [path for undo in guard.get("reverted", [])
                          for path in undo["reverted"]]}
            for t in data["turns"] if (guard := t.get("guard") or {}).get("changed")]


def write(path: Path, text: str, model: dict[str, Any] | None = None, *, root: Path,
          ours: set[str] | frozenset[str] = frozenset()) -> Path | None:
    """Write a report or decision file inside the project `root` (paths.write: no link on the
    way, never into git's or the agents' folders): atomically (readers see the old file or
    the new, never half), private to the user (0600) like every file sparring writes, its
    folder made when missing, and over an existing file only when it is one of `ours`; with
    `model`, the facts as JSON beside it (`.json`, indented, ending in a newline). Returns
    the JSON's path, or None without `model`."""
    mine = str(path) in ours
    paths.write(path, text, root, "the report", replace=mine)
    if model is None:
        return None
    beside = path.with_suffix(".json")
    paths.write(beside, _model_text(model), root, "the report's JSON", replace=mine)
    return beside


def _model_text(model: dict[str, Any]) -> str:
    return json.dumps(model, ensure_ascii=False, indent=2) + "\n"


def remember(session: Session, path: Path, text: str, model: dict[str, Any] | None = None
             ) -> None:
    """Record `path` as this session's report: writing it again later replaces it, where
    another session's file would be kept (`destination`). The digests of what `write` wrote
    (`text`, and `model` beside it) are kept too: a revert spares a file the runner wrote
    only while it still holds what the runner wrote there."""
    digests = {str(path): _sha256(text)}
    if model is not None:
        digests[str(path.with_suffix(".json"))] = _sha256(_model_text(model))
    with session.edit() as locked:
        reports = locked.get("reports", [])
        if str(path) not in reports:
            locked["reports"] = [*reports, str(path)]
        locked["report_sha256"] = {**locked.get("report_sha256", {}), **digests}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_path(data: AnySession, pattern: str, extra: dict[str, str] | None = None) -> Path:
    """Where the report goes: `pattern` (the workflow's `report_path` setting) with its
    placeholders filled, inside the project (a pattern that leads out of it is refused, not
    followed)."""
    root = Path(data["root"])
    now = time.time()
    values = {"date": time.strftime("%Y-%m-%d", time.localtime(now)), "epoch": str(int(now)),
              "slug": slug(question(data) or data["id"]), "skill": data["skill"],
              "session": data["id"], "branch": workspace.branch(root), **(extra or {})}
    return paths.place(root / str(pattern).format(**values), root,
                       f"{data['skill']}.report_path in sparring.yaml",
                       "set report_path in sparring.yaml to a path inside the project, "
                       "relative to its root").path


def destination(data: AnySession, out: Path | None, pattern: str | None,
                extra: dict[str, str] | None = None) -> Path:
    """Where a record goes, inside the project: --out, else `pattern` (default_path; needed
    only without --out); another session's record (or any other file) is never replaced: an
    explicit --out that exists is refused, a default path gets -2, -3, ..."""
    ours = set(data.get("reports", []))
    if out is not None:
        path = paths.place(out, data["root"], "--out").path
        if os.path.lexists(path) and str(path) not in ours:
            raise SparringError("report_exists", f"{path} exists and is not this session's "
                                "report", "choose another --out, or move the file away")
        return path
    assert pattern is not None, "a record without --out needs the workflow's report_path"
    return unique_path(_numbered(data, default_path(data, pattern, extra), ours), ours)


def _numbered(data: AnySession, path: Path, ours: set[str]) -> Path:
    """`path`, or the next adr-tools number in its folder when that folder holds numbered
    records (adr.py); this session's own numbered report there, while it is there, keeps
    its number."""
    for mine in map(Path, sorted(ours)):
        if (mine.parent == path.parent and adr.number_of(mine.name) is not None
                and os.path.lexists(mine)):
            return mine
    name = adr.numbered_name(path.parent, slug(question(data) or data["id"]))
    return path if name is None else path.with_name(name)


# How often a report whose default name another writer took meanwhile tries the next one.
_TRIES = 20


def publish(data: AnySession, out: Path | None, pattern: str | None, text: str,
            model: dict[str, Any], extra: dict[str, str] | None = None
            ) -> tuple[Path, Path | None]:
    """Write a session's report where `destination` says, and its JSON beside it: when
    another writer takes that name between the choice and the write (two reports racing
    for the next number), the write fails, never replacing theirs, and the next free name
    is chosen again. Returns the report's path and its JSON's."""
    ours = set(data.get("reports", []))
    for _ in range(_TRIES):
        path = destination(data, out, pattern, extra)
        try:
            return path, write(path, text, model, root=Path(data["root"]), ours=ours)
        except SparringError as exc:
            taken = (exc.code == "path_protected" and os.path.lexists(path)
                     and str(path) not in ours)
            if out is not None or not taken:
                raise
    raise SparringError("path_protected", f"{path}: another writer took each name tried",
                        "write the report again, or choose a path with --out")


def unique_path(path: Path, ours: set[str]) -> Path:
    """`path`, or `path` with -2, -3, ... when a record that is not ours is there already
    (a link there counts as taken: it is never followed)."""
    candidate, n = path, 1
    while os.path.lexists(candidate) and str(candidate) not in ours:
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def slug(text: str, limit: int = 48) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:limit].rstrip("-") or "untitled"

