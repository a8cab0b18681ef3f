#!/usr/bin/env python3
"""What a whole workflow costs Claude: set-up, each Codex round, close (printed; not a test).

Each scripted workflow of the test suite (tests/integration/workflows/*.json) runs in the
real Claude Code with the installed skills and the real Codex CLI against loopback mocks,
exactly as the integration tests run it. From the tool calls the scripted model made and
the results Claude Code handed back, it prints per workflow the bytes of runner output that
land in Claude's context, not counting Codex's own answer (`review` of wait/start/resume,
`last_message` of a discussion), and the Bash calls:

- set-up: the calls up to and including the one that starts Codex's first round (doctor,
  init or `debate new`/`discuss new`, then start, the first `debate round`, `discuss frame`);
- per Codex round: every other call but the close, divided by the Codex rounds (a round is
  a call that started a Codex turn, a deep-discussion's synthesis included);
- close: the trailing report, `discuss report`, finalize and stop.

A request the user makes after a close (a dual-model deeper dive asked for once the report is
written) is a leg of its own, with its set-up (the `resume`), rounds and close; set-up and
close are each leg's worst.

Goals (issue 22): at most 1,500 bytes for the set-up, per round and for the close, and at
most 2 Bash calls per round.

Needs the pinned binaries `.ci/run` installs (or SPARRING_TEST_CLAUDE / SPARRING_TEST_CODEX).
`--stretch K` makes every long turn K times as long: each Codex request a scenario delays
(`"delay"`: the model thinking, think-about-long-turn's round one) comes K times, so a turn
of two minutes becomes one of 2K minutes, still watched as SKILL.md says.

Run: .venv/bin/python bench/workflow_bench.py [--only think-about-consensus] [--calls] [--printed]
     [--claude PATH] [--stretch K]   (.venv/: the environment `python3 tests/run.py` makes)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
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

CLOSING = ("report", "finalize", "stop")
GOAL_BYTES, GOAL_CALLS = 1_500, 2
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
    """Bytes of the tool result, less what Codex wrote (re-serialized the runner's way):
    `review`, and the text of a discussion's `last_message` when Codex wrote it."""
    raw = len((call.result or "").encode())
    out = call.output or {}
    codex = [out[k] for k in CODEX_TEXT if out.get(k)]
    last = (out.get("discussion") or {}).get("last_message") or {}
    if last.get("speaker") == "codex" and last.get("text"):
        codex.append(last["text"])
    return max(raw - sum(len(json.dumps(text, ensure_ascii=False).encode()) for text in codex),
               0)


def started(out: dict[str, Any]) -> bool:
    """A call that started a Codex round (a think-about verdict starts the next one)."""
    if out.get("verb") == "verdict":
        return bool((out.get("next") or {}).get("started"))
    return out.get("verb") in ("start", "resume", "debate round", "discuss frame",
                               "discuss round", "discuss synthesis") and bool(out.get("turn"))


def stretched(scenario: Scenario, times: int) -> Scenario:
    """The scenario with each delayed Codex request (a long turn's) `times` times over; what
    a step checks it shows is the test's, not the benchmark's (more lines than the cap)."""
    if times == 1:
        return scenario
    codex = [entry for entry in scenario.codex
             for _ in range(times if isinstance(entry, dict) and "delay" in entry else 1)]
    steps = [{k: v for k, v in step.items() if k != "shows"} for step in scenario.steps]
    return dataclasses.replace(scenario, codex=codex, steps=steps)


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
    legs = [leg_figures(leg) for leg in split_legs(calls)]
    return {"name": scenario.name, "bash": len(calls),
            "rounds": sum(leg["rounds"] for leg in legs),
            "setup": max(leg["setup"] for leg in legs),
            "loop": sum(leg["loop"] for leg in legs),
            "loop_bytes": sum(leg["loop_bytes"] for leg in legs),
            "close": max(leg["close"] for leg in legs), "legs": len(legs),
            "calls": [(verb(c), own_bytes(c)) for c in calls],
            "printed": [c.result or "" for c in calls]}


def split_legs(calls: list[Exchanged]) -> list[list[Exchanged]]:
    """The calls, split after each close that more calls follow: a request the user makes
    once the report is written (a deeper dive asked for then) is a leg of its own."""
    legs, current = [], []
    for n, call in enumerate(calls):
        current.append(call)
        following = calls[n + 1] if n + 1 < len(calls) else None
        if following is not None and verb(call) in CLOSING and verb(following) not in CLOSING:
            legs.append(current)
            current = []
    return [*legs, current] if current else legs


def leg_figures(calls: list[Exchanged]) -> dict[str, int]:
    outs = [c.output or {} for c in calls]
    first = next((i for i, out in enumerate(outs) if started(out)), None)
    setup = calls[:first + 1] if first is not None else calls[:2]
    close = len(calls)
    while close > len(setup) and verb(calls[close - 1]) in CLOSING:
        close -= 1
    loop = calls[len(setup):close]
    return {"rounds": sum(1 for out in outs if started(out)),
            "setup": sum(own_bytes(c) for c in setup), "loop": len(loop),
            "loop_bytes": sum(own_bytes(c) for c in loop),
            "close": sum(own_bytes(c) for c in calls[close:])}


def per_round(value: int, rounds: int) -> str:
    return f"{value / rounds:.1f}" if rounds else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="a scenario name (repeatable)")
    parser.add_argument("--claude", type=Path, default=find_claude())
    parser.add_argument("--calls", action="store_true",
                        help="also print each Bash call's verb and its bytes")
    parser.add_argument("--stretch", type=int, default=1, metavar="K",
                        help="each delayed Codex request K times: a long turn K times longer")
    parser.add_argument("--printed", action="store_true",
                        help="also print what each Bash call printed, as Claude received it")
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
        rows = [measure(stretched(Scenario.load(name), args.stretch), args.claude, codex, data)
                for name in names]
    print(f"{'workflow':32} {'Bash':>5} {'legs':>4} {'Codex rounds':>12} {'set-up B':>9} "
          f"{'B/round':>8} {'calls/round':>11} {'close B':>8}")
    for r in rows:
        print(f"{r['name']:32} {r['bash']:>5} {r['legs']:>4} {r['rounds']:>12} {r['setup']:>9,} "
              f"{per_round(r['loop_bytes'], r['rounds']):>8} "
              f"{per_round(r['loop'], r['rounds']):>11} {r['close']:>8,}")
        if args.calls:
            print("    " + ", ".join(f"{v} {b:,}" for v, b in r["calls"]))
        if args.printed:
            for (v, b), text in zip(r["calls"], r["printed"], strict=True):
                print(f"      {v} ({b:,} B): {text}")
    with_codex = [r for r in rows if r["rounds"]]
    print(f"\nworst set-up {max(r['setup'] for r in rows):,} B, worst close "
          f"{max(r['close'] for r in rows):,} B (goal <= {GOAL_BYTES:,} each)")
    if with_codex:
        calls = max(r["loop"] / r["rounds"] for r in with_codex)
        size = max(r["loop_bytes"] / r["rounds"] for r in with_codex)
        print(f"per Codex round: at most {size:,.0f} B of runner output besides Codex's answer "
              f"(goal <= {GOAL_BYTES:,}), at most {calls:.1f} Bash calls (goal <= "
              f"{GOAL_CALLS})")


if __name__ == "__main__":
    main()
