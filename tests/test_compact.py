"""The compact output keeps what Claude reads: every key the skills and their references name
that the runner prints with `--full` is printed without it too.

The four workflows are driven through the situations a debate meets (a running turn, an
answer withheld then revealed, a verdict that goes on, a guard finding, a failed turn, the
budget spent, a debate's and a discussion's status, the close), once as the skills call the
runner and once with `--full` where a verb has it. A key named in backquotes in a SKILL.md
or a reference (`review.data`, `next.command`, `guard.changed`, ...) that some output of the
runner carries must be in the compact output of some call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from support.debates import answer, cpt, pt

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted([*ROOT.glob("skills/*/SKILL.md"), *ROOT.glob("references/**/*.md")])
KEY = re.compile(r"`([a-z_]+(?:\.[a-z_]+)*)`")
# Named in the documents as something else than a key Claude reads from the runner's output.
NOT_READ = {
    "timeout": "a turn status (and a setting only --full prints)",
    "note": "a field of Claude's own verdict, which it wrote itself",
}


def named_keys() -> set[str]:
    return {key for doc in DOCUMENTS for key in KEY.findall(doc.read_text())}


def chains(value: Any) -> set[str]:
    """Every run of keys down the object (`a`, `a.b`, `b`, ...), lists looked through."""
    found = _starting(value)
    children = value.values() if isinstance(value, dict) else (
        value if isinstance(value, list) else [])
    for child in children:
        found |= chains(child)
    return found


def _starting(value: Any) -> set[str]:
    if isinstance(value, list):
        return set().union(*(_starting(v) for v in value)) if value else set()
    if not isinstance(value, dict):
        return set()
    found = set()
    for key, child in value.items():
        found.add(key)
        found |= {f"{key}.{rest}" for rest in _starting(child)}
    return found


class Recorder:
    """Runs the CLI and keeps what it printed, as the skills call it and with --full."""

    def __init__(self, sparring: Any, tmp: Path) -> None:
        self.sparring, self.tmp = sparring, tmp
        self.compact: list[dict[str, Any]] = []
        self.full: list[dict[str, Any]] = []
        self.n = 0

    def __call__(self, *args: str, full: bool = False) -> dict[str, Any]:
        out = dict(self.sparring(*args).out)
        (self.full if full else self.compact).append(out)
        return out

    def both(self, *args: str) -> dict[str, Any]:
        self(*args, "--full", full=True)
        return self(*args)

    def file(self, content: Any, suffix: str = ".json") -> str:
        self.n += 1
        path = self.tmp / f"in-{self.n}{suffix}"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return str(path)


def script(fake: Any, entries: list[Any]) -> None:
    """The fake's script from its first entry (it counts turns in its state folder)."""
    state = fake.tmp_path / f"fake-state-{len(list(fake.tmp_path.glob('fake-state-*')))}"
    fake.monkeypatch.setenv("FAKE_CODEX_STATE_DIR", str(state))
    fake.script(entries)


def think_about(run: Recorder, fake: Any) -> None:
    script(fake, [
        {"mode": "slow", "delay": 20, "reasoning": "Reading the store.",  # running at 2 waits
         "reply": answer([cpt("X-1", "agree"), cpt("X-2", "agree")])},
        {"mode": "writes_file", "write_path": "app.py",
         "reply": answer([cpt("X-1", "agree"), cpt("X-2", "agree")])},
    ])
    sid = run("init", "--skill", "think-about")["session"]
    run("start", sid, "--template", "think-about/round1", "--var", "QUESTION=Redis?")
    assert run.both("wait", sid, "--timeout", "0.3")["status"] == "running"
    fake.release()
    withheld = run("wait", sid, "--timeout", "30")
    assert withheld["review_withheld"]
    run("wait", sid, "--seal", run.file("my analysis", ".md"))
    run("wait", sid, "--full", full=True)
    verdict = {"position": "p", "points": [pt("X-1", "agree", cls="genuine_agreement"),
                                           pt("X-2", "disagree", cls="genuine_disagreement")],
               "convergence": {"state": "continue", "reason": "X-2"}}
    assert run("verdict", sid, "--file", run.file(verdict))["next"]["started"]
    assert run.both("wait", sid, "--timeout", "30")["guard"]["changed"]
    run("verdict", sid, "--full", "--file", run.file(verdict), full=True)
    stop = run("verdict", sid, "--file", run.file(verdict))
    assert stop["next"]["action"] == "stop"
    run("report", sid, "--synthesis", run.file({
        "recommendations": ["r"], "open_questions": [], "confidence": {
            "level": "low", "reason": "r"}}), "--out", str(run.tmp / "ta.md"))
    run("finalize", sid)
    run("stop", sid)


def a_failure_and_the_budget(run: Recorder, fake: Any) -> None:
    script(fake, [{"reply": answer([cpt("X-1", "disagree")]),
                  "usage": {"input_tokens": 900, "output_tokens": 200}},
                 {"mode": "rate_limited"}])
    sid = run("init", "--skill", "think-about", "--budget-tokens", "1000")["session"]
    run("start", sid, "--template", "think-about/round1", "--var", "QUESTION=Redis?")
    run("wait", sid, "--timeout", "30")  # round one has ended: the seal is taken then
    run("wait", sid, "--seal", run.file("mine", ".md"))
    run.both("wait", sid)
    verdict = {"position": "p", "points": [pt("X-1", "disagree",
                                                cls="genuine_disagreement")],
               "convergence": {"state": "continue", "reason": "open"}}
    spent = run("verdict", sid, "--file", run.file(verdict))
    assert spent["next"]["error"]["code"] == "budget_exhausted"
    assert run("resume", sid, "--recover")["error"]["code"] in ("budget_exhausted",
                                                               "invalid_transition")
    sid = run("init", "--skill", "deep-discussion")["session"]
    prompt = run.file("q", ".md")
    run("start", sid, "--prompt-file", prompt)
    script(fake, [{"mode": "rate_limited"}])
    run("start", sid, "--prompt-file", prompt)
    failed = run.both("wait", sid, "--timeout", "30")
    assert failed.get("error") or failed["status"] != "completed"


def dual_model(run: Recorder, fake: Any) -> None:
    script(fake, [{"reply": answer([cpt("X-1", "agree"), cpt("X-2", "agree")])}])
    sid = run("init", "--skill", "dual-model")["session"]
    run("start", sid, "--template", "dual-model/dispatch", "--var", "QUESTION=Redis?")
    run("wait", sid, "--timeout", "30")  # round one has ended: the seal is taken then
    run("wait", sid, "--seal", run.file("mine", ".md"))
    verdict = {"position": "p", "points": [pt("X-1", "agree", cls="genuine_agreement"),
                                           pt("X-2", "disagree", cls="genuine_disagreement")],
               "convergence": {"state": "continue", "reason": "r"}}
    run("verdict", sid, "--full", "--file", run.file(verdict), full=True)
    assert run("verdict", sid, "--file", run.file(verdict))["next"]["optional"]["command"]


def arch_debate(run: Recorder, fake: Any, repo: Path) -> None:
    script(fake, ["Round 1: Redis, because of TTLs.", "AGREED: SQLite with a sweep."])
    made = run("debate", "new", "debate", "Redis or SQLite?")
    sid = made["session"]
    run("debate", "round", "debate", "--file", run.file("Round 0: SQLite.", ".md"))
    run.both("wait", sid, "--timeout", "30")
    run("debate", "round", "debate", "--file", run.file("SQLite handles it.", ".md"))
    run.both("wait", sid, "--timeout", "30")
    run("debate", "round", "debate", "--file", run.file("AGREED: SQLite.\nBrief.", ".md"))
    run("debate", "status", "debate")


def deep_discussion(run: Recorder, fake: Any) -> None:
    script(fake, ['One.\n[SEARCH_REQUEST: "sqlite wal"]', "Two.\n[CONSENSUS_REACHED]",
                 "Synthesis."])
    sid = run("discuss", "new", "--args", "high")["session"]
    run("discuss", "frame", sid, "--file", run.file("TOPIC: t\nFRAMING: f\nCLAUDE_VIEW: v\n",
                                                    ".yaml"))
    run.both("wait", sid, "--timeout", "30")
    run("discuss", "round", sid, "--file", run.file("response: r\nsearch_results: s\n",
                                                    ".yaml"))
    run.both("wait", sid, "--timeout", "30")
    run("discuss", "round", sid, "--file", run.file("response: |\n  ok\n  [CONSENSUS_REACHED]\n",
                                                    ".yaml"))
    run("discuss", "status", sid)
    run("discuss", "synthesis", sid)
    run.both("wait", sid, "--timeout", "30")
    run("discuss", "report", sid, "--out", str(run.tmp / "dd.md"), "--file", run.file(
        "\n".join(f"{k}: x" for k in ("agreed_points", "key_trade_offs", "recommended_approach",
                                      "open_questions", "implementation_hints",
                                      "final_observations")), ".yaml"))


def test_every_key_the_skills_read_is_in_the_compact_output(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path) -> None:
    run = Recorder(sparring, scratch)
    run("doctor")
    think_about(run, fake_codex)
    a_failure_and_the_budget(run, fake_codex)
    dual_model(run, fake_codex)
    arch_debate(run, fake_codex, repo)
    deep_discussion(run, fake_codex)
    compact = set().union(*(chains(o) for o in run.compact))
    printed = compact.union(*(chains(o) for o in run.full))
    read = (named_keys() - set(NOT_READ)) & printed
    assert not read - compact, f"named by the skills, printed only with --full: {read - compact}"
    # Not vacuous: the keys a round turns on are among those checked.
    assert {"review.data", "review.text", "review_withheld", "usage.total", "usage.budget",
            "guard.changed", "activities", "recoverable", "error.used",
            "next.started", "next.command", "next.optional.command", "next.error.message",
            "debate", "step", "rule_breaks", "discussion.last_message", "search_requests",
            "agreed_points", "decision"} <= read
    assert printed - compact, "--full prints more than the compact output"
