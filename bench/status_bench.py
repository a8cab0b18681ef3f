#!/usr/bin/env python3
"""The calls a debate makes every round, in every workflow (figures printed; not a test).

Whole-process wall time of each call, run as the skills' launcher runs it
(`venv/bin/python -I -c ENTRY ARGS`, ENTRY installer/layout.py's, in a runtime
`install.py --runtime-only` makes in a temporary folder: a non-editable install), against
the same interpreter's `python -I -c pass`; medians over N rounds measured in one run,
interleaved, goal <= 3.0x (the budget that keeps one implementation of each behaviour):

- `status SESSION` of an arch-debate whose Codex round ended,
- `wait SESSION` and `poll SESSION` of that arch-debate (they add where the debate stands),
- `debate status DIR` after three Codex rounds,
- `discuss status SESSION` after two Codex rounds,
- `wait SESSION` of that deep-discussion (it adds where the discussion stands),
- and, for comparison, `wait` of a finished think-about round.

Before timing, each call's answer is checked against the full command line's (cli/main.py,
run by the same interpreter on the same state): the same bytes, so the entry never answers
differently from the CLI.

Run: python3 bench/status_bench.py [--runs 30] [--python PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner_bench import (  # the benchmarks' shared helpers
    Sparring,
    add_python_option,
    finished_round,
    medians,
    ms,
    sparring_in,
    wall,
)

GOAL_RATIO = 3.0
FULL_CLI = "import sys; from sparring.cli.main import main; sys.exit(main(sys.argv[1:]))"


def arch_debate(run: Sparring, rounds: int) -> str:
    """An arch-debate in `debate/` with `rounds` Codex rounds, the last one ended."""
    sid = run("debate", "new", "debate", "Redis or SQLite for sessions?")["session"]
    claude = run.repo / ".sparring" / "inbox" / "round.md"
    for n in range(rounds):
        claude.write_text(f"Round {2 * n}: SQLite is enough for 200 writes/s, point {n}.\n")
        run("debate", "round", "debate", "--file", str(claude))
        shown = run("wait", sid, "--timeout", "60")
        assert shown["status"] == "completed" and shown["debate"], shown
    return str(sid)


def deep_discussion(run: Sparring, rounds: int) -> str:
    """A deep-discussion with `rounds` Codex rounds, the last one ended."""
    sid = run("discuss", "new", "--args", "high")["session"]
    inbox = run.repo / ".sparring" / "inbox"
    (inbox / "frame.yaml").write_text(
        "TOPIC: Event sourcing for billing?\nFRAMING: an audit trail is needed\n"
        "CLAUDE_VIEW: an append-only audit table is enough\n")
    run("discuss", "frame", sid, "--file", str(inbox / "frame.yaml"))
    run("wait", sid, "--timeout", "60")
    for n in range(1, rounds):
        (inbox / "round.yaml").write_text(f"response: point {n} stands\n")
        run("discuss", "round", sid, "--file", str(inbox / "round.yaml"))
        shown = run("wait", sid, "--timeout", "60")
        assert shown["status"] == "completed" and shown["discussion"], shown
    return str(sid)


def same_as_the_cli(run: Sparring, python: Path, argv: list[str]) -> None:
    """The launcher's answer is the full command line's, byte for byte."""
    def printed(command: list[str]) -> str:
        done = subprocess.run(command, cwd=run.repo, env=run.env, capture_output=True,
                              text=True, check=False)
        return done.stdout

    fast = printed([*run.argv, *argv])
    full = printed([str(python), "-I", "-c", FULL_CLI, *argv])
    if fast != full:
        sys.exit(f"{' '.join(argv)}: the launcher's answer differs from the CLI's:\n"
                 f"{fast}\n---\n{full}")
    assert json.loads(fast)["ok"] is True, fast


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    add_python_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sparring-status-bench-") as tmp:
        base = Path(tmp)
        run = sparring_in(base, args.python)
        python, env = run.python, run.env
        think = finished_round(run, base)
        debate = arch_debate(run, 3)
        talk = deep_discussion(run, 2)
        calls = {
            "status SESSION (arch-debate)": ["status", debate],
            "wait SESSION (arch-debate, ended)": ["wait", debate],
            "poll SESSION (arch-debate, ended)": ["poll", debate],
            "debate status DIR (3 rounds)": ["debate", "status", "debate"],
            "discuss status SESSION (2 rounds)": ["discuss", "status", talk],
            "wait SESSION (deep-discussion, ended)": ["wait", talk],
            "wait SESSION (think-about, ended)": ["wait", think],
        }
        for argv in calls.values():
            same_as_the_cli(run, python, argv)
        commands: dict[str, Callable[[], float]] = {
            "python": lambda: wall([str(python), "-I", "-c", "pass"], run.repo, env)}
        for name, argv in calls.items():
            commands[name] = (lambda argv=argv: wall([*run.argv, *argv], run.repo, env))
        found = medians(commands, args.runs)
    where = f"--python {args.python}" if args.python else "a runtime made by install.py"
    bare = found.pop("python")
    print(f"interpreter: {where}; medians of {args.runs} rounds, interleaved; every answer "
          "checked equal to the full CLI's")
    print(f"{'python -I -c pass':40} {ms(bare)}")
    for name, seconds in found.items():
        print(f"{name:40} {ms(seconds):>9}  {seconds / bare:.2f}x python (goal <= "
              f"{GOAL_RATIO}x)")
    print("RESULT python_ms=" + f"{bare * 1000:.1f} " + " ".join(
        f"{name.split(' (')[0].replace(' ', '_')}[{name.split('(')[1].rstrip(')')}]"
        f"={seconds / bare:.2f}x".replace(" ", "_") for name, seconds in found.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
