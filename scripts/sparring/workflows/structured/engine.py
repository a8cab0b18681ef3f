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

The decision follows the record, not only the rounds (`judge`): a consensus that rests on a
concession made without new evidence is `contested`; one that no point was ever disputed
on, or that one side reached by making every concession, is first tested by one challenge
turn (a fresh Codex thread, no transcript, no names), and is `unchallenged` when that turn
is turned off or cannot run.

Everything written here for Codex names no side: the other side is "the other analyst".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from sparring import evidence
from sparring import ledger as ledgers
from sparring.errors import SparringError
from sparring.ledger import CLAUDE, CODEX, NAMES, Decision, Ledger, Point
from sparring.records import Answer, AnySession, DecisionRecord, PointEntry, Verdict
from sparring.store.sessions import Session
from sparring.turn.summary import question
from sparring.workflows import audit as shared
from sparring.workflows.structured import audit

# What Claude's verdicts carry into Codex's next prompt is bounded, so one long note cannot
# push the prompt past what codex accepts; a cut is marked where Codex will see it.
CARRY_LIMIT = 4_000  # a claim, a note, one piece of evidence
MESSAGE_LIMIT = 2_000  # Claude's message for the next round: longer is refused
AGREEMENT = ("consensus", shared.CONTESTED, shared.UNCHALLENGED)  # decisions that end agreed
OTHER = "the other analyst"
_PARAGRAPH = re.compile(r"\n\s*\n")


def carried(text: str, limit: int = CARRY_LIMIT) -> str:
    """`text`, cut to `limit` characters with a visible marker when it is longer."""
    if len(text) <= limit:
        return text
    return (text[:limit] + f" [… truncated by sparring: {len(text) - limit:,} more characters "
            "not carried into this prompt]")


# --- Claude's verdict: the rules beyond its schema ---------------------------------------

def complete(data: AnySession, round_no: int, verdict: Verdict) -> Verdict:
    """The verdict with the claim of each point of the sealed analysis it carries (round
    one), taken from the analysis where the verdict leaves it out."""
    if round_no != 1:
        return verdict
    text, _ = audit.sealed_text(data)
    sealed = audit.sealed_points(text or "")
    points = [{**p, "claim": sealed[p["id"]]} if p["id"] in sealed and not p.get("claim")
              else p for p in verdict["points"]]
    return {**verdict, "points": points}  # type: ignore[typeddict-item]


def require_sealed_answered(data: AnySession, round_no: int, verdict: Verdict) -> None:
    """The verdict on round one disposes of every point of the sealed analysis: linked to a
    point of Codex's (`sealed`), carried as Claude's own, or withdrawn with a reason. One
    left out is refused, naming it, and nothing is recorded."""
    if round_no != 1 or not data["engine"]["barrier"]:
        return
    text, _ = audit.sealed_text(data)
    sealed = audit.sealed_points(text or "")
    disposed = {p.get("sealed") for p in verdict["points"]} | {
        p["id"] for p in verdict["points"]}
    missing = [cid for cid in sealed if cid not in disposed]
    if missing:
        raise SparringError(
            "sealed_point_unanswered", f"your sealed analysis holds {', '.join(missing)}, "
            "which this verdict does not answer", "for each: link it to the point of Codex's "
            'that holds it ("sealed": "C-n"), carry it as your own point (its id, stance '
            'agree), or withdraw it (stance withdraw, the reason in note); then hand the '
            "verdict in again (nothing was recorded)", points=missing)


def verdict_problems(data: AnySession, round_no: int, verdict: Verdict) -> list[str]:
    """Rules of Claude's verdict beyond its schema: every Codex point classified, coherent."""
    answer = ledgers.answers_by_round(data)[round_no]
    earlier = ledgers.records(data, round_no - 1)
    known = ledgers.replay([*earlier, (answer, None)])
    given = {p["id"] for p in verdict["points"]}
    found = ledgers.duplicates(verdict["points"])
    missing = [p["id"] for p in answer["points"] if p["id"] not in given]
    if missing:
        found.append(f"points: Codex's {', '.join(missing)} are not classified")
    for point in verdict["points"]:
        found += _point_problems(known, point)
    after = ledgers.replay([*earlier, (answer, verdict)])
    found += _summary_problems(known, after, verdict)
    found += _message_problems(after, verdict)
    found += _sealed_problems(data, round_no, answer, verdict)
    if round_no == 1:
        found += ledgers.choice_problems(verdict.get("choice"), ledgers.options(data), "choice")
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
        elif not ledgers.holds(point["stance"]):
            found.append(f"{pid}: a point you reached on your own (sealed {cid}) cannot be one "
                         "you reject")
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
    if stance == ledgers.WITHDRAW:
        if owner != CLAUDE:
            return [f"{pid}: withdraw is for your own points; reject Codex's with disagree"]
        if not (point.get("note") or "").strip():
            return [f"{pid}: a withdrawal needs its reason in note"]
        return []
    if owner == CLAUDE and stance == "disagree":
        return [f"{pid}: it is your own point: to give it up, withdraw it (stance withdraw, "
                "the reason in note)"]
    expected = {"genuine_agreement": ("agree",), "genuine_disagreement": ("disagree",),
                "same_direction_different_depth": ("refine", "agree")}.get(cls)
    if expected and stance not in expected:
        return [f"{pid}: class {cls} needs stance {' or '.join(expected)}, not {stance}"]
    if cls == "claude_only" and owner != CLAUDE:
        return [f"{pid}: claude_only is for Claude's own points; this one is Codex's"]
    if cls == "codex_only" and owner != CODEX:
        return [f"{pid}: codex_only is for Codex's points; this one is Claude's"]
    return []


def _summary_problems(known: Ledger, after: Ledger, verdict: Verdict) -> list[str]:
    agreeing = verdict["convergence"]["state"] == "agree"
    found = []
    approved = verdict.get("approve_summary")
    if approved and approved not in known.summaries:
        found.append(f"approve_summary: {approved} is not a proposed summary "
                     f"(known: {', '.join(known.summaries) or 'none'})")
    if approved and verdict.get("summary_objections"):
        found.append("approve_summary: you object to sentences of it; approve it or object")
    if (approved or verdict.get("proposed_summary")) and not agreeing:
        found.append("convergence.state must be agree to propose or approve a summary")
    proposed = verdict.get("proposed_summary")
    if proposed and agreeing:
        found += ledgers.summary_problems(after, proposed, "proposed_summary")
    return found


def _message_problems(after: Ledger, verdict: Verdict) -> list[str]:
    """Claude's message to Codex is about points, by id, and short."""
    message = (verdict.get("message") or "").strip()
    if not message:
        return []
    found = []
    if len(message) > MESSAGE_LIMIT:
        found.append(f"message: {len(message):,} characters; at most {MESSAGE_LIMIT:,}")
    for n, paragraph in enumerate(_PARAGRAPH.split(message), start=1):
        named = ledgers.POINT_ID.findall(paragraph)
        if not named:
            found.append(f"message: paragraph {n} names no point; say which point (its id) "
                         "each request is about")
        elif any(pid not in after.points for pid in named):
            found.append(f"message: paragraph {n} names "
                         f"{', '.join(p for p in named if p not in after.points)}, no point")
    return found


# --- the decision -------------------------------------------------------------------------

class Judgement(NamedTuple):
    known: Ledger
    decision: Decision
    record: DecisionRecord
    audit: dict[str, Any]


def judge(session: Session, data: AnySession, max_rounds: int,
          challenge_off: str | None) -> Judgement:
    """The decision on the latest judged round, the record read: the ledger's, and what the
    audit makes of an agreement (`challenge_off`: what turned the challenge turn off, None
    while one may test a consensus that came cheap)."""
    root = Path(data["root"])
    found = audit.record(session, data)
    checker = shared.checker_of(found, root)
    known = ledgers.ledger_for(
        data, checked=lambda item, side, n: checker.mark(item, side, n).holds)
    result = shared.compute(found, root, checker)
    ran = ledgers.challenge_rounds(data)
    cap = max(max_rounds, max(ran) + 1) if ran else max_rounds  # its points get a round
    base = ledgers.decide(known, cap)
    decision, fallback = _qualified(base, result, bool(ran), challenge_off)
    return Judgement(known, decision, decision_dict(decision, known, result, fallback), result)


def _qualified(base: Decision, result: dict[str, Any], ran: bool,
               off: str | None) -> tuple[Decision, Decision | None]:
    """A consensus as the record carries it; first tested by a challenge turn when it came
    cheap (the decision then, and what it falls back to when the challenge cannot run)."""
    if base.decision != "consensus":
        return base, None
    plain = _plain(base, result, ran, off)
    one_sided = result["moved"]["one_sided"]
    if off is not None or ran or not (result["unchallenged"] or one_sided):
        return plain, None
    why = ("no point was ever disputed" if result["unchallenged"] else
           f"{NAMES[one_sided]} made every concession")
    return Decision(base.round, "continue", [
        f"both sides approve {base.summary.id if base.summary else 'a summary'}, but {why}: "
        "one challenge turn, on a fresh thread, argues the strongest case against it first"],
        kind="challenge", summary=base.summary), plain


def _plain(base: Decision, result: dict[str, Any], ran: bool, off: str | None) -> Decision:
    word, reasons = shared.qualified(result, challenged=ran)
    if word == shared.UNCHALLENGED and off is not None:
        reasons = [*reasons, f"the challenge turn is off ({off})"]
    return Decision(base.round, word or "consensus", [*base.reasons, *reasons],
                    summary=base.summary)


def decision_dict(decision: Decision, known: Ledger, result: dict[str, Any] | None = None,
                  fallback: Decision | None = None) -> DecisionRecord:
    open_points = [ledgers.point_row(known.points[pid], evidence.shown) for pid in sorted(
        known.rounds[-1].unresolved, key=ledgers.order)]
    concessions = [{key: c[key] for key in ("point", "side", "round", "from", "to")}
                   for c in (result or {}).get("concessions", []) if c["flag"]]
    found: DecisionRecord = {
        "round": decision.round,
        "decision": decision.decision,
        "kind": decision.kind,
        "reasons": decision.reasons,
        "open_points": open_points,
        "agreed_points": [ledgers.point_row(p, evidence.shown) for p in known.points.values()
                          if p.is_agreed()],
        "rejected_points": [ledgers.point_row(p, evidence.shown)
                            for p in known.points.values() if p.is_rejected()],
        "summary": ({"id": decision.summary.id, "by": decision.summary.by,
                     "text": decision.summary.text} if decision.summary else None),
        "concessions_without_evidence": concessions,
        "qualified": decision.decision if decision.decision in AGREEMENT[1:] else None,
    }
    if fallback is not None:
        found["fallback"] = {"decision": fallback.decision, "reasons": fallback.reasons}
    return found


def flagged(result: dict[str, Any], side: str, round_no: int) -> list[dict[str, Any]]:
    """The concessions `side` made in round `round_no` without new evidence that holds."""
    return [c for c in result["concessions"]
            if c["side"] == side and c["round"] == round_no and c["flag"]]


# --- the next round's prompt (written for Codex: no side is named) -------------------------

def next_vars(known: Ledger, decision: Decision, verdict: Verdict) -> dict[str, Any]:
    """Variables of the next round's prompt (think-about/round2+), computed from the ledger."""
    points = list(known.points.values())
    agreed = [p for p in points if p.is_agreed()]
    rejected = [p for p in points if p.is_rejected()]
    disputed = [p for p in points if p.is_disputed()]
    new = [p for p in points if p.owner == CLAUDE and p.is_pending()]
    return {
        "ROUND": decision.round + 1,
        "AGREED_POINTS": _bullets(agreed, known) or "(none yet)",
        "REJECTED_POINTS": _bullets(rejected, known) or "(none)",
        "DISAGREED_POINTS": _bullets(disputed, known) or "(none)",
        "NEW_PERSPECTIVES": _bullets(new, known) or "(none)",
        "MESSAGE": verdict.get("message", ""),
        "CONTINUE_OR_CONSENSUS_OR_STALEMATE": _status_line(known, decision, verdict),
    }


def open_bullets(known: Ledger) -> str:
    """Every open point, as the next prompt shows it (dual-model's deeper dive)."""
    return _bullets([p for p in known.points.values() if p.is_open()], known)


def _bullets(points: list[Point], known: Ledger | None = None) -> str:
    reviewed = {r.n for r in known.rounds if r.challenge} if known else set()
    return "\n".join(_bullet(p, p.raised_in in reviewed)
                     for p in sorted(points, key=lambda p: ledgers.order(p.id)))


def _bullet(point: Point, reviewed: bool = False) -> str:
    raised = ("raised by an outside review of the conclusion" if reviewed else
              "yours" if point.owner == CODEX else f"raised by {OTHER}")
    parts = [f"- **{point.id}** ({raised}): {carried(point.claim)}"]
    for side, who in ((CODEX, "you"), (CLAUDE, OTHER)):
        stance = point.latest(side)
        if stance:
            cited = "; ".join(carried(evidence.shown(item)) for item in stance.evidence)
            parts.append(f"  - {who}: {stance.stance}" + (f" — evidence: {cited}"
                                                          if cited else ""))
    if point.note:
        parts.append(f"  - {OTHER}'s note: {carried(point.note)}")
    return "\n".join(parts)


def _status_line(known: Ledger, decision: Decision, verdict: Verdict) -> str:
    objections = verdict.get("summary_objections") or []
    said = "".join(f"\n- sentence {o['sentence']}: {carried(o['reason'])}" for o in objections)
    objected = f"\n\n{OTHER.capitalize()} objected to your summary:{said}" if said else ""
    if decision.kind == "confirmation":
        pending = known.rounds[-1].approvals[CLAUDE] - known.rounds[-1].approvals[CODEX]
        if pending:
            summary = known.summaries[max(pending, key=lambda s: int(s[2:]))]
            return confirmation(summary) + objected
    return f"CONTINUE. {_neutral(' '.join(decision.reasons))}.{objected}"


def confirmation(summary: ledgers.Summary) -> str:
    """The confirmation step: the summary sentence by sentence, with the points each rests
    on, to approve whole or object to by sentence."""
    lines = "\n".join(f"{s['sentence']}. [{', '.join(s['points'])}] {s['text']}"
                      for s in ledgers.numbered(summary.text))
    return (f"CONSENSUS CHECK. {OTHER.capitalize()} holds that nothing material remains in "
            f"dispute and approves this final summary, {summary.id}. Its sentences, each with "
            f"the points it rests on:\n\n{lines}\n\nIf you would sign every sentence exactly "
            f"as written, set convergence.state to agree and approve_summary to "
            f"\"{summary.id}\". If not, leave approve_summary null and, in "
            "summary_objections, name each sentence you would not sign (its number) and why; "
            "the debate continues.")


def _neutral(text: str) -> str:
    """A reason of the ledger's, as Codex reads it: the sides are you and the other analyst."""
    return text.replace("Codex", "you").replace("Claude", OTHER)


def challenge_vars(data: AnySession, known: Ledger, decision: Decision) -> dict[str, Any]:
    """What the challenge turn is given: the question, the approved summary and the points
    it rests on (their claims and evidence, no stances, no transcript, no names)."""
    summary = decision.summary
    text = summary.text if summary else ""
    named = set(ledgers.POINT_ID.findall(text))
    resting = [p for p in known.points.values() if p.id in named] or [
        p for p in known.points.values() if p.is_agreed()]
    bullets = []
    for point in sorted(resting, key=lambda p: ledgers.order(p.id)):
        cited = {evidence.shown(item) for side in (CODEX, CLAUDE)
                 for s in point.history[side] for item in s.evidence}
        bullets.append(f"- **{point.id}** ({'rejected' if point.is_rejected() else 'agreed'}):"
                       f" {carried(point.claim)}" + (f" — evidence: "
                                                     f"{'; '.join(sorted(cited))}"
                                                     if cited else ""))
    return {"QUESTION": question(data) or "(not recorded)", "SUMMARY": text,
            "POINTS": "\n".join(bullets) or "(none named)",
            "NEXT_ID": known.next_id(CODEX)}
