#!/usr/bin/env python3
"""What confining file arguments costs (figures printed; not a timed test).

Every file an argument names goes through paths.py: placed inside the project, every folder
on the way opened without following a link, the file looked at (lstat), opened, checked on
its descriptor (fstat), read in bounded chunks, checked again, decoded as UTF-8. Before, a
verb did `Path.read_bytes()` and a lenient decode. This measures, in one process, interleaved:

1. reading a hand-in from `.sparring/inbox/` of a project six folders deep, through paths.py
   and the plain way, for 1 KiB to 4 MiB files (medians of --runs);
2. writing a new 10 KiB report file through paths.py and the plain way, and replacing one
   (paths.py's atomic replace against the plain temp-file-and-rename);
3. to put both in proportion, one whole verb that reads a file and writes one
   (`python -m sparring render reask --var-file … --out …` with this interpreter, medians of
   --verbs runs; the skills' launcher runs `-I -c ENTRY` in its runtime instead, a little
   faster to start: the proportion is what this shows, not the verb's own time).

Run: .venv/bin/python bench/paths_bench.py [--runs 200] [--verbs 15]
     (the environment `python3 tests/run.py` makes: the verb needs the package's dependencies)
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from sparring import paths  # noqa: E402  (after the path: the package may not be installed)

SIZES = (1 << 10, 64 << 10, 1 << 20, 4 << 20)


def median_us(call: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1e6


def project(base: Path) -> Path:
    root = base.joinpath("home", "user", "src", "team", "service", "app")
    (root / ".git").mkdir(parents=True)
    (root / ".sparring" / "inbox").mkdir(parents=True)
    return root


def reads(root: Path, runs: int) -> list[tuple[str, float, float]]:
    rows = []
    for size in SIZES:
        path = root / ".sparring" / "inbox" / f"round-{size}.md"
        path.write_bytes(b"SQLite in WAL mode, because: " * (size // 29) + b"x" * (size % 29))

        def confined(path: Path = path) -> str:
            return paths.text_of(paths.read(path, root, "--file").data, str(path))

        def plain(path: Path = path) -> str:
            return path.read_bytes().decode("utf-8", errors="replace")

        confined_us = plain_us = 0.0
        for _ in range(3):  # interleaved, so a busy moment hits both
            confined_us += median_us(confined, runs) / 3
            plain_us += median_us(plain, runs) / 3
        rows.append((f"read {size // 1024:,} KiB", confined_us, plain_us))
    return rows


def writes(root: Path, runs: int) -> list[tuple[str, float, float]]:
    text = "# Decision record\n\n" + "A line of the report.\n" * 480  # about 10 KiB
    folder = root / "docs" / "decisions"
    folder.mkdir(parents=True)
    counter = iter(range(10**9))

    def confined_new() -> None:
        paths.write(folder / f"d-{next(counter)}.md", text, root, "the report")

    def plain_new() -> None:
        (folder / f"p-{next(counter)}.md").write_text(text, encoding="utf-8")

    target = folder / "report.md"
    target.write_text(text)

    def confined_replace() -> None:
        paths.write(target, text, root, "the report", replace=True)

    def plain_replace() -> None:  # what the runner did before: temp file, fsync, rename
        tmp = target.with_name(f".{target.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)

    return [("write a new 10 KiB file", median_us(confined_new, runs), median_us(plain_new, runs)),
            ("replace it atomically", median_us(confined_replace, runs // 4),
             median_us(plain_replace, runs // 4))]


def verb_ms(root: Path, runs: int) -> float:
    problems = root / ".sparring" / "inbox" / "problems.md"
    problems.write_text("X-1 has no evidence.\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
    times = []
    for n in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sparring", "render", "reask", "--var-file",
                        f"PROBLEMS={problems}", "--out", str(root / ".sparring" / "inbox" /
                                                             f"reask-{n}.md")],
                       cwd=root, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--verbs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp))
        rows = reads(root, args.runs) + writes(root, args.runs)
        verb = verb_ms(root, args.verbs)
    print(f"{'':28} {'paths.py':>10} {'plain':>10} {'added':>10}")
    for what, confined, plain in rows:
        print(f"{what:28} {confined:8.1f}us {plain:8.1f}us {confined - plain:+8.1f}us")
    typical = next(confined - plain for what, confined, plain in rows if what == "read 64 KiB")
    print(f"\none verb that reads a hand-in and writes a file "
          f"(`render reask --var-file … --out …`): {verb:.1f} ms (median of {args.verbs})")
    print(f"confinement adds {typical:.0f} us to a 64 KiB read: "
          f"{typical / (verb * 1000) * 100:.2f}% of that verb")


if __name__ == "__main__":
    main()
