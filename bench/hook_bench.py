#!/usr/bin/env python3
"""What the plugin's PreToolUse hook costs a tool call (figures printed; not a test).

1. The hook as Claude Code starts it (`python3 -I -S <plugin>/scripts/hook.py`, the event on
   stdin), whole-process wall time, medians over N runs, interleaved: for an unrelated
   call (a Bash `git status`, a read of a project file) and for one of sparring's own (a
   runner call of the plugin's launcher). Before the hooks' `if` (the commit before it: one
   PreToolUse entry matching Bash|Write|Edit|MultiEdit|Read|Skill), every such call paid it;
   now an unrelated call starts no process at all, and sparring's own pay the same.
2. `--claude`: the real Claude Code (the pinned one, against the loopback Messages mock of
   tests/support), a scripted model making K unrelated tool calls (reads of a project file,
   `git log`) in the plugin loaded with --plugin-dir, with the old hooks.json and with
   today's: the hook processes started (counted by a `python3` first on PATH that notes each
   start) and the wall time of the whole `claude -p`, medians over N runs, interleaved.

Run: python3 bench/hook_bench.py [--runs 21] [--claude] [--calls 10]
The last line is machine-readable: `RESULT key=value ...`.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.binaries import find_claude  # noqa: E402  (the tests' helpers, as workflow_bench)
from support.gitrepo import git  # noqa: E402
from support.habitat import plugin_copy  # noqa: E402
from support.messages_mock import MessagesMock  # noqa: E402
from support.scripted_model import ScriptedModel  # noqa: E402

OLD_HOOKS = {"hooks": {"PreToolUse": [{  # hooks/hooks.json before the `if` (df9e5fb)
    "matcher": "Bash|Write|Edit|MultiEdit|Read|Skill",
    "hooks": [{"type": "command", "timeout": 10,
               "command": 'python3 -I -S "${CLAUDE_PLUGIN_ROOT}/scripts/hook.py"'}]}]}}


def event(tool: str, tool_input: dict[str, Any], cwd: Path) -> str:
    return json.dumps({"hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": tool_input, "cwd": str(cwd)})


def hook_once(plugin: Path, stdin: str | None) -> tuple[float, str]:
    """One start of the hook (None: of `python3 -I -S -c pass`, the interpreter alone)."""
    argv = ["python3", "-I", "-S", str(plugin / "scripts" / "hook.py")] if stdin is not None \
        else ["python3", "-I", "-S", "-c", "pass"]
    began = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=True,
                          env={"PATH": os.environ["PATH"], "CLAUDE_PLUGIN_ROOT": str(plugin)})
    return time.perf_counter() - began, "allow" if done.stdout else "no answer" \
        if stdin is not None else "the interpreter alone"


def direct(plugin: Path, project: Path, runs: int) -> dict[str, float]:
    cases: dict[str, str | None] = {
        "python3 -I -S -c pass": None,
        "git status": event("Bash", {"command": "git status"}, project),
        "read app.py": event("Read", {"file_path": str(project / "app.py")}, project),
        "runner call": event("Bash", {"command": str(
            plugin / "skills" / "think-about" / "sparring") + " status S"}, project)}
    times: dict[str, list[float]] = {name: [] for name in cases}
    answers = {}
    for _ in range(runs):
        for name, stdin in cases.items():
            elapsed, answers[name] = hook_once(plugin, stdin)
            times[name].append(elapsed)
    found = {name: statistics.median(t) * 1000 for name, t in times.items()}
    print(f"the hook started directly, medians of {runs} (ms):")
    for name, value in found.items():
        print(f"  {name:<22} {value:7.1f}  ({answers[name]})")
    return found


def watch(folder: Path) -> Path:
    """A python3 that notes each start of the hook, then runs the real one."""
    folder.mkdir(parents=True, exist_ok=True)
    shim = folder / "python3"
    shim.write_text(f'#!/bin/sh\ncase "$*" in *scripts/hook.py*) echo x >> "{folder}/started" ;;'
                    f' esac\nexec /usr/bin/python3 "$@"\n')
    shim.chmod(0o755)
    return folder / "started"


def claude_run(claude: Path, plugin: Path, project: Path, home: Path, calls: int,
               path: str) -> float:
    steps: list[dict[str, Any]] = []
    for i in range(calls):
        steps.append({"read": "{{cwd}}/app.py"} if i % 2 else {"bash": "git log --oneline"})
    steps.append({"text": "done"})
    with MessagesMock() as mock:
        model = ScriptedModel(steps, {"cwd": str(project)})
        mock.drive(model)
        env = {**mock.claude_env(home), "PATH": path}
        argv = [str(claude), "-p", "/sparring:think-about Redis or SQLite?", "--plugin-dir",
                str(plugin), "--output-format", "json"]
        began = time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=project, capture_output=True, text=True,
                              timeout=300, check=False)
        elapsed = time.perf_counter() - began
    if model.failures or not model.finished or done.returncode != 0:
        raise SystemExit(f"claude -p went off script: {model.failures} {done.stderr[-800:]}")
    return elapsed


def in_claude(base: Path, project: Path, runs: int, calls: int) -> dict[str, float]:
    claude = find_claude()
    if claude is None:
        raise SystemExit("no Claude Code found: run .ci/run, or set CLAUDE_BIN")
    plugins = {"before": plugin_copy(base / "before"), "after": plugin_copy(base / "after")}
    (plugins["before"] / "hooks" / "hooks.json").write_text(json.dumps(OLD_HOOKS))
    clean = "/usr/local/bin:/usr/bin:/bin"
    found: dict[str, float] = {}
    for name, plugin in plugins.items():  # the starts, counted once
        started = watch(base / f"watch-{name}")
        claude_run(claude, plugin, project, base / f"home-{name}", calls,
                   f"{started.parent}:{clean}")
        found[f"{name}_starts"] = len(started.read_text().splitlines()) \
            if started.exists() else 0
    times: dict[str, list[float]] = {name: [] for name in plugins}
    for i in range(runs):
        for name, plugin in plugins.items():
            times[name].append(claude_run(claude, plugin, project, base / f"home-{i}-{name}",
                                          calls, clean))
    for name in plugins:
        found[f"{name}_s"] = statistics.median(times[name])
    per_call = (found["before_s"] - found["after_s"]) / calls * 1000
    found["per_call_ms"] = per_call
    print(f"the real Claude Code, {calls} unrelated tool calls, medians of {runs}:")
    for name in plugins:
        print(f"  {name:<7} hook started {found[f'{name}_starts']:>3.0f} times, claude -p "
              f"{found[f'{name}_s']:6.2f} s")
    print(f"  difference per tool call: {per_call:+.1f} ms")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--claude", action="store_true", help="also in the real Claude Code")
    parser.add_argument("--calls", type=int, default=10, help="tool calls a Claude Code run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hook-bench-") as tmp:
        base = Path(tmp)
        plugin = plugin_copy(base / "plugin")
        project = base / "project"
        project.mkdir()
        git(project, "init", "-q")
        (project / "app.py").write_text("print('hello')\n")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "initial")
        found = direct(plugin, project, args.runs)
        python = found["python3 -I -S -c pass"]
        result = {"python_ms": python, "unrelated_before_ms": found["git status"],
                  "unrelated_after_ms": 0.0, "runner_call_ms": found["runner call"]}
        print(f"an unrelated tool call: before {found['git status']:.1f} ms of hook process "
              f"({found['git status'] / python:.2f}x python3 -I -S -c pass), now none started; "
              f"a runner call of sparring's: {found['runner call']:.1f} ms "
              f"({found['runner call'] / python:.2f}x), as before")
        if args.claude:
            result.update(in_claude(base, project, max(1, args.runs // 7), args.calls))
        shutil.rmtree(base / "plugin", ignore_errors=True)
    print("RESULT " + " ".join(f"{k}={v:.3g}" for k, v in result.items()))


if __name__ == "__main__":
    main()
