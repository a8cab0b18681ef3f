#!/usr/bin/env python3
"""The calls a debate makes every round, in every workflow (figures printed; not a test).

Whole-process wall time of each call, run as the skills' launcher runs it
(`venv/bin/python -I -c ENTRY ARGS`, ENTRY installer/layout.py's, in a runtime
`install.py --runtime-only` makes in a temporary folder: a non-editable install), against
the same interpreter's `python -I -c pass`; medians over N rounds measured in one run,
interleaved, budget <= 5.0x:

- `status SESSION` of an arch-debate whose Codex round ended,
- `wait SESSION` and `poll SESSION` of that arch-debate (they add where the debate stands),
- `debate status DIR` after three Codex rounds,
- `discuss status SESSION` after two Codex rounds,
- `wait SESSION` of that deep-discussion (it adds where the discussion stands),
- and `wait` of a finished think-about round.

Each figure is printed beside what the call answered (its verb, ok, and the status it
reports). Beside them, the floor of a command line built on click (one path: no second
parser): a click group that only prints its version, and `sparring --version`, which loads
the command line and runs no verb. Then what the imports sparring leaves to where they
are used would cost every one of these calls, each against the same interpreter's start:
click alone (what every call loads first), PyYAML, psutil, jinja2, and every verb's module
at once.

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

GOAL_RATIO = 5.0
# What a call would load if it were not left to where it is used (the comments beside those
# imports quote these figures), each timed beside `import click`, which every call loads.
LEFT_OUT = {
    "PyYAML (yamltext.py)": "yaml",
    "psutil (process/identity.py)": "psutil",
    "jinja2 (templates.py)": "jinja2.meta",
    "every verb's module (cli/main.py)": ", ".join(
        f"sparring.commands.{m}" for m in ("accept", "doctor", "finalize", "guard", "init",
                                           "poll", "render", "report", "revert", "seal",
                                           "snapshot", "start", "status", "stop",
                                           "verdict")),
}


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


def answered(run: Sparring, argv: list[str]) -> str:
    """What the call printed, in brief: its verb, ok, and the status it reports."""
    done = subprocess.run([*run.argv, *argv], cwd=run.repo, env=run.env, capture_output=True,
                          text=True, check=False)
    out = json.loads(done.stdout)
    own = out.get("debate") or out.get("discussion") or {}
    status = out.get("status") or out.get("step") or own.get("step") or ""
    return f"{out['verb']}: ok={str(out['ok']).lower()}" + (f", {status}" if status else "")


def imports(python: Path, cwd: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    """Seconds each of LEFT_OUT adds to `import click`, and click's own beyond `pass`."""
    commands: dict[str, Callable[[], float]] = {
        "pass": lambda: wall([str(python), "-I", "-c", "pass"], cwd, env),
        "click": lambda: wall([str(python), "-I", "-c", "import click"], cwd, env)}
    for name, module in LEFT_OUT.items():
        commands[name] = (lambda module=module: wall(
            [str(python), "-I", "-c", f"import click, {module}"], cwd, env))
    found = medians(commands, runs)
    base = found.pop("click")
    return {"click": base - found["pass"], **{name: seconds - base for name, seconds
                                              in found.items() if name != "pass"}}


# A click group that does nothing but print its version: what a command line built on click
# costs before any code of its own; and sparring's own command line, no verb run.
CLICK_ALONE = ("import click\n@click.group()\n@click.version_option('1')\n"
               "def cli() -> None: ...\ncli(['--version'])")


def floor(python: Path, argv: list[str]) -> dict[str, list[str]]:
    return {"a click group alone, --version": [str(python), "-I", "-c", CLICK_ALONE],
            "sparring --version (no verb)": [*argv, "--version"]}


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
        said = {name: answered(run, argv) for name, argv in calls.items()}
        commands: dict[str, Callable[[], float]] = {
            "python": lambda: wall([str(python), "-I", "-c", "pass"], run.repo, env)}
        for name, argv in calls.items():
            commands[name] = (lambda argv=argv: wall([*run.argv, *argv], run.repo, env))
        for name, argv in floor(python, run.argv).items():
            commands[name] = (lambda argv=argv: wall(argv, run.repo, env))
        found = medians(commands, args.runs)
        left_out = imports(python, run.repo, env, args.runs)
    where = f"--python {args.python}" if args.python else "a runtime made by install.py"
    bare = found.pop("python")
    least = {name: found.pop(name) for name in floor(python, run.argv)}
    print(f"interpreter: {where}; medians of {args.runs} rounds, interleaved")
    print(f"{'python -I -c pass':40} {ms(bare)}")
    print("the floor of one click command line, what any call of it pays before its verb:")
    for name, seconds in least.items():
        print(f"  {name:38} {ms(seconds):>9}  {seconds / bare:.2f}x python")
    for name, seconds in found.items():
        print(f"{name:40} {ms(seconds):>9}  {seconds / bare:.2f}x python (budget <= "
              f"{GOAL_RATIO}x)  answered {said[name]}")
    print("what each import would add to every call (against `import click`; click itself "
          "against `pass`):")
    for name, seconds in left_out.items():
        print(f"  {name:38} {ms(seconds):>9}  {seconds / bare:.2f}x python")
    print("RESULT python_ms=" + f"{bare * 1000:.1f} " + " ".join(
        f"{name.split(' (')[0].replace(' ', '_')}[{name.split('(')[1].rstrip(')')}]"
        f"={seconds / bare:.2f}x".replace(" ", "_") for name, seconds in found.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
