"""The agreement audit of an arch-debate, from the point lines of its round files.

A round names its points in lines of their own (markers.point_lines):
`- C-2 disagree: the claim. Evidence: src/a.py:12 "the line"`. Claude's opening round is
round 0, then `round-N-codex.md` and `round-N-claude.md` are round N (Claude's answers
Codex's, so what Codex ran in its turn counts as seen in both). A new point takes the writer's
own prefix (Claude C-n, Codex X-n); a line with the other side's prefix answers a point that
side raised. A Codex round the runner did not write from Codex's answer (edited, or
Claude's stand-in) speaks for nobody here. Once agreed, the final brief is what the
`AGREED:` round proposed: a point still disputed that it does not name was dropped.
Codex reads Claude's round 0 before it writes its first, so no point here is independent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.records import AnySession
from sparring.store.sessions import Session
from sparring.turn import activity, summary
from sparring.workflows import audit, markers
from sparring.workflows.arch_debate import folder as debate

NOT_INDEPENDENT = ("Codex reads Claude's opening round (round 0) before it writes its first, "
                   "so no point is reached by both sides on their own in an arch-debate")


def record(session: Session, data: AnySession, state: debate.DebateState) -> audit.Record:
    notes: list[str] = []
    rounds = []
    for item in state.rounds:
        if item.side == audit.CODEX and (not item.authentic
                                         or item.text.startswith(debate.STAND_IN_NOTE)):
            notes.append(f"{item.name} is not Codex's own round (a stand-in, or edited): its "
                         "point lines count for nobody")
            continue
        rounds.append((item.n, item.side, item.name, item.text))
    found, skipped = audit.prose_entries(rounds)
    brief = None
    if state.agreed is not None:
        brief = audit.named_points(markers.after_agreed(state.agreed["proposed"].text))
    seen = activity.record(session, data, summary.debate_round)
    return audit.Record(found, activity=seen.activity, reads=seen.reads,
                        independence=NOT_INDEPENDENT, brief=brief, notes=notes + skipped,
                        revisit=audit.prose_revisit(rounds))


def compute(session: Session, data: AnySession, state: debate.DebateState,
            root: Path) -> dict[str, Any]:
    return audit.compute(record(session, data, state), root)
