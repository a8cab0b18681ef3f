#!/usr/bin/env python3
"""install.py benchmark (figures printed; not a timed test).

Whole-process wall time of `python3 install.py --project <fresh project>`, medians over N runs:

1. first install: a fresh data dir (so a new virtual environment and a pip install) on a
   warm pip cache (one untimed install first warms a cache of the benchmark's own), and on
   a cold one (a pip cache of its own for each run: what a fresh machine gets, the
   dependencies fetched from whatever index pip is configured with);
2. new project: a fresh project while the runtime is already up to date (skills copied,
   no pip);
3. no-op: the same command again on an installed project (nothing changes).

Each includes the `sparring doctor` run that ends an install. HOME, XDG_DATA_HOME and the
pip cache live in a temporary folder; the fake codex from tests/ is on PATH so the doctor
does not depend on this machine's codex.

Run: python3 bench/install_bench.py [--first-runs 3] [--runs 10] [--compare INSTALL_PY]
`--compare` times another clone's install.py's cold first install too, interleaved with
this one's (an older sparring, say).
The last line is machine-readable: `RESULT key=value ...`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / "install.py"
FAKE_BIN = ROOT / "tests" / "support" / "bin"


def environment(base: Path, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARRING_", "FAKE_CODEX_"))}
    env.update(PATH=f"{FAKE_BIN}{os.pathsep}{env['PATH']}", HOME=str(base / "home"),
               CODEX_HOME=str(base / "home" / ".codex"), XDG_DATA_HOME=str(data),
               PIP_CACHE_DIR=str(base / "pip-cache"))
    return env


def fresh_project(base: Path) -> Path:
    path = Path(tempfile.mkdtemp(dir=base, prefix="project-"))
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def timed_install(project: Path, env: dict[str, str], installer: Path = INSTALL) -> float:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, str(installer), "--project", str(project)], env=env,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"install.py failed:\n{done.stdout}{done.stderr}")
    return elapsed


def bench_first_install(base: Path, runs: int) -> list[float]:
    """Each run with a data dir of its own: venv + pip, the pip cache already warm."""
    timed_install(fresh_project(base), environment(base, base / "warm-up-data"))
    return [timed_install(fresh_project(base), environment(base, base / f"data-{i}"))
            for i in range(runs)]


def bench_cold_install(base: Path, runs: int, other: Path | None) -> dict[str, list[float]]:
    """Each run with a data dir and a pip cache of its own; with `other`, that install.py
    too, one of each in turn."""
    found: dict[str, list[float]] = {"this": [], "other": []}
    for i in range(runs):
        for name, installer in (("this", INSTALL), ("other", other)):
            if installer is None:
                continue
            env = {**environment(base, base / f"cold-{name}-{i}"),
                   "PIP_CACHE_DIR": str(base / f"cold-cache-{name}-{i}")}
            found[name].append(timed_install(fresh_project(base), env, installer))
    return found


def bench_with_runtime(base: Path, runs: int) -> tuple[list[float], list[float]]:
    """(a fresh project each run, the same project again) on an up-to-date runtime."""
    env = environment(base, base / "warm-up-data")
    new = [timed_install(fresh_project(base), env) for _ in range(runs)]
    project = fresh_project(base)
    timed_install(project, env)
    again = [timed_install(project, env) for _ in range(runs)]
    return new, again


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-runs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--compare", type=Path, help="another clone's install.py")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="install-bench-") as tmp:
        base = Path(tmp)
        (base / "home").mkdir()
        first = bench_first_install(base, args.first_runs)
        cold = bench_cold_install(base, args.first_runs, args.compare)
        new, again = bench_with_runtime(base, args.runs)
    first_s, new_s, noop_s = (statistics.median(x) for x in (first, new, again))
    print(f"first install (fresh data dir, warm pip cache), median of {args.first_runs}: "
          f"{first_s:.2f} s (min {min(first):.2f}, max {max(first):.2f})")
    cold_s = statistics.median(cold["this"])
    print(f"first install (fresh data dir, cold pip cache), median of {args.first_runs}: "
          f"{cold_s:.2f} s (min {min(cold['this']):.2f}, max {max(cold['this']):.2f})")
    if cold["other"]:
        other_s = statistics.median(cold["other"])
        print(f"  the same with {args.compare}, interleaved: {other_s:.2f} s "
              f"(min {min(cold['other']):.2f}, max {max(cold['other']):.2f})")
    print(f"new project, runtime up to date, median of {args.runs}:          "
          f"{new_s:.3f} s (min {min(new):.3f}, max {max(new):.3f})")
    print(f"second run, nothing to do, median of {args.runs}:                "
          f"{noop_s:.3f} s (min {min(again):.3f}, max {max(again):.3f})")
    print(f"RESULT first_install_s={first_s:.2f} cold_first_install_s={cold_s:.2f} "
          f"new_project_s={new_s:.3f} "
          f"noop_s={noop_s:.3f} first_runs={args.first_runs} runs={args.runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
