#!/usr/bin/env python3
"""Runner benchmarks (figures printed; not a timed test).

1. Whole-process wall time of `poll` and `wait` on a finished think-about round (sealed,
   Codex's structured answer revealed), run as the skills' launcher runs them:
   `venv/bin/python -I -c ENTRY ARGS` (ENTRY: installer/layout.py's) in a runtime that
   `install.py --runtime-only` makes in a temporary folder. Against `python -I -c pass` of
   the same interpreter, medians over N rounds measured in one run, interleaved; budget <=
   5.0x for both. Prints the modules poll imports beyond Python's own start-up.
   An arch-debate's (or a deep-discussion's) `wait` also prints where the workflow stands
   (bench/status_bench.py measures every such call); it is printed for comparison, with
   `status SESSION`, `debate status DIR`, and `start` (a new session each time, start
   window 0: the command until the runner has launched codex).
2. Side by side, when --node-runner names codex_skill's `codex-runner.js` (kept outside
   this repository): its `poll` on its own finished session, same fake codex.
3. Latency from the end of a turn (codex's last event reaching disk) to `sparring wait`
   returning (budget <= 0.5 s), over N turns of the fake codex.
4. (Linux) What the runner costs while Codex works: its CPU time per second of a turn of
   the fake codex that lasts --busy seconds, with 300 idle processes besides it on the
   machine (a desktop runs hundreds): the runner notes the turn's processes twice a second.
   And what ending a turn's processes costs in CPU (process.end, as the runner calls it when
   a turn ends and again as it exits), in the runtime's interpreter with the same 300 idle
   processes: judging every process of the machine, and passing over those that started
   before the runner (tree.Scope.since, Linux) as the runner does.

Run: python3 bench/runner_bench.py [--runs 30] [--turns 10] [--node-runner PATH]
     [--python PATH]   (an interpreter that has sparring installed, instead of a runtime)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from sparring.installer.layout import ENTRY  # noqa: E402  (what the launcher runs)

FAKE_BIN = ROOT / "tests" / "support" / "bin"
GOAL_RATIO = 5.0
ANSWER = {"position": "SQLite is enough.", "choice": None, "confidence": None,
          "points": [{"id": "X-1", "claim": "SQLite handles our 200 writes/s", "stance": "agree",
                      "evidence": [{"cite": "api/session/store.py:41", "quote": None}],
                      "note": None, "would_change_my_mind": None},
                     {"id": "X-2", "claim": "Redis adds an operational dependency",
                      "stance": "agree",
                      "evidence": [{"cite": "deploy/api.yaml:12", "quote": None}],
                      "note": None, "would_change_my_mind": None}],
          "convergence": {"state": "continue", "reason": "X-2 is open"},
          "proposed_summary": None, "approve_summary": None, "summary_objections": []}


def runtime_python(base: Path) -> Path:
    """The runtime's interpreter, as install.py makes it for the skills' launcher."""
    env = {**os.environ, "XDG_DATA_HOME": str(base / "data"), "HOME": str(base)}
    done = subprocess.run([sys.executable, str(ROOT / "install.py"), "--runtime-only"], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"install.py --runtime-only failed:\n{done.stdout}{done.stderr}")
    return base / "data" / "sparring" / "venv" / "bin" / "python"


def environment(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARRING_", "FAKE_CODEX_"))}
    env.update(PATH=f"{FAKE_BIN}{os.pathsep}{env['PATH']}", HOME=str(base),
               CODEX_HOME=str(base / ".codex"), SPARRING_STARTSECS="0.2")
    return env


def make_repo(base: Path, name: str) -> Path:
    repo = base / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q", repo], check=True)
    return repo


class Sparring:
    def __init__(self, python: Path, repo: Path, env: dict[str, str]) -> None:
        # As the launcher runs the runtime (scripts/launcher.sh): `python -I -c ENTRY ARGS`.
        self.python, self.repo, self.env = python, repo, env
        self.argv = [str(python), "-I", "-c", ENTRY]

    def __call__(self, *args: str, env: dict[str, str] | None = None,
                 check: bool = True) -> dict:
        done = subprocess.run([*self.argv, *args], cwd=self.repo, env=env or self.env,
                              capture_output=True, check=check)
        return dict(json.loads(done.stdout))


def add_python_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--python", type=Path,
                        help="use this interpreter (sparring installed) instead of a runtime")


def sparring_in(base: Path, python: Path | None) -> Sparring:
    """sparring on a new repository under `base`, as the launcher runs it: with `python`, or
    in a runtime install.py makes there."""
    return Sparring(python or runtime_python(base), make_repo(base, "repo"), environment(base))


def finished_round(run: Sparring, base: Path) -> str:
    """A think-about session whose round one has ended, sealed and revealed."""
    sid = run("init", "--skill", "think-about")["session"]
    answer = {**run.env, "FAKE_CODEX_REPLY": json.dumps(ANSWER)}
    run("start", sid, "--template", "think-about/round1", "--var", "QUESTION=Redis or SQLite?",
        env=answer)
    analysis = run.repo / ".sparring" / "inbox" / "analysis.md"  # where Claude writes it
    analysis.write_text("My own analysis: C-1 sessions need TTLs.\n")
    shown = run("wait", sid, "--seal", str(analysis), "--timeout", "60")
    assert shown["status"] == "completed" and shown["review"]["data"], shown
    return str(sid)


def finished_debate_round(run: Sparring, base: Path) -> str:
    """An arch-debate whose Codex round one has ended: its wait adds the debate's status."""
    sid = run("debate", "new", "debate", "Redis or SQLite?")["session"]
    claude = run.repo / ".sparring" / "inbox" / "round.md"
    claude.write_text("Round 0: SQLite is enough for 200 writes/s.\n")
    run("debate", "round", "debate", "--file", str(claude))
    shown = run("wait", sid, "--timeout", "60")
    assert shown["status"] == "completed" and shown["debate"], shown
    return str(sid)


def fresh_sessions(run: Sparring, count: int) -> list[str]:
    """Sessions with nothing started yet, one for each `start` to measure."""
    return [str(run("init", "--skill", "deep-discussion")["session"]) for _ in range(count)]


def node_session(runner: Path, repo: Path, env: dict[str, str]) -> str:
    """codex_skill's runner: its own think-about session, one finished round (its poll
    records the end and caches the answer, as it does for Claude)."""
    node = ["node", str(runner)]
    made = subprocess.run([*node, "init", "--skill-name", "think-about", "--working-dir",
                           str(repo)], env=env, capture_output=True, text=True, check=True)
    session = made.stdout.strip().removeprefix("CODEX_SESSION:")
    subprocess.run([*node, "start", session], input=b"Redis or SQLite?", env=env,
                   capture_output=True, check=True)
    for _ in range(200):
        polled = subprocess.run([*node, "poll", session], env=env, capture_output=True,
                                check=True)
        if json.loads(polled.stdout)["status"] != "running":
            return session
        time.sleep(0.05)
    sys.exit("codex-runner.js: its round did not finish")


def wall(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - began


def medians(commands: dict[str, Callable[[], float]], runs: int) -> dict[str, float]:
    """Median seconds of each command, run in turn (one of each per round) so that a
    change in the machine's load touches them all alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, call in commands.items():
            times[name].append(call())
    return {name: statistics.median(found) for name, found in times.items()}


def imported(python: Path, argv: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    """Modules `python -I -X importtime ARGV` imports beyond `python -I -c pass`."""
    def modules(args: list[str]) -> list[str]:
        done = subprocess.run([str(python), "-I", "-X", "importtime", *args], cwd=cwd, env=env,
                              capture_output=True, text=True, check=True)
        return [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()[1:]]

    bare = set(modules(["-c", "pass"]))
    return [m for m in modules(argv) if m not in bare]


def bench_wait_latency(run: Sparring, turns: int) -> list[float]:
    latencies = []
    for _ in range(turns):
        sid = run("init", "--skill", "deep-discussion")["session"]
        slow = {**run.env, "FAKE_CODEX_MODE": "slow", "FAKE_CODEX_DELAY": "1.5"}
        prompt = run.repo / "prompt.txt"
        prompt.write_text("q")
        run("start", sid, "--prompt-file", str(prompt), env=slow)
        done = run("wait", sid, "--timeout", "60", "--full")
        returned = time.time()
        assert done["status"] == "completed", done
        latencies.append(returned - Path(done["files"]["events"]).stat().st_mtime)
    return latencies


# The CPU of ending a turn of which nothing runs (a new mark each time), in milliseconds:
# median of 9, judging every process (no since), then as a runner started after them does.
END_CPU = """
import json, os, statistics, sys, time
from sparring import process
def cpu(since):
    spent = []
    for n in range(9):
        start = time.process_time()
        process.end(process.tree.Scope(mark=f"bench-{n}", since=since))
        spent.append(time.process_time() - start)
    return statistics.median(spent) * 1000
print(json.dumps([cpu(None), cpu(int(sys.argv[1]))]))
"""


def bench_runner_cpu(run: Sparring, busy: float) -> tuple[float, int, float, float] | None:
    """(The runner's CPU milliseconds per second of a running turn, the processes on the
    machine meanwhile, and the CPU milliseconds of ending a turn judging every process and
    passing over the older ones), from /proc (Linux; else None)."""
    if not os.path.isdir("/proc/self"):
        return None
    idle = [subprocess.Popen(["sleep", str(busy + 30)]) for _ in range(300)]
    try:
        since = max(_start_ticks(p.pid) for p in idle) + 1  # a runner started after them
        measured = subprocess.run([str(run.python), "-I", "-c", END_CPU, str(since)],
                                  capture_output=True, check=True, env=run.env)
        ending = json.loads(measured.stdout)
        sid = run("init", "--skill", "deep-discussion")["session"]
        slow = {**run.env, "FAKE_CODEX_MODE": "slow", "FAKE_CODEX_DELAY": str(busy)}
        prompt = run.repo / "prompt.txt"
        prompt.write_text("q")
        run("start", sid, "--prompt-file", str(prompt), env=slow)
        state = run.env.get("XDG_STATE_HOME") or os.path.join(run.env["HOME"], ".local", "state")
        record = next(Path(state, "sparring", "runs").glob("*.json"))
        runner = json.loads(record.read_text())["runner"]["pid"]
        time.sleep(1.0)  # past codex's start and the runner's first note
        first, start = _cpu_ticks(runner), time.monotonic()
        time.sleep(busy - 2.0)
        spent, took = _cpu_ticks(runner) - first, time.monotonic() - start
        processes = len(os.listdir("/proc"))
        done = run("wait", sid, "--timeout", "60")
        assert done["status"] == "completed", done
    finally:
        for proc in idle:
            proc.kill()
            proc.wait()
    return spent / os.sysconf("SC_CLK_TCK") / took * 1000, processes, ending[0], ending[1]


def _start_ticks(pid: int) -> int:
    """When `pid` started, in clock ticks since boot (/proc, as process/tree.py reads it)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--busy", type=float, default=12.0,
                        help="seconds of the turn whose runner's CPU is measured")
    parser.add_argument("--node-runner", type=Path,
                        help="codex_skill's codex-runner.js, outside this repository")
    add_python_option(parser)
    args = parser.parse_args()
    if args.node_runner and not shutil.which("node"):
        sys.exit("--node-runner needs node on PATH")
    with tempfile.TemporaryDirectory(prefix="sparring-runner-bench-") as tmp:
        base = Path(tmp)
        run = sparring_in(base, args.python)
        python, env = run.python, run.env
        sid = finished_round(run, base)
        debate_sid = finished_debate_round(run, base)
        unstarted = iter(fresh_sessions(run, args.runs))
        prompt = run.repo / "prompt.txt"  # a file argument must be inside the project
        prompt.write_text("Redis or SQLite?\n")
        at_once = {**env, "SPARRING_STARTSECS": "0"}
        commands: dict[str, Callable[[], float]] = {
            "python": lambda: wall([str(python), "-I", "-c", "pass"], run.repo, env),
            "poll": lambda: wall([*run.argv, "poll", sid], run.repo, env),
            "wait": lambda: wall([*run.argv, "wait", sid], run.repo, env),
            "debate wait": lambda: wall([*run.argv, "wait", debate_sid], run.repo, env),
            "status": lambda: wall([*run.argv, "status", sid], run.repo, env),
            "debate status": lambda: wall([*run.argv, "debate", "status", "debate"], run.repo,
                                          env),
            "start": lambda: wall([*run.argv, "start", next(unstarted), "--prompt-file",
                                   str(prompt)], run.repo, at_once),
        }
        if args.node_runner:
            node_repo = make_repo(base, "node-repo")
            node_sid = node_session(args.node_runner.resolve(), node_repo, env)
            commands["node poll"] = lambda: wall(
                ["node", str(args.node_runner.resolve()), "poll", node_sid], node_repo, env)
        found = medians(commands, args.runs)
        modules = imported(python, ["-c", ENTRY, "poll", sid], run.repo, env)
        latencies = bench_wait_latency(run, args.turns)
        runner_cpu = bench_runner_cpu(run, args.busy)
    report(args, found, modules, latencies, runner_cpu)
    return 0


def report(args: argparse.Namespace, found: dict[str, float], modules: list[str],
           latencies: list[float], runner_cpu: tuple[float, int, float, float] | None) -> None:
    where = f"--python {args.python}" if args.python else "a runtime made by install.py"
    bare = found["python"]
    print(f"interpreter: {where}; medians of {args.runs} rounds, interleaved")
    print(f"python -I -c pass:                          {ms(bare)}")
    for verb in ("poll", "wait"):
        print(f"sparring {verb} (finished think-about round):  {ms(found[verb])}  "
              f"{found[verb] / bare:.2f}x python (budget <= {GOAL_RATIO}x)")
    debate = found["debate wait"]
    print(f"sparring wait (arch-debate round, + debate status): {ms(debate)}  "
          f"{debate / bare:.2f}x python (it reads and checks the round files)")
    for verb in ("status", "debate status", "start"):
        print(f"sparring {verb}:{' ' * (34 - len(verb))}{ms(found[verb])}  "
              f"{found[verb] / bare:.2f}x python")
    if "node poll" in found:
        node = found["node poll"]
        print(f"codex-runner.js poll (finished round):       {ms(node)}  {node / bare:.2f}x "
              f"python; sparring poll takes {found['poll'] / node:.2f}x its time")
    print(f"modules poll imports beyond python's start-up ({len(modules)}): {' '.join(modules)}")
    print(f"turn end -> wait returns, {args.turns} turns: median "
          f"{statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms "
          "(budget <= 500 ms)")
    cpu_part = ""
    if runner_cpu is not None:
        print(f"the runner while Codex works: {runner_cpu[0]:.1f} ms of CPU per second of the "
              f"turn ({runner_cpu[1]} processes on the machine)")
        print(f"ending a turn's processes: {runner_cpu[2]:.1f} ms of CPU judging every process, "
              f"{runner_cpu[3]:.1f} ms passing over those older than the runner")
        cpu_part = (f" runner_cpu_ms_per_s={runner_cpu[0]:.1f} end_cpu_ms={runner_cpu[2]:.1f}"
                    f" end_cpu_since_ms={runner_cpu[3]:.1f}")
    node_part = (f" node_poll_ms={found['node poll'] * 1000:.1f}"
                 f" poll_vs_node={found['poll'] / found['node poll']:.2f}"
                 if "node poll" in found else "")
    print(f"RESULT python_ms={bare * 1000:.1f} poll_ms={found['poll'] * 1000:.1f} "
          f"wait_ms={found['wait'] * 1000:.1f} poll_ratio={found['poll'] / bare:.2f} "
          f"wait_ratio={found['wait'] / bare:.2f} debate_wait_ms={debate * 1000:.1f}{node_part} "
          f"status_ms={found['status'] * 1000:.1f} "
          f"debate_status_ms={found['debate status'] * 1000:.1f} "
          f"start_ms={found['start'] * 1000:.1f} "
          f"wait_latency_median_ms={statistics.median(latencies) * 1000:.0f} "
          f"wait_latency_max_ms={max(latencies) * 1000:.0f}{cpu_part}")


if __name__ == "__main__":
    sys.exit(main())
