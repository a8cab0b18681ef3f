#!/usr/bin/env python3
"""What the agreement audit catches, on a seeded think-about whose flaw is known (figures and
the audit printed; not a test).

The seeded flaw: Claude gives in. Codex claims the refresh-on-read is harmless (X-2); Claude
disagrees in round one, then in round two agrees, citing only the line Codex had already
cited, plus one that does not exist; and a point of Claude's sealed analysis (C-2: sessions
must be encrypted at rest) never reaches the debate. Both sides then approve one summary, so
the loop decision alone says CONSENSUS. The debate runs through this checkout's CLI against
the fake codex; this prints the report's summary line and its section "How the agreement was
reached", then how long `sparring report` took.

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
SEALED = """# My analysis

Position: SQLite in WAL mode, if expiry and the write rate hold.

- C-1: the write rate is 200/s at peak (api/session/store.py:12), within SQLite in WAL mode.
- C-2: sessions must be encrypted at rest; Redis does it today, SQLite would need SQLCipher.
"""


def point(pid: str, stance: str, claim: str = "", evidence: list[str] | None = None,
          **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"id": pid, "stance": stance, "evidence": evidence or []}
    if claim:
        found["claim"] = claim
    return {**found, **extra}


def answer(points: list[dict[str, Any]], state: str = "continue",
           proposed: str | None = None) -> dict[str, Any]:
    return {"position": "SQLite is enough.", "points": points,
            "convergence": {"state": state, "reason": "because"},
            "proposed_summary": proposed, "approve_summary": None}


X1 = "SQLite in WAL mode handles the write rate"
X2 = "The refresh-on-read is harmless: reads are cheap"
CODEX = [
    answer([point("X-1", "agree", X1, ["api/session/store.py:12"]),
            point("X-2", "agree", X2, ["api/session/store.py:41"])]),
    answer([point("X-1", "agree", X1, ["api/session/store.py:12"]),
            point("X-2", "agree", X2, ["api/session/store.py:41"])], "agree",
           "Move sessions to SQLite in WAL mode; keep the refresh-on-read."),
]
VERDICTS = [
    {"points": [point("X-1", "agree", evidence=[], **{"class": "genuine_agreement",
                                                      "sealed": "C-1"}),
                point("X-2", "disagree", evidence=["api/session/store.py:41"],
                      note="every read writes: 1,900 writes/s, not 200",
                      **{"class": "genuine_disagreement"})],
     "convergence": {"state": "continue", "reason": "X-2 is open"}},
    {"points": [point("X-1", "agree", **{"class": "genuine_agreement"}),
                point("X-2", "agree", evidence=["api/session/store.py:41",
                                                "api/session/store.py:400"],
                      **{"class": "genuine_agreement"})],
     "convergence": {"state": "agree", "reason": "settled"}, "approve_summary": "S-1"},
]


def run(args: list[str], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True)
    out = json.loads(done.stdout)
    if not out.get("ok"):
        raise SystemExit(f"sparring {' '.join(args)} failed: {out}")
    return dict(out)


def seeded(base: Path) -> tuple[Path, float]:
    repo = base / "repo"
    (repo / "api" / "session").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", repo], check=True)
    (repo / "api" / "session" / "store.py").write_text(
        "".join(f"# line {n}\n" for n in range(1, 61)))
    script = base / "script.json"
    script.write_text(json.dumps([json.dumps(a) for a in CODEX]))
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
    for n, verdict in enumerate(VERDICTS, start=1):
        (inbox / f"verdict-{n}.json").write_text(json.dumps(verdict))
        run(["verdict", sid, "--file", str(inbox / f"verdict-{n}.json")], repo, env)
        if n < len(VERDICTS):
            run(["wait", sid, "--timeout", "60"], repo, env)
    began = time.perf_counter()
    out = run(["report", sid, "--out", str(repo / "report.md")], repo, env)
    return Path(out["report"]), time.perf_counter() - began


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="sparring-audit-bench-") as tmp:
        report, took = seeded(Path(tmp))
        text = report.read_text()
        audit = json.loads(report.with_suffix(".json").read_text())["agreement_audit"]
    lines = text.splitlines()
    outcome = next(line for line in lines if line.startswith("**Outcome"))
    section = text.split("## How the agreement was reached", 1)[1].split("## Process", 1)[0]
    print("Seeded flaw: Claude concedes X-2 citing only what Codex cited (and a line that does")
    print("not exist); its sealed point C-2 never reaches the debate.\n")
    print(f"Loop decision: {outcome}")
    print(f"Report's first line: {lines[2]}\n")
    print("## How the agreement was reached" + section.rstrip() + "\n")
    flagged = [f"{c['side']} {c['point']}" for c in audit["concessions"] if c["flag"]]
    dropped = [p["id"] for p in audit["points"] if p["outcome"] == "dropped"]
    print(f"Caught: conceded without new evidence {flagged}; dropped {dropped}; "
          f"unchallenged {audit['unchallenged']}.")
    print(f"`sparring report` (audit included): {took * 1000:.0f} ms, one run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
