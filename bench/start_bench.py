#!/usr/bin/env python3
"""`start` until Codex's first request, against the same `codex exec` run directly (figures
printed; not a test).

The real Codex CLI (SPARRING_TEST_CODEX, else .ci/node's, else PATH's) against a loopback
Responses mock (tests/support/responses_mock.py, which notes when each request arrives).
Timed from the moment the command is started to the moment the mock receives Codex's first
request: `sparring start SESSION --prompt-file FILE` as the skills' launcher runs it
(`venv/bin/python -I -c ENTRY`, ENTRY installer/layout.py's, in a runtime install.py
makes in a temporary folder: a non-editable install), a new session each round, and the
very command line sparring gave codex in a warm-up turn, run directly with the same prompt
on stdin. Medians over N rounds measured in one run, interleaved; goal <= 1.5x. Each
round's turn is run to its end (and checked completed) before the next starts.
Nothing leaves 127.0.0.1.

Run: python3 bench/start_bench.py [--runs 15] [--python PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner_bench import (  # the benchmarks' shared helpers
    Sparring,
    add_python_option,
    make_repo,
    ms,
    runtime_python,
)
from support.binaries import find_codex
from support.loopback_server import Exchange
from support.responses_mock import ResponsesMock

GOAL_RATIO = 1.5


class TimedMock(ResponsesMock):
    """The Responses mock, noting when each request arrived (time.perf_counter)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def route(self, exchange: Exchange) -> None:
        self.arrivals.append(time.perf_counter())
        super().route(exchange)


def first_request(mock: TimedMock, began: float, seen: int, timeout: float = 60) -> float:
    """Seconds from `began` to the first request after the `seen` ones before it."""
    deadline = time.monotonic() + timeout
    while len(mock.arrivals) <= seen:
        if time.monotonic() > deadline:
            sys.exit("codex sent no request")
        time.sleep(0.001)
    return mock.arrivals[seen] - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    add_python_option(parser)
    args = parser.parse_args()
    codex = find_codex()
    if codex is None:
        sys.exit("no real codex: set SPARRING_TEST_CODEX or run .ci/run")
    with tempfile.TemporaryDirectory(prefix="sparring-start-bench-") as tmp, TimedMock() as mock:
        base = Path(tmp)
        python = args.python or runtime_python(base)
        env = {**mock.codex_env(mock.codex_home(base / "codex-home"), home=base / "home"),
               "XDG_DATA_HOME": str(base / "data"), "XDG_STATE_HOME": str(base / "state"),
               "SPARRING_CODEX": str(codex)}
        repo = make_repo(base, "repo")
        run = Sparring(python, repo, env)  # as the launcher runs the runtime
        sparring = run.argv

        prompt = repo / ".sparring" / "inbox" / "prompt.md"  # taken into the session once read
        text = "Redis or SQLite for sessions? Answer in one line.\n"
        run("doctor", "--json", "--inbox")
        (base / "prompt.md").write_text(text)

        def via_sparring() -> float:
            sid = run("init", "--skill", "deep-discussion")["session"]
            prompt.write_text(text)
            seen, began = len(mock.arrivals), time.perf_counter()
            started = subprocess.Popen([*sparring, "start", sid, "--prompt-file", str(prompt)],
                                       cwd=repo, env=env, stdout=subprocess.PIPE)
            took = first_request(mock, began, seen)
            out = json.loads(started.communicate()[0])
            assert out["ok"], out
            done = run("wait", sid, "--timeout", "60")
            assert done["status"] == "completed", done
            via_sparring.argv = json.loads(  # type: ignore[attr-defined]
                (repo / ".sparring" / "sessions" / sid / "session.json").read_text()
            )["turns"][-1]["argv"]
            return took

        via_sparring()  # warm-up: also gives the command line sparring runs codex with
        argv = via_sparring.argv  # type: ignore[attr-defined]

        def direct() -> float:
            seen = len(mock.arrivals)
            with (base / "prompt.md").open("rb") as stdin:
                began = time.perf_counter()
                proc = subprocess.Popen(argv, cwd=repo, env=env, stdin=stdin,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                took = first_request(mock, began, seen)
            assert proc.wait(timeout=60) == 0
            return took

        times: dict[str, list[float]] = {"codex exec": [], "sparring start": []}
        for _ in range(args.runs):
            times["codex exec"].append(direct())
            times["sparring start"].append(via_sparring())
    found = {name: statistics.median(values) for name, values in times.items()}
    ratio = found["sparring start"] / found["codex exec"]
    where = f"--python {args.python}" if args.python else "a runtime made by install.py"
    print(f"codex {codex}; sparring: {where}; medians of {args.runs} rounds, interleaved")
    print(f"codex exec -> first request:      {ms(found['codex exec'])}")
    print(f"sparring start -> first request:  {ms(found['sparring start'])}  {ratio:.2f}x "
          f"(goal <= {GOAL_RATIO}x)")
    print(f"RESULT codex_exec_ms={found['codex exec'] * 1000:.1f} "
          f"start_ms={found['sparring start'] * 1000:.1f} ratio={ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
