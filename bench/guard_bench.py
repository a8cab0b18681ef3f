"""Benchmark: a guard check against `git status` on a large repository.

Builds, in a temporary directory, a repository of --files tracked files and
--ignored ignored ones (plus a few dirty and untracked files), then measures
in the same run the median wall time of

- `git status --porcelain --untracked-files=all --ignored` (the reference),
- `guard.compare` in process (what the runner does after every turn),
- `sparring guard check` as a subprocess (interpreter start and JSON load included),

in three situations: a quiet tree; the index rewritten with identical entries
(what any `git status` during the turn does after a `touch`); and a turn that
committed one file and edited ten. The goal is a check_ratio of at most 1.5.

    python3 bench/guard_bench.py                   # 50,000 + 5,000 files
    python3 bench/guard_bench.py --files 2000 --ignored 200 --runs 5

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
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from sparring import guard  # noqa: E402

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
STATUS = ["git", "status", "--porcelain", "--untracked-files=all", "--ignored"]
PER_DIR = 100


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV})
    return done.stdout


def write_tree(root: Path, top: str, count: int, ext: str) -> None:
    for n in range(count):
        folder = root / top / f"d{n // PER_DIR:04d}"
        if n % PER_DIR == 0:
            folder.mkdir(parents=True)
        (folder / f"f{n % PER_DIR:03d}.{ext}").write_text(f"{top} file {n}\n" * 3)


def build(root: Path, files: int, ignored: int) -> None:
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("node_modules/\n.sparring/\n")
    write_tree(root, "src", files, "py")
    write_tree(root, "node_modules", ignored, "js")
    git(root, "add", "-A")  # one `git add` of the whole tree is the fastest way in
    git(root, "commit", "-q", "-m", "bench")
    for n in range(10):  # a realistic working tree: some edits, some new files
        (root / "src" / "d0000" / f"f{n:03d}.py").write_text(f"edited {n}\n")
        (root / f"notes-{n}.md").write_text(f"draft {n}\n")


def medians_ms(runs: int, contenders: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Median wall time of each contender; runs interleave, so load drift hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for call in contenders.values():
        call()  # warm the caches once; every contender gets the same treatment
    for _ in range(runs):
        for name, call in contenders.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def measure(root: Path, base: guard.Baseline, saved: Path, runs: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "scripts")}
    cli = [sys.executable, "-m", "sparring", "guard", "check", "--baseline", str(saved)]
    return medians_ms(runs, {
        "status": lambda: subprocess.run(STATUS, cwd=root, check=True, capture_output=True),
        "check": lambda: guard.compare(base),
        "cli": lambda: subprocess.run(cli, cwd=root, check=True, capture_output=True, env=env),
    })


def report(label: str, times: dict[str, float], changed: int) -> None:
    print(f"{label:<18} git status {times['status']:8.1f} ms | check {times['check']:8.1f} ms "
          f"({times['check'] / times['status']:.2f}x) | CLI check {times['cli']:8.1f} ms "
          f"({times['cli'] / times['status']:.2f}x) | changed={changed}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=50_000, help="tracked files")
    parser.add_argument("--ignored", type=int, default=5_000, help="ignored files")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per measurement (>=5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="guard-bench-") as tmp:
        root, saved = Path(tmp) / "repo", Path(tmp) / "baseline.json"
        root.mkdir()
        start = time.perf_counter()
        build(root, args.files, args.ignored)
        setup = time.perf_counter() - start
        # Past the racy window, files are hashed only when their stat data moves: steady state.
        time.sleep(guard.RACY_MARGIN_NS / 1e9 + 0.1)
        start = time.perf_counter()
        base = guard.take(root, store=Path(tmp) / "store")
        base.save(saved)
        snap = (time.perf_counter() - start) * 1000
        print(f"repository: {args.files} tracked, {args.ignored} ignored, setup {setup:.1f} s; "
              f"snapshot {snap:.1f} ms ({len(base.entries)} files stat-watched); "
              f"median of {args.runs} runs")
        quiet = measure(root, base, saved, args.runs)
        report("quiet tree", quiet, len(guard.compare(base)))
        for path in list((root / "src").rglob("*.py"))[:200]:
            os.utime(path)
        git(root, "status")  # refreshes the index: new stat data, same entries
        rewritten = measure(root, base, saved, args.runs)
        report("index rewritten", rewritten, len(guard.compare(base)))
        for n in range(10, 20):
            (root / "src" / "d0001" / f"f{n:03d}.py").write_text(f"turn {n}\n")
        git(root, "commit", "-q", "-am", "a turn that commits")
        (root / "src" / "d0002" / "f000.py").write_text("edited in the turn\n")
        turn = measure(root, base, saved, args.runs)
        report("after a turn", turn, len(guard.compare(base)))
    print(f"RESULT files={args.files} ignored={args.ignored} runs={args.runs} "
          f"status_ms={quiet['status']:.1f} check_ms={quiet['check']:.1f} "
          f"check_ratio={quiet['check'] / quiet['status']:.2f} "
          f"check_ratio_rewritten={rewritten['check'] / rewritten['status']:.2f} "
          f"check_ratio_turn={turn['check'] / turn['status']:.2f} "
          f"cli_ms={quiet['cli']:.1f} cli_ratio={quiet['cli'] / quiet['status']:.2f} "
          f"snapshot_ms={snap:.1f} setup_s={setup:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
