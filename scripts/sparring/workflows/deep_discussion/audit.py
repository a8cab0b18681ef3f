"""The agreement audit of a deep-discussion, from the point lines of its messages.

Claude's and Codex's messages name their points in lines of their own
(markers.point_lines): `- X-1 refine: the claim. Evidence: src/a.py:12 "the line"`. Claude
opens round N, answering Codex's round N-1, and Codex answers it. The search results Claude
hands in with a round count as that round's recorded activity, beside the commands Codex ran
in it and in the round before. The final brief is the synthesis
(Claude's, and Codex's own): a point still disputed that neither names was dropped.
Codex reads Claude's opening view before its first round, so no point here is independent;
with model NONE, Claude's labelled critic speaks for nobody.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sparring.records import AnySession
from sparring.store.sessions import Session
from sparring.turn import activity
from sparring.workflows import audit
from sparring.workflows.deep_discussion import transcript as discussion

NOT_INDEPENDENT = ("Codex reads Claude's opening view before its first round, so no point "
                   "is reached by both sides on their own in a deep-discussion")


def record(session: Session, data: AnySession, brief: str) -> audit.Record:
    messages = discussion.transcript(session, data)
    notes = []
    rounds = []
    seen = activity.record(session, data)
    # Claude's message of round N answers Codex's round N-1: what Codex ran then counts as
    # seen in round N too, beside what it runs in round N and the search results handed in.
    ran = seen.activity
    done = {n: [*ran.get(n - 1, ()), *ran.get(n, ())] for n in {*ran, *(k + 1 for k in ran)}}
    for m in messages:
        if m.speaker == "critic":
            notes.append(f"round {m.round}: Claude's critic (standing in for Codex) speaks for "
                         "nobody here")
            continue
        rounds.append((m.round, m.speaker, f"round {m.round} ({audit.NAMES[m.speaker]})",
                       m.text))
        if m.search_results:
            done.setdefault(m.round, []).append(m.search_results)
    entries, skipped = audit.prose_entries(rounds)
    return audit.Record(entries, activity=done, reads=seen.reads,
                        independence=NOT_INDEPENDENT, brief=audit.named_points(brief),
                        notes=notes + skipped, revisit=audit.prose_revisit(rounds))


def compute(session: Session, data: AnySession, synthesis: dict[str, Any]) -> dict[str, Any]:
    brief = "\n".join([*(str(v) for v in synthesis.values()),
                       discussion.codex_synthesis(session, data) or ""])
    return audit.compute(record(session, data, brief), Path(data["root"]))
