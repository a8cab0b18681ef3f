"""Benchmark: the whole `sparring guard check` command against `git status` on a large repository.

Builds, in a temporary directory, a repository of --files tracked files and --ignored
ignored ones (plus a few dirty and untracked files), and a sparring runtime as the skills'
launcher runs it (`venv/bin/python -I -c ENTRY`, ENTRY installer/layout.py's, in a runtime
`install.py --runtime-only` makes: a non-editable install; --python names another interpreter
with sparring installed). Then, in four situations, it measures in one run, interleaved, the
median wall time of

- `git status --porcelain --untracked-files=all --ignored` (the reference), run with no
  optional locks as the guard's own git runs, so that it never refreshes the index and every
  timed run sees the same state,
- `sparring guard check --baseline FILE` as a subprocess: interpreter start, imports,
  loading the baseline, the check and the JSON output (the figure the budget is about).

The four situations, each against a baseline taken (`guard snapshot`, as a user runs it)
just before it on a tree at rest (past git's and the guard's racy window, the index refreshed):

- quiet: nothing changed;
- index stat rewrite: every tracked file touched (same bytes, new mtime), then
  `git update-index --really-refresh`, which rewrites the index's stat data of every entry;
- every file touched: every tracked, ignored, untracked and dirty file touched, the index
  left as it was (git status must hash every tracked file, the guard every file it watches);
- a turn that committed: ten files edited and committed (`git commit -a` refreshes the
  index as well).

Before timing each, the answer of the timed command is checked: ok, and the changes
expected (none, none, none, the ten committed files); it is printed beside the figure.
The budget: the whole command at most 2x git status in all four. It also times the
snapshot, first into an empty store (copying every dirty, untracked and small ignored
file), again with the previous baseline (what the runner does for every turn after the
first), and again without it into the same store (a new session's first snapshot: the
project's store has the copies).

    python3 bench/guard_bench.py                   # 50,000 + 5,000 files
    python3 bench/guard_bench.py --files 2000 --ignored 200 --runs 5
    python3 bench/guard_bench.py --python ~/.local/share/sparring/venv/bin/python
    python3 bench/guard_bench.py --compare OLD/venv/bin/python   # an older runtime, timed too

The last line is machine-readable: `RESULT key=value ...`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner_bench import ENTRY, runtime_python  # the benchmarks' shared helpers

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
STATUS = ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=all",
          "--ignored"]
BASELINE = ".sparring/inbox/baseline.json"  # in the project, as the verbs require
# Past this, neither git nor the guard treats a file's stat data as racy (guard.RACY_MARGIN_NS).
QUIET_S = 2.1
GOAL_RATIO = 2.0
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


def worktree_files(root: Path) -> list[Path]:
    """Every file of the tree but git's and sparring's own folders."""
    found = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in (".git", ".sparring")]
        found += [Path(folder, name) for name in names]
    return found


def touch(paths: list[Path]) -> None:
    """New stat data, same bytes: an mtime in the past, so git never finds it racy."""
    when = time.time() - 30
    for path in paths:
        os.utime(path, (when, when))


def settle(root: Path) -> None:
    """A tree at rest: past the racy window, the index's stat data refreshed (a plain
    `git status` writes it when it found entries stale or racy)."""
    time.sleep(QUIET_S)
    git(root, "status", "--porcelain")


def medians_ms(runs: int, contenders: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Median wall time of each contender; runs interleave, so load drift hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for call in contenders.values():
        call()  # warm the caches once; every contender gets the same treatment
    order = list(contenders)
    for _ in range(runs):
        random.shuffle(order)  # no contender always runs right after git status
        for name in order:
            call = contenders[name]
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


class Sparring:
    """`python -I -c ENTRY ARGS` in the repository, as the skills' launcher runs it."""

    def __init__(self, python: Path, root: Path, home: Path) -> None:
        self.python, self.root = str(python), root
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SPARRING_", "XDG_")) and k != "PYTHONDONTWRITEBYTECODE"}
        self.env["HOME"] = str(home)

    def argv(self, *args: str) -> list[str]:
        return [self.python, "-I", "-c", ENTRY, *args]

    def run(self, argv: list[str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(argv, cwd=self.root, env=self.env, capture_output=True,
                              check=False)

    def snapshot(self) -> float:
        start = time.perf_counter()
        done = self.run(self.argv("guard", "snapshot", "--out", BASELINE))
        took = (time.perf_counter() - start) * 1000
        if done.returncode != 0:
            sys.exit(f"guard snapshot failed:\n{done.stdout!r}\n{done.stderr!r}")
        return took

    def checked(self, expected: set[str]) -> list[str]:
        """The timed command's answer, as expected."""
        answer = json.loads(self.run(self.argv("guard", "check", "--baseline", BASELINE)).stdout)
        changed = {item["path"] for item in answer.get("changed", [])}
        if not answer.get("ok") or changed != expected:
            sys.exit(f"unexpected answer: {answer}\nexpected the changes {sorted(expected)}")
        return sorted(changed)


def measure(run: Sparring, runs: int, other: Sparring | None) -> dict[str, float]:
    cli = run.argv("guard", "check", "--baseline", BASELINE)
    contenders: dict[str, Callable[[], object]] = {
        "status": lambda: subprocess.run(STATUS, cwd=run.root, check=True, capture_output=True),
        "cli": lambda: run.run(cli),
    }
    if other is not None:
        old = other.argv("guard", "check", "--baseline", BASELINE)
        contenders["other"] = lambda: other.run(old)
    return medians_ms(runs, contenders)


def case(label: str, run: Sparring, runs: int, change: Callable[[], set[str]],
         other: Sparring | None) -> dict[str, float]:
    """A baseline taken on a tree at rest, `change` applied, the answer checked, then timed."""
    settle(run.root)
    run.snapshot()
    expected = change()
    found = run.checked(expected)
    if other is not None and other.checked(expected) != found:
        sys.exit("--compare's runtime answers differently")
    times = measure(run, runs, other)
    also = "" if other is None else (f" | --compare {times['other']:7.1f} ms "
                                     f"{times['other'] / times['status']:5.2f}x")
    print(f"{label:<22} git status {times['status']:7.1f} ms | sparring guard check "
          f"{times['cli']:7.1f} ms {times['cli'] / times['status']:5.2f}x{also} | changed "
          f"{len(found)} (answered ok, the changes expected)", flush=True)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=50_000, help="tracked files")
    parser.add_argument("--ignored", type=int, default=5_000, help="ignored files")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per measurement (>=5)")
    parser.add_argument("--python", type=Path, help="an interpreter with sparring installed "
                        "(e.g. ~/.local/share/sparring/venv/bin/python); default: a runtime "
                        "install.py makes from this checkout, in a temporary folder")
    parser.add_argument("--compare", type=Path, help="another runtime's interpreter (an "
                        "older sparring), timed in the same runs on the same baseline")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="guard-bench-") as tmp:
        base = Path(tmp)
        python = args.python or runtime_python(base)
        root = base / "repo"
        (root / BASELINE).parent.mkdir(parents=True)
        start = time.perf_counter()
        build(root, args.files, args.ignored)
        setup = time.perf_counter() - start
        run = Sparring(python, root, base)
        other = Sparring(args.compare, root, base) if args.compare else None
        settle(root)
        first = run.snapshot()
        copied = sum(1 for _ in (root / f"{BASELINE}.store").iterdir())
        again = run.snapshot()
        (root / BASELINE).unlink()  # a new session's first snapshot: the store has the copies
        fresh = run.snapshot()
        where = f"--python {args.python}" if args.python else "a runtime made by install.py"
        print(f"command: {python} -I -c ENTRY guard check ({where})")
        print(f"repository: {args.files} tracked, {args.ignored} ignored, setup {setup:.1f} s; "
              f"snapshot {first:.1f} ms the first time ({copied} files in its store), "
              f"{again:.1f} ms again with the previous baseline, {fresh:.1f} ms without it "
              f"into the same store; medians of {args.runs} runs, in shuffled order")
        tracked = sorted((root / "src").rglob("*.py"))
        every = worktree_files(root)
        committed = [root / "src" / "d0001" / f"f{n:03d}.py" for n in range(10, 20)]

        def rewrite_index() -> set[str]:
            touch(tracked)
            git(root, "update-index", "-q", "--really-refresh")
            return set()

        def touch_every_file() -> set[str]:
            touch(every)
            return set()

        def commit() -> set[str]:
            for n, path in enumerate(committed):
                path.write_text(f"turn {n}\n")
            git(root, "commit", "-q", "-m", "a turn that commits", "--", *map(str, committed))
            return {p.relative_to(root).as_posix() for p in committed}

        found = {
            "quiet": case("quiet tree", run, args.runs, set, other),
            "rewritten": case("index stat rewrite", run, args.runs, rewrite_index, other),
            "touched": case("every file touched", run, args.runs, touch_every_file, other),
            "committed": case("a turn committed 10", run, args.runs, commit, other),
        }
    ratios = {name: t["cli"] / t["status"] for name, t in found.items()}
    print("HEADLINE the whole `sparring guard check` command vs `git status`: " + ", ".join(
        f"{name} {ratio:.2f}x" for name, ratio in ratios.items())
        + f" (budget: at most {GOAL_RATIO}x in all four)")
    print(f"RESULT files={args.files} ignored={args.ignored} runs={args.runs} "
          + " ".join(f"status_ms_{n}={t['status']:.1f} cli_ms_{n}={t['cli']:.1f} "
                     f"ratio_{n}={ratios[n]:.2f}" for n, t in found.items())
          + f" snapshot_ms={first:.1f} snapshot_again_ms={again:.1f} "
          f"snapshot_same_store_ms={fresh:.1f} setup_s={setup:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
