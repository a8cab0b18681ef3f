#!/usr/bin/env python3
"""What the agreement rules cost a debate (figures printed; not a test).

1. The quote check. A realistic think-about record, five rounds, 20 points, 60 citations of
   lines of this repository's own code (each quoting its line, Codex's after a command that
   opened the file), is judged as the runner judges it after each verdict and once more for
   the report: every citation marked for the ledger, then the whole agreement audit
   (workflows/audit.py, the concessions and the minority report included), on one evidence
   checker that reads each cited file once. The same record with no quote in any citation
   (each still read for its line count) is the baseline: the ratio and the difference are
   what checking the quotes costs. In the runtime's own interpreter (a runtime install.py
   makes, or --python), CPU time of the process (a shared machine's load moves the wall
   time of a 20 ms computation by half from run to run; its CPU time by a tenth), medians
   of --runs, interleaved; beside it the wall time of that interpreter's start
   (`python -I -c pass`), for scale.
2. The challenge turn. Through the CLI, as the launcher runs it, against the fake codex: a
   think-about whose round one agreed on six points is challenged (the verdict that approves
   the summary starts a fresh `codex exec` with the challenge prompt), and the same round one
   judged with two points disputed goes on as usual (the verdict resumes Codex's thread with
   the next round's prompt). For each: the prompt's bytes and estimated tokens (bytes / 4),
   what a resumed thread carries besides (the thread's earlier prompt and answer: a fresh
   thread carries none), and the wall time from the verdict to `wait` returning the turn's
   answer, medians of --turn-runs, interleaved.

Run: python3 bench/agreement_bench.py [--runs 31] [--turn-runs 7] [--python PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ROUNDS, POINTS, CITATIONS = 5, 20, 60
STORE = ('"""Sessions, kept in Redis."""\nimport redis\n\nTTL = 1800\nREPLICAS = 3\n'
         'PEAK_WRITES = 200  # a second\nSTICKY = False\n\n\ndef save(db, sid, user):\n'
         '    db.set(f"session:{sid}", user, ex=TTL)\n')


# --- 1. the quote check: run in the runtime's interpreter ----------------------------------

def cited_lines(root: Path, count: int) -> list[tuple[str, int, str]]:
    """`count` lines of the repository's own code worth quoting, spread over its files."""
    files = sorted((root / "scripts" / "sparring").rglob("*.py"))
    found = []
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        good = [(n, line.strip()) for n, line in enumerate(lines, start=1)
                if len(line.strip()) >= 24 and not line.strip().startswith(("#", '"'))]
        if len(good) > 10:
            n, line = good[len(good) // 2]
            found.append((str(path.relative_to(root)), n, line))
    if len(found) < count:
        sys.exit(f"only {len(found)} files to cite, {count} wanted")
    step = len(found) // count
    return found[::step][:count]


def debate_rounds(cites: list[tuple[str, int, str]], quoted: bool) -> list[tuple[Any, Any]]:
    """Five rounds of (Codex's answer, Claude's verdict): 12 points of Codex's and 8 of
    Claude's in round one, with 20 citations; then each round each side answers five points,
    each with a new citation, moving on some of them (concessions, checked): 60 in all."""
    pool = iter(cites)

    def item() -> dict[str, Any]:
        path, n, line = next(pool)
        return {"cite": f"{path}:{n}", "quote": line if quoted else None}

    def point(pid: str, stance: str, cited: bool = True) -> dict[str, Any]:
        return {"id": pid, "claim": f"claim {pid}", "stance": stance,
                "evidence": [item()] if cited else [], "note": f"why {pid}",
                "would_change_my_mind": f"what would move {pid}"}

    codex = [point(f"X-{n}", "agree") for n in range(1, 13)]
    # Claude cites where it disagrees, and for two of its own points
    claude = ([point(f"X-{n}", "agree" if n <= 6 else "disagree", cited=n > 6)
               for n in range(1, 13)] + [point(f"C-{n}", "agree", cited=n <= 2)
                                          for n in range(1, 9)])
    rounds = [({"points": codex}, {"points": claude})]
    for r in range(2, ROUNDS + 1):
        turn = r % 2 == 0
        codex = [point(f"C-{(5 * (r - 2) + k) % 8 + 1}", "disagree" if turn else "agree")
                 for k in range(5)]
        claude = [point(f"X-{7 + (5 * (r - 2) + k) % 6}", "agree" if turn else "disagree")
                  for k in range(5)]
        rounds.append(({"points": codex}, {"points": claude}))
    return rounds


def record_of(rounds: list[tuple[Any, Any]]) -> Any:
    """The audit's record of `rounds`: the entries, and what Codex opened by each round (one
    command a round reading the files its answer cites, on one thread)."""
    from sparring import moves
    from sparring.workflows import audit

    opened: list[tuple[str, str]] = []
    reads = {}
    for n, (answer, _) in enumerate(rounds, start=1):
        paths = sorted({e["cite"].rsplit(":", 1)[0] for p in answer["points"]
                        for e in p["evidence"]})
        opened.append((f"/bin/bash -lc 'cat {' '.join(paths)}'", ""))
        reads[n] = list(opened)
    return audit.Record(moves.entries_of(rounds), reads=reads)


def judged(root: Path, rounds: list[tuple[Any, Any]]) -> float:
    """Seconds to judge the record of `rounds` as the runner does at a verdict: every cited
    item marked (the ledger's new-evidence rule), then the audit, on one checker."""
    from sparring.workflows import audit

    record = record_of(rounds)
    began = time.process_time()
    checker = audit.checker_of(record, root)
    for entry in record.entries:
        for cited in entry.evidence:
            checker.mark(cited, entry.side, entry.round)
    result = audit.compute(record, root, checker)
    took = time.process_time() - began
    assert len(result["points"]) == POINTS
    return took


def audit_child(root: Path, runs: int) -> None:
    """Run in the runtime's interpreter: print the medians as JSON."""
    cites = cited_lines(root, CITATIONS)
    times: dict[str, list[float]] = {"quoted": [], "unquoted": [], "debate_quoted": [],
                                     "debate_unquoted": []}
    marks = {}
    for _ in range(runs):
        for quoted in (True, False):
            key = "quoted" if quoted else "unquoted"
            rounds = debate_rounds(cites, quoted)
            times[key].append(judged(root, rounds))
            # a debate: a judgement after each of the five verdicts, and one for the report
            times[f"debate_{key}"].append(sum(judged(root, rounds[:n])
                                              for n in (*range(1, ROUNDS + 1), ROUNDS)))
    from sparring.workflows import audit

    for quoted in (True, False):
        found = audit.compute(record_of(debate_rounds(cites, quoted)), root)
        assert sum(found["evidence"].values()) == CITATIONS, found["evidence"]
        marks["quoted" if quoted else "unquoted"] = {
            mark: n for mark, n in found["evidence"].items() if n}
    print(json.dumps({**{k: statistics.median(v) for k, v in times.items()}, "marks": marks,
                      "files": len({c[0] for c in cites})}))


def quote_check(python: Path, runs: int) -> dict[str, Any]:
    done = subprocess.run([str(python), "-I", __file__, "--audit-child", str(ROOT), str(runs)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the audit child failed:\n{done.stderr}")
    found: dict[str, Any] = json.loads(done.stdout)
    starts = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([str(python), "-I", "-c", "pass"], check=True)
        starts.append(time.perf_counter() - began)
    found["python"] = statistics.median(starts)
    return found


# --- 2. the challenge turn, through the CLI --------------------------------------------------

def codex_point(pid: str, claim: str, line: int) -> dict[str, Any]:
    text = STORE.splitlines()[line - 1].strip()
    return {"id": pid, "claim": claim, "stance": "agree",
            "evidence": [{"cite": f"store.py:{line}", "quote": text}],
            "note": f"the code says so at line {line}", "would_change_my_mind": "a measurement"}


CLAIMS = [("SQLite in WAL mode holds the 200 writes/s of the peak", 6),
          ("Expired sessions need a sweep job once Redis TTLs are gone", 11),
          ("The three replicas must share one SQLite file", 5),
          ("No sticky sessions: any replica serves any request", 7),
          ("The TTL of 1800 s carries over as an expires_at column", 4),
          ("Redis is only imported by the session store", 2)]
POINT_IDS = [f"X-{n}" for n in range(1, len(CLAIMS) + 1)]
SUMMARY = ("Move the sessions to SQLite in WAL mode (X-1, X-5). Add a sweep job (X-2). Put the "
           "file where all three replicas reach it (X-3, X-4). Redis goes (X-6).")


def answer(points: list[dict[str, Any]], state: str, proposed: str | None) -> dict[str, Any]:
    return {"position": "SQLite in WAL mode, with a sweep job.", "choice": None,
            "confidence": 70, "points": points,
            "convergence": {"state": state, "reason": "because"},
            "proposed_summary": proposed, "approve_summary": None, "summary_objections": []}


FIRST = answer([codex_point(pid, claim, line)
                for pid, (claim, line) in zip(POINT_IDS, CLAIMS, strict=True)], "agree", SUMMARY)
CHALLENGE = answer([codex_point("X-7", "One writer must own the file: a shared volume's locks "
                                       "are not safe for SQLite", 5)], "continue", None)
SECOND = answer([{**codex_point("X-2", CLAIMS[1][0], 11), "note": "nothing expires rows"},
                 {**codex_point("X-3", CLAIMS[2][0], 5), "note": "no sticky sessions"}],
                "continue", None)


def verdict(challenged: bool) -> dict[str, Any]:
    """Claude's verdict on round one: all six agreed (the challenge follows), or two
    disputed (the next round follows)."""
    disputed = set() if challenged else {"X-2", "X-3"}
    points = [{"id": pid, "class": "genuine_disagreement" if pid in disputed
               else "genuine_agreement", "stance": "disagree" if pid in disputed else "agree",
               "evidence": [{"cite": "store.py:6", "quote": "PEAK_WRITES = 200  # a second"}],
               **({"note": "not shown by the code"} if pid in disputed else {})}
              for pid in POINT_IDS]
    if challenged:
        return {"points": points, "convergence": {"state": "agree", "reason": "the same view"},
                "approve_summary": "S-1"}
    return {"points": points, "convergence": {"state": "continue", "reason": "two are open"},
            "message": "X-2: where do expired rows go?\n\nX-3: what stops per-replica files?"}


def one_turn(run: Any, base: Path, n: int, challenged: bool) -> dict[str, Any]:
    """A new think-about in `run`'s repository, round one ended and judged: the figures of
    the turn the verdict starts."""
    folder = base / f"debate-{n}-{'challenge' if challenged else 'resume'}"
    folder.mkdir()
    script = folder / "script.json"
    script.write_text(json.dumps([json.dumps(FIRST),
                                  json.dumps(CHALLENGE if challenged else SECOND)]))
    env = {**run.env, "FAKE_CODEX_SCRIPT": str(script), "FAKE_CODEX_LOG_DIR": str(folder / "log"),
           "FAKE_CODEX_STATE_DIR": str(folder / "state")}
    sid = run("init", "--skill", "think-about", env=env)["session"]
    inbox = run.repo / ".sparring" / "inbox"
    (inbox / "round1.yaml").write_text(
        "QUESTION: |\n  Should the sessions move from Redis to SQLite at 200 writes/s?\n"
        "PROJECT_CONTEXT: |\n  store.py keeps them in Redis with a TTL.\nRELEVANT_FILES: |\n"
        "  store.py\nCONSTRAINTS: |\n  Three replicas.\n")
    run("start", sid, "--template", "think-about/round1", "--vars-file",
        str(inbox / "round1.yaml"), env=env)
    (inbox / "analysis.md").write_text("# Mine\n\nSQLite in WAL mode, with a sweep job.\n")
    shown = run("wait", sid, "--seal", str(inbox / "analysis.md"), "--timeout", "60", env=env)
    assert shown["status"] == "completed" and shown["review"]["data"], shown
    (inbox / "verdict.json").write_text(json.dumps(verdict(challenged)))
    began = time.perf_counter()
    decided = run("verdict", sid, "--file", str(inbox / "verdict.json"), env=env)
    waited = run("wait", sid, "--timeout", "60", env=env)
    took = time.perf_counter() - began
    kind = "challenge" if challenged else "round"
    assert decided["next"].get("kind") == kind and decided["next"]["started"], decided
    assert waited["status"] == "completed" and waited["purpose"] == kind, waited
    prompts = sorted((folder / "log").glob("call-*.stdin"))
    calls = [json.loads(p.with_suffix(".json").read_text()) for p in prompts]
    assert len(prompts) == 2 and ("resume" in calls[1]["argv"]) != challenged, calls
    run("stop", sid, env=env)
    return {"seconds": took, "prompt": prompts[1].stat().st_size,
            "history": prompts[0].stat().st_size + len(json.dumps(FIRST))}


def challenge_cost(run: Any, base: Path, runs: int) -> dict[str, Any]:
    (run.repo / "store.py").write_text(STORE)
    found: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for n in range(runs):
        for challenged in (True, False):
            found[challenged].append(one_turn(run, base, n, challenged))
    return {("challenge" if key else "resume"): {
        "seconds": statistics.median(r["seconds"] for r in rows),
        "prompt": rows[-1]["prompt"], "history": rows[-1]["history"]}
        for key, rows in found.items()}


# --- the figures -----------------------------------------------------------------------------

def tokens(size: int) -> str:
    return f"~{size / 4:,.0f} tokens"


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--audit-child":
        audit_child(Path(sys.argv[2]), int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--turn-runs", type=int, default=7)
    sys.path.insert(0, str(HERE))
    from runner_bench import add_python_option, ms, sparring_in

    add_python_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sparring-agreement-bench-") as tmp:
        base = Path(tmp)
        run = sparring_in(base, args.python)
        check = quote_check(run.python, args.runs)
        turns = challenge_cost(run, base, args.turn_runs)
    with_q, without = check["quoted"], check["unquoted"]
    print(f"quote check: a record of {ROUNDS} rounds, {POINTS} points, {CITATIONS} citations "
          f"of {check['files']} real files (marks {check['marks']['quoted']}; without quotes "
          f"{check['marks']['unquoted']})")
    print(f"  one judgement, CPU: {ms(with_q)} with the quotes checked, {ms(without)} without: "
          f"{with_q / without:.2f}x, +{ms(with_q - without)}")
    per, base_per = check["debate_quoted"], check["debate_unquoted"]
    print(f"  per debate (a judgement after each of {ROUNDS} verdicts and one for the report): "
          f"{ms(per)} vs {ms(base_per)}: {per / base_per:.2f}x, +{ms(per - base_per)}; "
          f"python -I -c pass {ms(check['python'])} (wall)")
    challenge, resume = turns["challenge"], turns["resume"]
    print(f"challenge turn: prompt {challenge['prompt']:,} B ({tokens(challenge['prompt'])}), "
          f"a fresh thread (nothing else carried)")
    print(f"  a normal round: prompt {resume['prompt']:,} B ({tokens(resume['prompt'])}), plus "
          f"the thread's history, {resume['history']:,} B ({tokens(resume['history'])})")
    print(f"  verdict to the answer shown: challenge {ms(challenge['seconds'])}, resume "
          f"{ms(resume['seconds'])}: {challenge['seconds'] / resume['seconds']:.2f}x "
          f"(medians of {args.turn_runs}, the fake codex)")
    print(f"RESULT quote_ratio={with_q / without:.2f} quote_ms={(with_q - without) * 1000:.2f} "
          f"debate_ms={(per - base_per) * 1000:.1f} challenge_prompt_b={challenge['prompt']} "
          f"round_prompt_b={resume['prompt']} history_b={resume['history']} "
          f"turn_ratio={challenge['seconds'] / resume['seconds']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
