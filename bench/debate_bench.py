#!/usr/bin/env python3
"""Prompt bytes per round across a six-round arch-debate (figures printed; not a test).

sparring keeps Codex on one thread and sends each round only Claude's newest round. The
seed's approach has Codex re-read the whole transcript every round: the protocol and every
round file written so far. This runs a real six-round debate through the CLI against the
fake codex (rounds of about 450 words on both sides), reads the bytes sparring actually
sent from the fake's log, computes what the seed would have sent for the same debate, and
prints both series and the ratio at round six.

Run: .venv/bin/python bench/debate_bench.py [--words 450] (the environment tests/run.py makes:
the debate runs through this checkout's CLI, which needs its dependencies)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAKE_BIN = ROOT / "tests" / "support" / "bin"
CLI = [sys.executable, "-m", "sparring"]
ROUNDS = 6
VOCABULARY = ("latency", "replica", "session", "cache", "write", "index", "schema", "lock",
              "throughput", "eviction", "failover", "migration", "cost", "queue", "audit")


def prose(words: int, seed: int) -> str:
    picked = [VOCABULARY[(seed * 7 + i * 3) % len(VOCABULARY)] for i in range(words)]
    lines = [" ".join(picked[i:i + 14]) + "." for i in range(0, words, 14)]
    return "\n".join(lines) + "\n"


def run(args: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> dict:
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, input=stdin, capture_output=True)
    out = json.loads(done.stdout)
    if not out.get("ok"):
        raise SystemExit(f"sparring {' '.join(args)} failed: {out}")
    return dict(out)


def debate(base: Path, words: int) -> tuple[list[int], list[int]]:
    repo = base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", repo], check=True)
    log = base / "log"
    script = base / "script.json"
    script.write_text(json.dumps([prose(words, 100 + n) for n in range(1, ROUNDS + 1)]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARRING_", "FAKE_CODEX_"))}
    env.update(PATH=f"{FAKE_BIN}{os.pathsep}{env['PATH']}", HOME=str(base),
               CODEX_HOME=str(base / ".codex"), FAKE_CODEX_LOG_DIR=str(log),
               FAKE_CODEX_SCRIPT=str(script))
    folder = repo / "debate"
    session = run(["debate", "new", "debate", "Redis or SQLite for sessions?"], repo, env)
    (folder / "round-0-claude.md").write_text(prose(words, 0))
    unsent = []
    for n in range(1, ROUNDS + 1):
        unsent.append(_unsent_bytes(folder, n))
        run(["debate", "round", str(folder)], repo, env)
        run(["wait", session["session"], "--timeout", "60"], repo, env)
        (folder / f"round-{n}-claude.md").write_text(prose(words, n))
    ours = [p.stat().st_size for p in sorted(log.glob("call-*.stdin"))]
    # The same instructions, plus the part of the transcript sparring did not resend.
    return ours, [mine + extra for mine, extra in zip(ours, unsent, strict=True)]


def _unsent_bytes(folder: Path, n: int) -> int:
    """Transcript bytes before Codex's round n that sparring does not send again."""
    if n == 1:
        return 0  # round one: both send the protocol and Claude's opening
    files = [folder / "DEBATE-PROTOCOL.md", folder / "round-0-claude.md"]
    files += [folder / f"round-{k}-{side}.md" for k in range(1, n) for side in ("codex", "claude")]
    files.remove(folder / f"round-{n - 1}-claude.md")  # the newest round: both send it
    return sum(f.stat().st_size for f in files)


def main() -> int:
    if importlib.util.find_spec("sparring") is None:
        sys.exit("debate_bench.py runs the debate through this checkout's CLI: run it with the "
                 "test environment's python, `.venv/bin/python bench/debate_bench.py` "
                 "(`python3 tests/run.py` makes .venv/)")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=450, help="words per round, both sides")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ours, seed = debate(Path(tmp), args.words)
    print(f"six-round arch-debate, about {args.words} words a round on each side")
    print(f"{'round':>5} {'sparring bytes':>15} {'whole-transcript bytes':>23}")
    for n, (mine, theirs) in enumerate(zip(ours, seed, strict=True), start=1):
        print(f"{n:>5} {mine:>15,} {theirs:>23,}")
    ratio = seed[-1] / ours[-1]
    print(f"round {ROUNDS}: the whole transcript is {ratio:.1f}x the bytes sparring sends; "
          f"over the debate {sum(seed) / sum(ours):.1f}x")
    print(f"RESULT sparring_bytes={','.join(map(str, ours))} seed_bytes={','.join(map(str, seed))}"
          f" ratio_round6={ratio:.2f} ratio_total={sum(seed) / sum(ours):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
