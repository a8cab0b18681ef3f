"""The structured-round engine of think-about and dual-model: Codex answers each round in
the `codex-answer` schema, Claude judges it with a verdict, and the ledger decides.

Per session it keeps Claude's verdicts and the decisions, and computes the next round's
variables. Every session carries its `engine` record (the workflow's answer schema and seal
barrier, from workflows/registry.py; the seal itself is turn/barrier.py's); arch-debate and
deep-discussion run free-text rounds (arch_debate/folder.py, deep_discussion/transcript.py)
and use none of the rest.

Codex's answers are the validated `answer` of each round's last completed turn; Claude's
verdicts sit in the session's `engine.verdicts`. The ledger is replayed from both whenever
it is needed (ledger.py, which also holds the rules of Codex's answer that its schema cannot
express: the runner checks them when a turn ends).
"""

from __future__ import annotations

from typing import Any

from sparring import ledger as ledgers
from sparring.ledger import CLAUDE, CODEX, NAMES, Decision, Ledger, Point
from sparring.records import Answer, AnySession, DecisionRecord, PointEntry, Verdict
from sparring.workflows.structured import audit

# What Claude's verdicts carry into Codex's next prompt is bounded, so one long note cannot
# push the prompt past what codex accepts; a cut is marked where Codex will see it.
CARRY_LIMIT = 4_000  # a claim, a note, one piece of evidence
MESSAGE_LIMIT = 20_000  # Claude's message for the next round


def carried(text: str, limit: int = CARRY_LIMIT) -> str:
    """`text`, cut to `limit` characters with a visible marker when it is longer."""
    if len(text) <= limit:
        return text
    return (text[:limit] + f" [… truncated by sparring: {len(text) - limit:,} more characters "
            "not carried into this prompt]")


def verdict_problems(data: AnySession, round_no: int, verdict: Verdict) -> list[str]:
    """Rules of Claude's verdict beyond its schema: every Codex point classified, coherent."""
    answer = ledgers.answers_by_round(data)[round_no]
    known = ledgers.replay([*ledgers.records(data, round_no - 1), (answer, None)])
    given = {p["id"] for p in verdict["points"]}
    found = ledgers.duplicates(verdict["points"])
    missing = [p["id"] for p in answer["points"] if p["id"] not in given]
    if missing:
        found.append(f"points: Codex's {', '.join(missing)} are not classified")
    for point in verdict["points"]:
        found += _point_problems(known, point)
    found += _summary_problems(known, verdict)
    found += _sealed_problems(data, round_no, answer, verdict)
    return found


def _sealed_problems(data: AnySession, round_no: int, answer: Answer,
                     verdict: Verdict) -> list[str]:
    """A link to the sealed analysis (`sealed`: its C-n) names a point Codex raised in its
    first answer that Claude's own sealed analysis already held, and holds it still."""
    linked = [p for p in verdict["points"] if p.get("sealed")]
    if not linked:
        return []
    if round_no != 1:
        return [f"{p['id']}: sealed links a point to your sealed analysis only in the verdict "
                "on round one" for p in linked]
    text, _ = audit.sealed_text(data)
    sealed = audit.sealed_points(text or "")
    raised = {p["id"] for p in answer["points"] if p["id"].startswith("X-")}
    own = {p["id"] for p in verdict["points"]}
    found, seen = [], set()
    for point in linked:
        pid, cid = point["id"], point["sealed"]
        if pid not in raised:
            found.append(f"{pid}: sealed is for a point Codex raised in this answer")
        elif cid not in sealed:
            found.append(f"{pid}: your sealed analysis has no {cid} (it has "
                         f"{', '.join(sealed) or 'no C-n point'})")
        elif point["stance"] == "disagree":
            found.append(f"{pid}: a point you reached on your own (sealed {cid}) cannot be one "
                         "you disagree with")
        elif cid in seen or cid in own:
            found.append(f"{pid}: {cid} is linked twice, or is also one of your points here")
        seen.add(cid)
    return found


def _point_problems(known: Ledger, point: PointEntry) -> list[str]:
    pid, cls, stance = point["id"], point["class"], point["stance"]
    existing = known.points.get(pid)
    if existing is None and pid.startswith("X-"):
        return [f"{pid}: Codex has no such point"]
    if existing is None and not point.get("claim"):
        return [f"{pid}: a new point needs its claim"]
    owner = existing.owner if existing else CLAUDE
    expected = {"genuine_agreement": ("agree",), "genuine_disagreement": ("disagree",),
                "same_direction_different_depth": ("refine", "agree")}.get(cls)
    if expected and stance not in expected:
        return [f"{pid}: class {cls} needs stance {' or '.join(expected)}, not {stance}"]
    if cls == "claude_only" and owner != CLAUDE:
        return [f"{pid}: claude_only is for Claude's own points; this one is Codex's"]
    if cls == "codex_only" and owner != CODEX:
        return [f"{pid}: codex_only is for Codex's points; this one is Claude's"]
    return []


def _summary_problems(known: Ledger, verdict: Verdict) -> list[str]:
    agreeing = verdict["convergence"]["state"] == "agree"
    found = []
    approved = verdict.get("approve_summary")
    if approved and approved not in known.summaries:
        found.append(f"approve_summary: {approved} is not a proposed summary "
                     f"(known: {', '.join(known.summaries) or 'none'})")
    if (approved or verdict.get("proposed_summary")) and not agreeing:
        found.append("convergence.state must be agree to propose or approve a summary")
    return found


def decision_dict(decision: Decision, known: Ledger) -> DecisionRecord:
    open_points = [ledgers.point_row(known.points[pid]) for pid in sorted(
        known.rounds[-1].unresolved, key=_order)]
    return {
        "round": decision.round,
        "decision": decision.decision,
        "kind": decision.kind,
        "reasons": decision.reasons,
        "open_points": open_points,
        "agreed_points": [ledgers.point_row(p) for p in known.points.values() if p.is_agreed()],
        "summary": ({"id": decision.summary.id, "by": decision.summary.by,
                     "text": decision.summary.text} if decision.summary else None),
        "concessions_without_evidence": known.concessions,
    }


def _order(pid: str) -> tuple[str, int]:
    return pid[0], int(pid[2:])


def next_vars(known: Ledger, decision: Decision, verdict: Verdict) -> dict[str, Any]:
    """Variables of the next round's prompt (think-about/round2+), computed from the ledger."""
    points = list(known.points.values())
    agreed = [p for p in points if p.is_agreed() and not p.is_pending()]
    disputed = [p for p in points if p.is_disputed()]
    new = [p for p in points if p.owner == CLAUDE and p.is_pending()]
    return {
        "ROUND": decision.round + 1,
        "AGREED_POINTS": _bullets(agreed) or "(none yet)",
        "DISAGREED_POINTS": _bullets(disputed) or "(none)",
        "NEW_PERSPECTIVES": _bullets(new) or "(none)",
        "CLAUDE_MESSAGE": carried(verdict.get("message", ""), MESSAGE_LIMIT),
        "CONTINUE_OR_CONSENSUS_OR_STALEMATE": _status_line(known, decision),
    }


def _bullets(points: list[Point]) -> str:
    return "\n".join(_bullet(p) for p in points)


def _bullet(point: Point) -> str:
    parts = [f"- **{point.id}** (raised by {NAMES[point.owner]}): {carried(point.claim)}"]
    for side in (CLAUDE, CODEX):
        stance = point.latest(side)
        if stance:
            cited = "; ".join(carried(item) for item in stance.evidence)
            evidence = f" — evidence: {cited}" if stance.evidence else ""
            parts.append(f"  - {NAMES[side]}: {stance.stance}{evidence}")
    if point.note:
        parts.append(f"  - Claude's note: {carried(point.note)}")
    return "\n".join(parts)


def _status_line(known: Ledger, decision: Decision) -> str:
    if decision.kind == "confirmation":
        pending = known.rounds[-1].approvals[CLAUDE] - known.rounds[-1].approvals[CODEX]
        if pending:
            summary = known.summaries[max(pending, key=lambda s: int(s[2:]))]
            return (f"CONSENSUS CHECK. Claude proposes that nothing material remains in dispute "
                    f"and approves this final summary, {summary.id}:\n\n"
                    + "\n".join(f"> {line}" for line in summary.text.splitlines())
                    + f"\n\nIf you would sign it exactly as written, set convergence.state to "
                    f"agree and approve_summary to \"{summary.id}\". If not, say what is wrong: "
                    "the debate continues.")
    return f"CONTINUE. {' '.join(decision.reasons)}."
