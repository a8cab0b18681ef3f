#!/usr/bin/env python3
"""Runner benchmarks (figures printed; not a timed test).

1. Whole-process wall time of `sparring poll` on a finished session against
   `python -c pass`, medians over N runs, and their ratio (goal <= 4x).
2. Latency from the end of a turn (codex's last event reaching disk) to
   `sparring wait` returning (goal <= 0.5 s), over N turns of the fake codex.

Run: python3 bench/runner_bench.py [--runs 20] [--turns 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAKE_BIN = ROOT / "tests" / "support" / "bin"
CLI = [sys.executable, "-m", "sparring"]


def sparring(*args: str, cwd: Path, env: dict[str, str], stdin: bytes = b"") -> dict:
    done = subprocess.run([*CLI, *args], cwd=cwd, env=env, input=stdin, capture_output=True,
                          check=True)
    return dict(json.loads(done.stdout))


def wall(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - began


def make_repo(base: Path) -> Path:
    repo = base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", repo], check=True)
    return repo


def environment(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARRING_", "FAKE_CODEX_"))}
    env.update(PATH=f"{FAKE_BIN}{os.pathsep}{env['PATH']}", HOME=str(base),
               CODEX_HOME=str(base / ".codex"))
    return env


def bench_poll(repo: Path, env: dict[str, str], runs: int) -> tuple[float, float]:
    sid = sparring("init", "--skill", "deep-discussion", cwd=repo, env=env)["session"]
    sparring("start", sid, cwd=repo, env=env, stdin=b"q")
    assert sparring("wait", sid, cwd=repo, env=env)["status"] == "completed"
    poll = [wall([*CLI, "poll", sid], repo, env) for _ in range(runs)]
    bare = [wall([sys.executable, "-c", "pass"], repo, env) for _ in range(runs)]
    return statistics.median(poll), statistics.median(bare)


def bench_wait_latency(repo: Path, env: dict[str, str], turns: int) -> list[float]:
    latencies = []
    for _ in range(turns):
        sid = sparring("init", "--skill", "deep-discussion", cwd=repo, env=env)["session"]
        slow = {**env, "FAKE_CODEX_MODE": "slow", "FAKE_CODEX_DELAY": "1.5"}
        started = sparring("start", sid, cwd=repo, env=slow, stdin=b"q")
        done = sparring("wait", sid, "--timeout", "60", cwd=repo, env=env)
        returned = time.time()
        assert done["status"] == "completed", done
        last_event = Path(started["files"]["events"]).stat().st_mtime
        latencies.append(returned - last_event)
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo, env = make_repo(base), environment(base)
        poll, bare = bench_poll(repo, env, args.runs)
        latencies = bench_wait_latency(repo, env, args.turns)
    ratio = poll / bare
    print(f"sparring poll (finished session), median of {args.runs}: {poll * 1000:.1f} ms")
    print(f"python -c pass, median of {args.runs}:                 {bare * 1000:.1f} ms")
    print(f"ratio: {ratio:.2f}x (goal <= 4x)")
    print(f"turn end -> wait returns, {args.turns} turns: median "
          f"{statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms "
          "(goal <= 500 ms)")
    print(f"RESULT poll_ms={poll * 1000:.1f} python_ms={bare * 1000:.1f} ratio={ratio:.2f} "
          f"wait_latency_median_ms={statistics.median(latencies) * 1000:.0f} "
          f"wait_latency_max_ms={max(latencies) * 1000:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
