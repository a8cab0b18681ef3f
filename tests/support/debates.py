"""Drive the workflows through the CLI as their SKILL.md tells Claude, for the tests of
every module that needs a debate under way: think-about's `Debate` with the builders of
Codex's answers and Claude's points (`answer`, `pt`, `cpt`) and a synthesis; arch-debate's
`ArchDebate`; deep-discussion's `Discussion` and framing (`FRAME`)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import yaml

QUESTION = "Should sessions live in Redis or SQLite?"  # think-about's
ARCH_QUESTION = "Should we use Redis or SQLite for sessions?"


def answer(points: list[dict[str, Any]], state: str = "continue", proposed: str | None = None,
           approve: str | None = None, position: str = "SQLite is enough.",
           choice: str | None = None, confidence: int | None = None,
           objections: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Codex's answer, as its schema has it (every key, null where unused)."""
    return {"position": position, "choice": choice, "confidence": confidence,
            "points": points, "convergence": {"state": state, "reason": "because"},
            "proposed_summary": proposed, "approve_summary": approve,
            "summary_objections": objections or []}


def pt(pid: str, stance: str, claim: str = "", evidence: list[str] | None = None,
       cls: str | None = None, note: str | None = None, sealed: str | None = None
       ) -> dict[str, Any]:
    found: dict[str, Any] = {"id": pid, "stance": stance,
                             "evidence": [f"src/{pid.lower()}.py:10"] if evidence is None
                             else evidence}
    if claim:
        found["claim"] = claim
    if cls:
        found["class"] = cls
    if note:
        found["note"] = note
    if sealed:
        found["sealed"] = sealed
    return found


def cpt(pid: str, stance: str, claim: str = "", note: str | None = None,
        mind: str | None = None, **kw: Any) -> dict[str, Any]:
    """A point as Codex gives it: every key of its schema; each piece of evidence a
    `{"cite", "quote"}` (a string given is a citation without a quote)."""
    found = pt(pid, stance, claim or f"Codex claim {pid}", **kw)
    found["evidence"] = [item if isinstance(item, dict) else {"cite": item, "quote": None}
                         for item in found["evidence"]]
    return {**found, "note": note, "would_change_my_mind": mind}


def reading(*files: str) -> dict[str, str]:
    """A fake codex turn's keys that make it run a command opening `files` (its recorded
    activity then shows Codex read them: evidence.py's check of its citations)."""
    return {"mode": "commands", "command": f"/bin/bash -lc 'cat {' '.join(files)}'"}


def quoted(cite: str, quote: str) -> dict[str, str]:
    """A piece of evidence with the line it quotes."""
    return {"cite": cite, "quote": quote}


def round_one_ended(sparring: Any, sid: str, skill: str = "think-about") -> dict[str, Any]:
    """Codex's round one of a think-about (or dual-model) session, started and ended (the fake
    codex answers as it is set): a seal is taken only after it."""
    first = {"think-about": "think-about/round1", "dual-model": "dual-model/dispatch"}[skill]
    sparring("start", sid, "--template", first, "--var", f"QUESTION={QUESTION}")
    waited = sparring("wait", sid, "--timeout", "30").out
    assert waited.get("status") not in (None, "running"), waited
    return dict(waited)


class Debate:
    """Drives one think-about session the way SKILL.md tells Claude to (or a dual-model one:
    the same structured rounds, its own templates)."""

    def __init__(self, sparring: Any, fake: Any, scratch: Path,
                 skill: str = "think-about") -> None:
        self.sparring, self.fake, self.tmp, self.skill = sparring, fake, scratch, skill
        self.sid = sparring("init", "--skill", skill).out["session"]
        self.n = 0

    def file(self, name: str, content: Any) -> str:
        path = self.tmp / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return str(path)

    def start(self, *flags: str) -> dict[str, Any]:
        first = {"think-about": "think-about/round1", "dual-model": "dual-model/dispatch"}
        result = self.sparring("start", self.sid, "--template", first[self.skill],
                               "--var", f"QUESTION={QUESTION}", *flags)
        assert result.exit_code == 0, result.raw
        return dict(result.out)

    def wait(self, *flags: str) -> dict[str, Any]:
        return dict(self.sparring("wait", self.sid, "--timeout", "30", *flags).out)

    def seal(self, text: str = "# My analysis\nSessions need TTLs.\n") -> Any:
        """As SKILL.md has Claude seal: once Codex's round one has ended (its answer still
        withheld), when a round has started. The default analysis numbers no point, so the
        verdict on round one owes it nothing (tests of that rule seal their own)."""
        if self.sparring("status", self.sid).out.get("turns"):
            self.wait()
        return self.sparring("seal", self.sid, "--file", self.file("analysis.md", text))

    def verdict(self, body: dict[str, Any]) -> Any:
        self.n += 1
        return self.sparring("verdict", self.sid, "--file", self.file(f"v{self.n}.json", body))

    def next_round(self, decision: dict[str, Any]) -> dict[str, Any]:
        """A `continue` verdict started Codex's next round: wait for its answer. (dual-model:
        the verdict offers a deeper dive, which this takes, as its SKILL.md says.)"""
        if self.skill == "dual-model" and decision["next"].get("action") != "wait":
            # Without a `message` the dive waits in `next.optional`: write what the command
            # names as FOLLOW_UP, then run the command as printed.
            words = shlex.split(decision["next"]["optional"]["command"])
            follow = words[words.index("--var-file") + 1].split("=", 1)[1]
            Path(follow).write_text("Look again at the open points.\n")
            resumed = self.sparring(*words[1:])
            assert resumed.exit_code == 0, resumed.raw
            return self.wait()
        assert decision["next"]["action"] == "wait" and decision["next"]["started"], decision
        return self.wait()

    def withdrawn_claim(self, restart: bool = False) -> Any:
        """Claude seals C-1; Codex rejects it with evidence from store.py; Claude is convinced
        and withdraws it, approving Codex's summary (the verdict returned). Codex's third
        answer, a challenge turn's, finds nothing. `restart`: as FakeCodex.script."""
        self.fake.script([
            {"reply": answer([cpt("X-1", "agree", "Keep Redis for sessions")])},
            {**reading("store.py"), "reply": answer([
                cpt("C-1", "disagree", "Sessions need a sweep job",
                    evidence=[quoted("store.py:3", "TTL = 30")],
                    note="Redis expires keys by their TTL; nothing to sweep")],
                "agree", proposed="Keep Redis (X-1). No sweep job: keys expire by TTL (C-1).")},
            {"reply": answer([], "agree")}], restart=restart)
        self.start()
        self.seal("# Mine\n- C-1: Sessions need a sweep job.\n")
        self.wait()
        first = self.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement"),
                                         pt("C-1", "agree", cls="claude_only")],
                              "convergence": {"state": "continue", "reason": "open"}})
        assert first.out["decision"] == "continue", first.raw
        self.next_round(first.out)
        return self.verdict({"points": [
            pt("C-1", "withdraw", cls="claude_only", evidence=["store.py:3"],
               note="Codex is right: the TTL expires them")],
            "convergence": {"state": "agree", "reason": "settled"}, "approve_summary": "S-1",
            "proposed_summary": None})

    def agreed_report(self) -> str:
        """Round one sealed and agreed on X-1 alone, the session stopped: the report's text."""
        self.seal()
        self.wait()
        self.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                      "convergence": {"state": "agree", "reason": "settled"}})
        self.sparring("stop", self.sid)
        return self.report(SYNTHESIS)[1]

    def report(self, synthesis: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
        args = ["report", self.sid, "--out", str(self.tmp / "report.md")]
        if synthesis is not None:
            args += ["--synthesis", self.file("synthesis.json", synthesis)]
        result = self.sparring(*args)
        assert result.exit_code == 0, result.raw
        return dict(result.out), Path(result.out["report"]).read_text()


SYNTHESIS = {"recommendations": ["Use SQLite with WAL"], "open_questions": ["Multi-region?"],
             "confidence": {"level": "medium", "reason": "no load test yet"}}


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """A report's YAML front matter, found as front-matter tools find it (the first line
    `---`, up to the next line that is `---` and nothing else) and read by a YAML parser;
    and the body after it."""
    lines = text.split("\n")
    assert lines[0] == "---", text[:200]
    end = lines.index("---", 1)
    found = yaml.safe_load("\n".join(lines[1:end]))
    assert isinstance(found, dict), found
    return found, "\n".join(lines[end + 1:]).lstrip("\n")


def body(text: str) -> str:
    """A report without its front matter: from its H1 on."""
    return front_matter(text)[1]


class ArchDebate:
    """Drives one arch-debate in `repo/debate`."""

    def __init__(self, sparring: Any, fake: Any, repo: Path) -> None:
        self.sparring, self.fake, self.dir = sparring, fake, repo / "debate"
        created = sparring("debate", "new", "debate", ARCH_QUESTION)
        assert created.exit_code == 0, created.raw
        self.session = created.out["session"]

    def write(self, n: int, text: str) -> None:
        (self.dir / f"round-{n}-claude.md").write_text(text)

    def codex_round(self, *args: str) -> dict[str, Any]:
        started = self.sparring("debate", "round", str(self.dir), *args)
        assert started.exit_code == 0, started.raw
        done = self.sparring("wait", self.session)
        assert done.out["status"] == "completed", done.out
        return self.status()

    def status(self) -> dict[str, Any]:
        result = self.sparring("debate", "status", str(self.dir))
        assert result.exit_code == 0, result.raw
        return dict(result.out)


FRAME = b"""TOPIC: Event sourcing for the billing service?
FRAMING: |
  Billing needs an audit trail; the team has no event-sourcing experience.
CONTEXT: services/billing
CLAUDE_VIEW: |
  An append-only audit table gets most of the benefit at a fraction of the cost.
"""


class Discussion:
    """Drives one deep-discussion through `sparring discuss`."""

    def __init__(self, sparring: Any, fake: Any, args: str = "") -> None:
        self.sparring, self.fake = sparring, fake
        created = sparring("discuss", "new", "--args", args)
        assert created.exit_code == 0, created.raw
        self.sid = created.out["session"]

    def step(self, verb: str, body: bytes = b"") -> dict[str, Any]:
        result = self.sparring("discuss", verb, self.sid, input=body)
        assert result.exit_code == 0, result.raw
        return dict(result.out)

    def wait(self) -> dict[str, Any]:
        done = self.sparring("wait", self.sid)
        assert done.out["status"] == "completed", done.out
        return self.step("status")
