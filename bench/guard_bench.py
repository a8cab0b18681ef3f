"""Benchmark: the whole `sparring guard check` command against `git status` on a large repository.

Builds, in a temporary directory, a repository of --files tracked files and
--ignored ignored ones (plus a few dirty and untracked files), then measures
in the same run the median wall time of

- `git status --porcelain --untracked-files=all --ignored` (the reference),
- `sparring guard check` as a subprocess: interpreter start, imports, loading
  the baseline, the check and the JSON output (the headline figure),
- `guard.compare` in process (the check alone, what the runner does),

in three situations: a quiet tree; the index rewritten with identical entries
(what any `git status` during the turn does after a `touch`); and a turn that
committed one file and edited ten. The goal: the whole command at most 2x git
status. It also times the snapshot, first into an empty store (copying every
dirty, untracked and small ignored file) and again with the previous baseline
(what the runner does for every turn after the first).

    python3 bench/guard_bench.py                   # 50,000 + 5,000 files
    python3 bench/guard_bench.py --files 2000 --ignored 200 --runs 5
    python3 bench/guard_bench.py --python ~/.local/share/sparring/venv/bin/python

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


def command(python: str | None, saved: Path) -> tuple[list[str], dict[str, str]]:
    """`sparring guard check` as the skills' launcher runs it (`python -I -m sparring`) with
    --python (an installed runtime), else from this checkout (scripts/ on PYTHONPATH)."""
    # Either way bytecode is cached, as in an installed runtime (pip compiles it at install
    # time): the warm-up run of medians_ms writes it if PYTHONDONTWRITEBYTECODE kept it out.
    env = {key: value for key, value in os.environ.items()
           if key != "PYTHONDONTWRITEBYTECODE"}
    verb = ["-m", "sparring", "guard", "check", "--baseline", str(saved)]
    if python:
        return [python, "-I", *verb], env
    env["PYTHONPATH"] = str(REPO / "scripts")
    return [sys.executable, *verb], env


def measure(root: Path, base: guard.Baseline, saved: Path, runs: int,
            python: str | None) -> dict[str, float]:
    cli, env = command(python, saved)
    return medians_ms(runs, {
        "status": lambda: subprocess.run(STATUS, cwd=root, check=True, capture_output=True),
        "check": lambda: guard.compare(base),
        "cli": lambda: subprocess.run(cli, cwd=root, check=True, capture_output=True, env=env),
    })


def report(label: str, times: dict[str, float], changed: int) -> None:
    print(f"{label:<18} git status {times['status']:7.1f} ms | sparring guard check "
          f"{times['cli']:7.1f} ms ({times['cli'] / times['status']:.2f}x) | in process "
          f"{times['check']:7.1f} ms ({times['check'] / times['status']:.2f}x) | "
          f"changed={changed}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=50_000, help="tracked files")
    parser.add_argument("--ignored", type=int, default=5_000, help="ignored files")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per measurement (>=5)")
    parser.add_argument("--python", help="the runtime's interpreter, e.g. "
                        "~/.local/share/sparring/venv/bin/python (install.py makes it): time "
                        "the command as the skills run it; default: this checkout's code")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="guard-bench-") as tmp:
        # The baseline inside the project, as the runner requires (its inbox keeps it out of git).
        root = Path(tmp) / "repo"
        saved = root / ".sparring" / "inbox" / "baseline.json"
        saved.parent.mkdir(parents=True)
        start = time.perf_counter()
        build(root, args.files, args.ignored)
        setup = time.perf_counter() - start
        # Past the racy window, files are hashed only when their stat data moves: steady state.
        time.sleep(guard.RACY_MARGIN_NS / 1e9 + 0.1)
        start = time.perf_counter()
        base = guard.take(root, store=Path(tmp) / "store")
        base.save(saved)
        snap = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        guard.take(root, store=Path(tmp) / "store", previous=base)
        again = (time.perf_counter() - start) * 1000
        copies = sum(1 for e in base.entries.values() if e.copied)
        cli = command(args.python, saved)[0]
        print(f"command: {' '.join(cli[:cli.index('-m')])} -m sparring guard check")
        print(f"repository: {args.files} tracked, {args.ignored} ignored, setup {setup:.1f} s; "
              f"snapshot {snap:.1f} ms ({len(base.entries)} files stat-watched, {copies} "
              f"copied), again with the previous baseline {again:.1f} ms; "
              f"median of {args.runs} runs")
        quiet = measure(root, base, saved, args.runs, args.python)
        found = guard.compare(base)
        report("quiet tree", quiet, len(found))
        if found:  # a quiet tree should be clean: say what moved
            print("  unexpected on a quiet tree:", [c.to_dict() for c in found][:5])
        for path in list((root / "src").rglob("*.py"))[:200]:
            os.utime(path)
        git(root, "status")  # refreshes the index: new stat data, same entries
        rewritten = measure(root, base, saved, args.runs, args.python)
        report("index rewritten", rewritten, len(guard.compare(base)))
        for n in range(10, 20):
            (root / "src" / "d0001" / f"f{n:03d}.py").write_text(f"turn {n}\n")
        git(root, "commit", "-q", "-am", "a turn that commits")
        (root / "src" / "d0002" / "f000.py").write_text("edited in the turn\n")
        turn = measure(root, base, saved, args.runs, args.python)
        report("after a turn", turn, len(guard.compare(base)))
    print(f"HEADLINE the whole `sparring guard check` command: {quiet['cli']:.1f} ms, "
          f"{quiet['cli'] / quiet['status']:.2f}x `git status` ({quiet['status']:.1f} ms) on a "
          f"quiet tree; {rewritten['cli'] / rewritten['status']:.2f}x after an index rewrite, "
          f"{turn['cli'] / turn['status']:.2f}x after a turn (goal: at most 2x)")
    print(f"RESULT files={args.files} ignored={args.ignored} runs={args.runs} "
          f"status_ms={quiet['status']:.1f} cli_ms={quiet['cli']:.1f} "
          f"cli_ratio={quiet['cli'] / quiet['status']:.2f} "
          f"cli_ratio_rewritten={rewritten['cli'] / rewritten['status']:.2f} "
          f"cli_ratio_turn={turn['cli'] / turn['status']:.2f} "
          f"check_ms={quiet['check']:.1f} check_ratio={quiet['check'] / quiet['status']:.2f} "
          f"snapshot_ms={snap:.1f} snapshot_again_ms={again:.1f} setup_s={setup:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
