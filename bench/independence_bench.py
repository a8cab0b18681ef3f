#!/usr/bin/env python3
"""What independence by mechanism costs: the check per round, and a debate's set-up before
and after (printed; not a test).

1. **The check** (turn/independence.py), which `seal` runs once on Codex's round one: timed
   in process on a round of `--commands` commands, each printing `--output-kb` KB, in three
   cases: no output shares a run of 8 words with the analysis (the common case); one output
   prints the project file the analysis quotes (the runner finds it in the file the command
   names, first); one output holds a copy found outside the project (the runner reads the
   whole project, `--files` files, before it calls it a copy).
2. **The set-up's wall time**, from `start` to Codex's answer shown to Claude, in the flow each
   version's skills prescribe, with the fake codex's round one lasting `--codex` seconds and
   Claude's writing of its analysis modelled as `--claude` seconds:
   - before (`--before REV`, a worktree of a commit before this work): Claude writes while
     Codex works, then `wait --seal`: about max(codex, claude);
   - after (this checkout): `wait` until round one has ended, then Claude writes, then
     `wait --seal`: about codex + claude.
   The difference is what having no window at all costs a debate: Claude's writing time,
   once, in round one.

Run: .venv/bin/python bench/independence_bench.py --before 1757044 [--runs 3]
     (.venv/: the environment `python3 tests/run.py` makes; without --before, part 2 runs the
     after flow only)
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FAKE_BIN = ROOT / "tests" / "support" / "bin"
ANSWER = {"position": "SQLite is enough.", "choice": None, "confidence": None, "points": [
    {"id": "X-1", "stance": "agree", "claim": "Expiry needs a sweep job", "evidence": [],
     "note": None, "would_change_my_mind": None}],
    "convergence": {"state": "continue", "reason": "r"}, "proposed_summary": None,
    "approve_summary": None, "summary_objections": []}
CODE = "def expire(rows): return [row for row in rows if row.expires_at > now()]"
ANALYSIS = (f"# Analysis\n\n- C-1: expiry needs a sweep job; today it runs `{CODE}` on every "
            "read, which the nightly batch window cannot absorb at peak load.\n" + "".join(
                f"- C-{n}: point {n} of the analysis, with its own reasoning about the trade-off "
                f"number {n} and what would change my mind about it.\n" for n in range(2, 40)))


# -- 1. the check ------------------------------------------------------------------------------

def check_cost(base: Path, commands: int, output_kb: int, files: int, runs: int
               ) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "scripts"))
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    from sparring.store.sessions import Session
    from sparring.turn import independence

    project = base / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "expiry.py").write_text(f"import time\n\n{CODE}\n")
    for n in range(files):
        folder = project / "lib" / f"m{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.py").write_text(f"# module {n}\n" + "x = 1\n" * 200)
    env = {**os.environ, "HOME": str(base / "home")}
    made = cli(ROOT / "scripts", project, env, "init", "--skill", "think-about")
    session = Session(made["session_dir"])  # a real session: its outputs lie where it says
    Path(session.turn_dir(1)).mkdir(parents=True)
    Path(session.turn_path(1, "prompt.txt")).write_text("Should sessions expire?\n")
    data = {**session.load(), "turns": [{"n": 1, "round": 1, "guard": None,
                                         "created_at": time.time()}]}  # after the files
    filler = "\n".join(f"line {i} of ordinary output from a search of the code" for i in range(
        output_kb * 1024 // 50))
    cases = {"nothing shared": filler, "the quoted file printed": f"{filler}\n{CODE}",
             "a copy found outside": f"{filler}\n{ANALYSIS}"}
    timings = {}
    for name, last in cases.items():
        outputs = [filler] * (commands - 1) + [last]
        named = ["cat src/expiry.py" if "quoted" in name else f"rg -n x{i}"
                 for i in range(commands)]
        events = Path(session.output(1, "events.jsonl"))
        events.parent.mkdir(parents=True, exist_ok=True)
        events.write_text("".join(json.dumps({"type": "item.completed", "item": {
            "id": f"item_{i}", "type": "command_execution", "command": named[i],
            "aggregated_output": out, "exit_code": 0, "status": "completed"}}) + "\n"
            for i, out in enumerate(outputs)))
        seen = []
        for _ in range(runs):
            began = time.perf_counter()
            found = independence.check(session, data, ANALYSIS)
            seen.append(time.perf_counter() - began)
        assert bool(found["seen"]) == ("outside" in name), (name, found["seen"])
        timings[name] = statistics.median(seen) * 1000
    return timings


# -- 2. the set-up, before and after -----------------------------------------------------------

def cli(scripts: Path, cwd: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, "
                           f"{str(scripts)!r}); from sparring.__main__ import main; "
                           "sys.exit(main())", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def setup_time(scripts: Path, base: Path, codex_s: float, claude_s: float, window: bool
               ) -> float:
    """Seconds from `start` to Codex's answer shown, the flow of one version's skills."""
    project, home = base / "project", base / "home"
    project.mkdir(parents=True)
    home.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    env = {**{k: v for k, v in os.environ.items()
              if not k.startswith(("SPARRING_", "FAKE_CODEX_", "XDG_"))},
           "HOME": str(home), "XDG_STATE_HOME": str(home / "state"),
           "CODEX_HOME": str(home / ".codex"), "PATH": f"{FAKE_BIN}{os.pathsep}"
           f"{os.environ['PATH']}", "FAKE_CODEX_PYTHON": sys.executable,
           "FAKE_CODEX_MODE": "slow", "FAKE_CODEX_DELAY": str(codex_s),
           "FAKE_CODEX_REPLY": json.dumps(ANSWER), "SPARRING_STARTSECS": "0.2"}
    sid = cli(scripts, project, env, "init", "--skill", "think-about")["session"]
    inbox = project / ".sparring" / "inbox"
    began = time.perf_counter()
    started = cli(scripts, project, env, "start", sid, "--template", "think-about/round1",
                  "--var", "QUESTION=Should sessions expire?")
    assert started.get("ok"), started
    if not window:  # after: round one ends first, its answer withheld
        while cli(scripts, project, env, "wait", sid)["status"] == "running":
            pass
    time.sleep(claude_s)  # Claude writes its analysis
    (inbox / "analysis.md").write_text(ANALYSIS)
    shown = cli(scripts, project, env, "wait", sid, "--seal", str(inbox / "analysis.md"))
    while shown.get("status") == "running":
        shown = cli(scripts, project, env, "wait", sid)
    assert shown.get("review"), shown
    return time.perf_counter() - began


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(where),
                    rev], check=True)
    return where / "scripts"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a commit from before this work, for part 2")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--codex", type=float, default=4.0, help="seconds of Codex's round one")
    parser.add_argument("--claude", type=float, default=3.0,
                        help="seconds Claude takes to write its analysis")
    parser.add_argument("--commands", type=int, default=20)
    parser.add_argument("--output-kb", type=int, default=8)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        costs = check_cost(Path(tmp) / "check", args.commands, args.output_kb, args.files,
                           max(args.runs, 5))
    print(f"1. the check, once per debate (at the seal): {args.commands} commands of "
          f"{args.output_kb} KB output, an analysis of {len(ANALYSIS.split())} words, "
          f"a project of {args.files} files")
    for name, ms in costs.items():
        print(f"   {name:<26} {ms:8.1f} ms")
    flows = [("after", ROOT / "scripts", False)]
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            flows.insert(0, ("before", worktree(args.before, Path(tmp) / "before"), True))
        try:
            timed = {name: [] for name, _, _ in flows}
            for n in range(args.runs):
                for name, scripts, window in flows:  # interleaved
                    timed[name].append(setup_time(scripts, Path(tmp) / f"{name}-{n}",
                                                  args.codex, args.claude, window))
        finally:
            if args.before:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(Path(tmp) / "before")], check=False)
    print(f"2. set-up, start -> Codex's answer shown: Codex's round one {args.codex:g} s, "
          f"Claude writes its analysis in {args.claude:g} s (medians of {args.runs})")
    medians = {name: statistics.median(values) for name, values in timed.items()}
    for name, value in medians.items():
        flow = ("Claude writes while Codex works" if name == "before"
                else "Claude writes once round one has ended")
        print(f"   {name:<7} {value:6.2f} s  ({flow})")
    if "before" in medians:
        print(f"   no window costs {medians['after'] - medians['before']:+.2f} s a debate")
    print("RESULT " + " ".join(f"check_{k.replace(' ', '_')}_ms={v:.1f}" for k, v in
                                costs.items()) + " " + " ".join(
        f"setup_{k}_s={v:.2f}" for k, v in medians.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
