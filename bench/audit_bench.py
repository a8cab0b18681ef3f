#!/usr/bin/env python3
"""What the agreement rules catch, on a seeded think-about whose flaw is known (figures and
the audit printed; not a test).

The seeded flaw: Claude gives in. Codex claims the refresh-on-read is harmless (X-2); Claude
disagrees in round one, then in round two agrees, citing only the line Codex had already
cited, plus one that does not exist; and Claude's first verdict leaves out a point of its
sealed analysis (C-2: sessions must be encrypted at rest). Both sides then approve one
summary, so the rounds alone would say CONSENSUS. The debate runs through this checkout's
CLI against the fake codex (which reads the file it cites, so its quotes are checked); the
challenge turn is off (sparring.yaml), to show the concession alone. This prints what the
runner refused and sent back, the outcome, the report's summary line and its section "How
the agreement was reached", then how long `sparring report` took.

Run: .venv/bin/python bench/audit_bench.py (the environment `python3 tests/run.py` makes: the
debate runs through this checkout's CLI, which needs its dependencies)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FAKE_BIN = ROOT / "tests" / "support" / "bin"
CLI = [sys.executable, "-m", "sparring"]
QUESTION = "Should the session store move from Redis to SQLite?"
STORE = "api/session/store.py"
SEALED = """# My analysis

Position: SQLite in WAL mode, if expiry and the write rate hold.

- C-1: the write rate is 200/s at peak, within SQLite in WAL mode.
- C-2: sessions must be encrypted at rest; Redis does it today, SQLite would need SQLCipher.
"""


def cited(line: int) -> dict[str, Any]:
    return {"cite": f"{STORE}:{line}", "quote": f"# line {line}"}


def point(pid: str, stance: str, claim: str = "", evidence: list[Any] | None = None,
          **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"id": pid, "stance": stance, "evidence": evidence or []}
    if claim:
        found["claim"] = claim
    return {**found, **extra}


def codex(pid: str, stance: str, claim: str, evidence: list[Any]) -> dict[str, Any]:
    return point(pid, stance, claim, evidence, note=None, would_change_my_mind=None)


def answer(points: list[dict[str, Any]], state: str = "continue",
           proposed: str | None = None) -> dict[str, Any]:
    return {"position": "SQLite is enough.", "choice": None, "confidence": None,
            "points": points, "convergence": {"state": state, "reason": "because"},
            "proposed_summary": proposed, "approve_summary": None, "summary_objections": []}


X1 = "SQLite in WAL mode handles the write rate"
X2 = "The refresh-on-read is harmless: reads are cheap"
READS = {"mode": "commands", "command": f"/bin/bash -lc 'cat {STORE}'"}  # Codex opens it
CODEX = [
    {**READS, "reply": answer([codex("X-1", "agree", X1, [cited(12)]),
                               codex("X-2", "agree", X2, [cited(41)])])},
    {**READS, "reply": answer([codex("X-2", "agree", X2, [cited(41)]),
                               codex("C-2", "agree", "Sessions must be encrypted at rest",
                                     [])], "agree",
                              "Move sessions to SQLite in WAL mode (X-1); keep the "
                              "refresh-on-read (X-2); encrypt them with SQLCipher (C-2).")},
]
AGREED = {"class": "genuine_agreement"}
LEAVES_OUT_C2 = {"points": [point("X-1", "agree", **AGREED, sealed="C-1"),
                            point("X-2", "disagree", evidence=[cited(41)],
                                  note="every read writes: 1,900 writes/s, not 200",
                                  **{"class": "genuine_disagreement"})],
                 "convergence": {"state": "continue", "reason": "X-2 is open"}}
VERDICTS = [
    {**LEAVES_OUT_C2, "points": [*LEAVES_OUT_C2["points"],
                                 point("C-2", "agree", **{"class": "claude_only"})]},
    {"points": [point("X-2", "agree", evidence=[f"{STORE}:41", f"{STORE}:400"], **AGREED),
                point("C-2", "agree", **AGREED)],
     "convergence": {"state": "agree", "reason": "settled"}, "approve_summary": "S-1"},
]


def run(args: list[str], cwd: Path, env: dict[str, str], ok: bool = True) -> dict[str, Any]:
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True)
    out = json.loads(done.stdout)
    if ok and not out.get("ok"):
        raise SystemExit(f"sparring {' '.join(args)} failed: {out}")
    return dict(out)


def hand_in(verdict: dict[str, Any], name: str, sid: str, inbox: Path, repo: Path,
            env: dict[str, str], ok: bool = True) -> dict[str, Any]:
    (inbox / name).write_text(json.dumps(verdict))
    return run(["verdict", sid, "--file", str(inbox / name)], repo, env, ok)


def seeded(base: Path) -> tuple[Path, float, list[str]]:
    repo = base / "repo"
    (repo / "api" / "session").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", repo], check=True)
    (repo / STORE).write_text("".join(f"# line {n}\n" for n in range(1, 61)))
    (repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    script = base / "script.json"
    script.write_text(json.dumps(CODEX))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARRING_", "FAKE_CODEX_"))}
    env.update(PATH=f"{FAKE_BIN}{os.pathsep}{env['PATH']}", HOME=str(base),
               CODEX_HOME=str(base / ".codex"), FAKE_CODEX_SCRIPT=str(script),
               PYTHONPATH=str(ROOT / "scripts"))
    made = run(["init", "--skill", "think-about"], repo, env)
    sid, inbox = made["session"], Path(made["inbox"])
    run(["start", sid, "--template", "think-about/round1", "--var", f"QUESTION={QUESTION}"],
        repo, env)
    (inbox / "analysis.md").write_text(SEALED)
    run(["wait", sid, "--timeout", "60", "--seal", str(inbox / "analysis.md")], repo, env)
    said = []
    refused = hand_in(LEAVES_OUT_C2, "verdict-0.json", sid, inbox, repo, env, ok=False)
    said.append(f"round 1, C-2 left out: refused, {refused['error']['code']} "
                f"{refused['error'].get('points')}; nothing recorded")
    hand_in(VERDICTS[0], "verdict-1.json", sid, inbox, repo, env)
    run(["wait", sid, "--timeout", "60"], repo, env)
    sent = hand_in(VERDICTS[1], "verdict-2.json", sid, inbox, repo, env)
    said.append(f"round 2, X-2 conceded: {sent['decision']} "
                f"{[r['point'] for r in sent.get('reconsider', [])]}; nothing recorded")
    stands = hand_in(VERDICTS[1], "verdict-3.json", sid, inbox, repo, env)  # the same again
    said.append(f"round 2, handed in again unchanged: {stands['decision']}")
    began = time.perf_counter()
    out = run(["report", sid, "--out", str(repo / "report.md")], repo, env)
    return Path(out["report"]), time.perf_counter() - began, said


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="sparring-audit-bench-") as tmp:
        report, took, said = seeded(Path(tmp))
        text = report.read_text()
        audit = json.loads(report.with_suffix(".json").read_text())["agreement_audit"]
    lines = text.splitlines()
    outcome = next(line for line in lines if line.startswith("**Outcome"))
    section = text.split("## How the agreement was reached", 1)[1].split("## Process", 1)[0]
    print("Seeded flaw: Claude concedes X-2 citing only what Codex cited (and a line that does")
    print("not exist); its first verdict leaves out its sealed point C-2.\n")
    for line in said:
        print(f"- {line}")
    print(f"\nOutcome: {outcome}")
    print(f"Report's first line: {lines[2]}\n")
    print("## How the agreement was reached" + section.rstrip() + "\n")
    flagged = [f"{c['side']} {c['point']}" for c in audit["concessions"] if c["flag"]]
    print(f"Caught: conceded without new evidence {flagged}; contested "
          f"{[c['point'] for c in audit['contested']]}; evidence marks {audit['evidence']}.")
    print(f"`sparring report` (audit included): {took * 1000:.0f} ms, one run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
