"""A session's summary: its turns, timings and tokens, and what codex ran with.

`finalize` writes it to summary.json, `status SESSION` prints it, and the report builds on it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from sparring import claude, states
from sparring.codex import rollout
from sparring.store import lastrun
from sparring.store.sessions import Session
from sparring.turn import budget

SUMMARY_FILE = "summary.json"
# The file a turn's answer is delivered to names the debate's round (arch-debate's
# round-N-codex.md), which a stand-in round before it leaves apart from the turn's count.
_ROUND_FILE = re.compile(r"round-(\d+)-codex\.md$")


def summarize(session: Session, data: dict[str, Any]) -> dict[str, Any]:
    rows = [_turn_row(t) for t in data["turns"]]
    latest = data["turns"][-1] if data["turns"] else None
    return {
        "session": session.id,
        "session_dir": session.path,
        "skill": data["skill"],
        "status": states.reported(latest["status"]) if latest else "new",
        "rounds": max((t["round"] for t in data["turns"]), default=0),
        "turns": rows,
        "duration_s": round(sum(r["duration_s"] or 0 for r in rows), 2),
        "usage_total": budget.total_usage(data),
        "budget": budget.figures(data),
        "thread_id": data.get("thread_id"),
        "codex": data.get("codex", {}),
        "applied": _applied(data, latest),
        "codex_ran": codex_ran(data),
        "codex_part": codex_part(data),
        "claude_ran": claude_ran(data),
        "sandbox": sandbox_of(latest),
        "finalized_at": time.time(),
    }


def _turn_row(turn: dict[str, Any]) -> dict[str, Any]:
    started, ended = turn.get("started_at"), turn.get("ended_at")
    return {
        "turn": turn["n"], "round": turn["round"], "purpose": turn["purpose"],
        "status": states.reported(turn["status"]),
        "started_at": started, "ended_at": ended,
        "duration_s": round(ended - started, 2) if started and ended else None,
        "usage": turn.get("usage"),
        "error": (turn.get("error") or {}).get("code"),
        **{key: turn["settings"][key] for key in ("effort", "model", "sandbox")},
        "ran": turn.get("ran"),
    }


def sandbox_of(turn: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sandbox a turn ran in and where it came from (launch.py records it; a turn of an
    older sparring has only the mode)."""
    if turn is None:
        return None
    return turn.get("sandbox") or {"mode": turn["settings"]["sandbox"], "source": "unrecorded",
                                   "allowed": None, "allowed_by": None, "where": None}


def _applied(data: dict[str, Any], latest: dict[str, Any] | None) -> dict[str, Any]:
    """What codex ran the latest turn with: what its rollout recorded (`ran`, at the turn's
    end; a turn of an older sparring: the rollout read now), over what sparring passed (a
    field the rollout leaves out is what was passed)."""
    if latest is None:
        return {"effort": None, "model": None, "sandbox": None, "source": "no codex turn"}
    passed = {key: latest["settings"][key] for key in ("effort", "model", "sandbox")}
    recorded = latest["ran"] if "ran" in latest else rollout.turn_context(
        data.get("thread_id"))
    if recorded:
        return {**passed, **recorded, "source": "codex rollout"}
    return {**passed, "source": "command line"}


def ran_with(turn: dict[str, Any]) -> dict[str, Any]:
    """The model and effort a turn ran with: its rollout's, over what sparring passed;
    `recorded` when codex's rollout said so."""
    ran = turn.get("ran") or {}
    passed = turn["settings"]
    return {"model": ran.get("model") or passed.get("model"),
            "effort": ran.get("effort") or passed.get("effort"), "recorded": bool(ran)}


def codex_ran(data: dict[str, Any]) -> dict[str, Any]:
    """What Codex ran with over the session, as the report says it (`line`: "Codex:
    gpt-5.5, effort high, every round"), and `warnings`: the model or effort changed between
    rounds, or is not what the user's earlier debate ran with."""
    turns = _ran(data)
    if not turns:
        return {"line": "Codex did not run", "warnings": []}
    spans = _spans(turns)
    if len(spans) == 1:
        line = f"Codex: {spans[0][0]}, every round"
    else:
        line = "Codex: " + "; ".join(f"{said} in {_rounds(rounds)}" for said, rounds in spans)
    warnings = [f"Codex's model or effort changed between rounds ({line[7:]})"] \
        if len(spans) > 1 else []

    first = next((t for t in turns if t.get("ran")), None)
    earlier = lastrun.differs(ran_with(first), data.get("codex_before")) if first else None
    return {"line": line, "warnings": warnings + ([earlier] if earlier else [])}


def _ran(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The turns Codex ran: its rollout recorded them, or they started and ended (a turn
    stopped before Codex started, a re-ask the stop overtook, is none of Codex's)."""
    return [t for t in data["turns"] if t.get("ran") or (t.get("ended_at") and
                                                          t.get("started_at"))]


def _spans(turns: list[dict[str, Any]], saying: Callable[[dict[str, Any]], str] | None = None,
           ) -> list[tuple[str, list[int]]]:
    """What Codex ran with ("gpt-5.5, effort high"), or what `saying` says of a turn, turn
    after turn, with the rounds of each run of the same."""
    spans: list[tuple[str, list[int]]] = []
    for turn in turns:
        said = saying(turn) if saying else _said(ran_with(turn))
        if spans and spans[-1][0] == said:
            spans[-1][1].append(turn["round"])
        else:
            spans.append((said, [turn["round"]]))
    return spans


def codex_models(data: dict[str, Any]) -> list[str]:
    """Each model and effort Codex ran with over the session, once, in the order first
    run ("gpt-5.5, effort high"): its rollout's record, over what sparring passed."""
    return list(dict.fromkeys(said for said, _ in _spans(_ran(data))))


CLAUDE_UNRECORDED = "its model is not recorded"


def claude_ran(data: dict[str, Any]) -> dict[str, Any]:
    """The model of the Claude that sent each round, as Claude Code named it when its session
    began (claude.py; `models`, each once in the order first named, None where none was), and
    the `line` the report prints ("Claude: claude-opus-4-5, every round (...)")."""
    spans = _spans(data["turns"],
                   lambda turn: claude.named(turn.get("claude_model")) or CLAUDE_UNRECORDED)
    models = list(dict.fromkeys(claude.named(t.get("claude_model")) for t in data["turns"]))
    if not any(models):
        return {"models": models, "line": f"Claude: {CLAUDE_UNRECORDED} (Claude Code names it "
                "to sparring's SessionStart hook alone, in an interactive session)"}
    said = f"{spans[0][0]}, every round" if len(spans) == 1 else "; ".join(
        f"{model} in {_rounds(rounds)}" for model, rounds in spans)
    return {"models": models,
            "line": f"Claude: {said} (the model Claude Code named as its session began)"}


# The purposes of a turn in which Codex answers its round (a challenge or a synthesis is
# a turn beyond the rounds).
_ANSWERS = ("round", "recovery", "reask", "reconsider")


def debate_round(turn: Mapping[str, Any]) -> int:
    """The round of the debate a turn answers: its answer file's (arch-debate), else its
    own."""
    found = _ROUND_FILE.search(str(turn.get("answer_file") or ""))
    return int(found.group(1)) if found else int(turn["round"])


def codex_part(data: dict[str, Any]) -> dict[str, Any]:
    """Whether Codex took part in every round the other side was to answer (each round a
    turn of Codex's was started for, or Claude stood in for it: arch-debate's stand-in
    rounds, deep-discussion's critic): the rounds, its threads, models and tokens, and the
    `line` the report prints."""
    turns = [t for t in data["turns"] if t["purpose"] in _ANSWERS]
    stood_in = {*(data.get("debate") or {}).get("stand_ins", []),
                *(m["round"] for m in (data.get("discussion") or {}).get("messages", [])
                  if m["speaker"] == "critic")}
    rounds = sorted({debate_round(t) for t in turns} | stood_in)
    took = sorted({debate_round(t) for t in turns if t["status"] == states.COMPLETED}
                  - stood_in)
    threads = list(dict.fromkeys(t["thread_id"] for t in turns if t.get("thread_id")))
    usage = budget.total_usage(data)
    tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
    every = bool(rounds) and took == rounds
    part = {"every_round": every, "rounds": rounds, "answered": took, "threads": threads,
            "models": codex_models(data), "tokens": tokens}
    return {**part, "line": _part_line(part)}


def _part_line(part: dict[str, Any]) -> str:
    rounds, took = part["rounds"], part["answered"]
    if not took:
        said = f"Codex took part in no round{f' (of {len(rounds)})' if rounds else ''}"
    elif part["every_round"]:
        said = f"Codex took part in every round ({len(took)} of {len(rounds)})"
    else:
        missed = [r for r in rounds if r not in took]
        said = (f"Codex did not take part in every round: it answered {_rounds(took)} of "
                f"{len(rounds)}, not {_rounds(missed)}")
    threads = part["threads"]
    where = ("no thread" if not threads else f"thread `{threads[0]}`" if len(threads) == 1
             else f"{len(threads)} threads (" + ", ".join(f"`{t}`" for t in threads) + ")")
    models = "; ".join(part["models"]) or "no model on record"
    return f"{said}: {where}, {models}, {part['tokens']:,} tokens"


def _said(ran: dict[str, Any]) -> str:
    model = ran["model"] or "codex's default model"
    if not ran["recorded"]:
        model += " (not recorded by codex)"
    return f"{model}, effort {ran['effort'] or 'the model default'}"


def _rounds(rounds: list[int]) -> str:
    kept = sorted(set(rounds))
    if len(kept) == 1:
        return f"round {kept[0]}"
    return f"rounds {kept[0]}–{kept[-1]}" if kept == list(range(kept[0], kept[-1] + 1)) \
        else "rounds " + ", ".join(map(str, kept))


def question(data: Mapping[str, Any]) -> str | None:
    """The question a session debates, as its first round's template was given it."""
    for turn in data["turns"]:
        found = (turn.get("template") or {}).get("question")
        if found:
            return str(found)
    found = data.get("question")
    return None if found is None else str(found)
