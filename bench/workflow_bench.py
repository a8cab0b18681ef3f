#!/usr/bin/env python3
"""What a whole workflow costs Claude, per Codex round (figures printed; not a test).

Each scripted workflow of the test suite (tests/integration/workflows/*.json) runs in the
real Claude Code with the installed skills and the real Codex CLI against loopback mocks,
exactly as the integration tests run it. From the tool calls the scripted model made and
the results Claude Code handed back, it prints per workflow:

- Bash calls in all, and per Codex round (goal <= 3): all the runner calls of the debate
  divided by its Codex rounds, and the calls of the round loop alone (without set-up:
  doctor, init, `debate new`, `discuss new`, and closing: report, finalize, stop);
- bytes of runner output that land in Claude's context per Codex round, not counting
  Codex's own answer (`review` of wait/start/resume, `last_message` of `discuss status`).

Needs the pinned binaries `.ci/run` installs (or SPARRING_TEST_CLAUDE / SPARRING_TEST_CODEX).
Run: .venv/bin/python bench/workflow_bench.py [--only think-about-consensus] [--calls]
     [--claude PATH]   (.venv/: the environment `python3 tests/run.py` makes)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
try:
    import psutil  # noqa: F401  (the test support below needs it, and the package)
except ModuleNotFoundError:
    sys.exit("workflow_bench.py drives the test habitat: run it with the test environment's "
             "python, `.venv/bin/python bench/workflow_bench.py` (`python3 tests/run.py` "
             "makes .venv/)")

from support.binaries import find_claude, find_codex  # noqa: E402
from support.habitat import SCENARIOS, Scenario, make_habitat, run_workflow  # noqa: E402
from support.installing import install_env, run_install  # noqa: E402
from support.messages_mock import MessagesMock  # noqa: E402
from support.responses_mock import ResponsesMock  # noqa: E402
from support.scripted_model import Exchanged  # noqa: E402

SETUP = ("doctor", "init", "new")
CLOSING = ("report", "finalize", "stop")
CODEX_TEXT = ("review", "last_message")  # Codex's own answer, as the runner passes it on


def runtime(base: Path) -> Path:
    data = base / "data"
    done = run_install("--runtime-only", env=install_env(data, base / "home"))
    if done.returncode != 0:
        sys.exit(f"install.py --runtime-only failed:\n{done.stdout}{done.stderr}")
    return data


def verb(call: Exchanged) -> str:
    words = call.input["command"].split()
    return words[2] if len(words) > 2 and words[1] in ("debate", "discuss") else words[1]


def own_bytes(call: Exchanged) -> int:
    """Bytes of the tool result, less what Codex wrote (re-serialized the runner's way)."""
    raw = len((call.result or "").encode())
    out = call.output or {}
    codex = sum(len(json.dumps(out[k], ensure_ascii=False, indent=2).encode()) - 4
                for k in CODEX_TEXT if out.get(k))
    return max(raw - codex, 0)


def started(out: dict[str, Any]) -> bool:
    """A call that started a Codex round (a think-about verdict starts the next one)."""
    if out.get("verb") == "verdict":
        return bool((out.get("next") or {}).get("started"))
    return out.get("verb") in ("start", "resume", "debate round", "discuss frame",
                               "discuss round", "discuss synthesis") and bool(out.get("turn"))


def measure(scenario: Scenario, claude: Path, codex: Path, data: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sparring-wfbench-") as tmp, \
            MessagesMock() as messages, ResponsesMock() as responses:
        habitat = make_habitat(Path(tmp), data, messages, responses, codex, scenario.scope,
                               scenario.setup)
        outcome = run_workflow(claude, habitat, scenario)
        if outcome.model.failures or outcome.denials:
            sys.exit(f"{scenario.name} went off script: {outcome.model.failures} "
                     f"{outcome.denials}")
        calls = [c for c in outcome.model.log if c.tool == "Bash"]
    rounds = len([t for t in (c.output or {} for c in calls) if started(t)])
    loop = [c for c in calls if verb(c) not in SETUP + CLOSING]
    return {"name": scenario.name, "bash": len(calls), "rounds": rounds, "loop": len(loop),
            "bytes": sum(own_bytes(c) for c in calls),
            "loop_bytes": sum(own_bytes(c) for c in loop),
            "writes": sum(1 for c in outcome.model.log if c.tool == "Write"),
            "calls": [(verb(c), own_bytes(c)) for c in calls]}


def per_round(value: int, rounds: int) -> str:
    return f"{value / rounds:.1f}" if rounds else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="a scenario name (repeatable)")
    parser.add_argument("--claude", type=Path, default=find_claude())
    parser.add_argument("--calls", action="store_true",
                        help="also print each Bash call's verb and its bytes")
    args = parser.parse_args()
    codex = find_codex()
    if args.claude is None or codex is None:
        sys.exit("needs the real claude and codex: run .ci/run, or set SPARRING_TEST_CLAUDE "
                 "and SPARRING_TEST_CODEX")
    # Failure paths (a recovered round, a stand-in, a guard violation) are left out: they
    # show that a workflow survives, not what it costs.
    names = args.only or sorted(p.stem for p in SCENARIOS.glob("*.json")
                                if json.loads(p.read_text()).get("bench", True))
    with tempfile.TemporaryDirectory(prefix="sparring-wfbench-runtime-") as tmp:
        data = runtime(Path(tmp))
        rows = [measure(Scenario.load(name), args.claude, codex, data) for name in names]
    print(f"{'workflow':32} {'Bash':>5} {'Codex rounds':>12} {'Bash/round':>10} "
          f"{'loop/round':>10} {'bytes/round':>11} {'loop bytes/round':>16}")
    for r in rows:
        print(f"{r['name']:32} {r['bash']:>5} {r['rounds']:>12} "
              f"{per_round(r['bash'], r['rounds']):>10} {per_round(r['loop'], r['rounds']):>10} "
              f"{per_round(r['bytes'], r['rounds']):>11} "
              f"{per_round(r['loop_bytes'], r['rounds']):>16}")
        if args.calls:
            print("    " + ", ".join(f"{v} {b:,}" for v, b in r["calls"]))
    with_codex = [r for r in rows if r["rounds"]]
    if with_codex:
        worst = max(r["loop"] / r["rounds"] for r in with_codex)
        median = statistics.median(r["loop_bytes"] / r["rounds"] for r in with_codex)
        print(f"\nround loop: at most {worst:.1f} Bash calls per Codex round (goal <= 3); "
              f"median {median:,.0f} bytes of runner output per Codex round besides Codex's "
              "answer")
    for r in rows:
        if r["name"].startswith("think-about") and r["rounds"]:
            print(f"{r['name']}: {r['loop_bytes'] / r['rounds']:,.0f} bytes of start/resume, "
                  "wait and verdict output per Codex round (goal <= 1,500)")


if __name__ == "__main__":
    main()
