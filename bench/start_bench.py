#!/usr/bin/env python3
"""`start` until Codex's first request, against the same `codex exec` run directly (figures
printed; not a test).

The real Codex CLI (SPARRING_TEST_CODEX, else .ci/node's, else PATH's) against a loopback
Responses mock (tests/support/responses_mock.py, which notes when each request arrives).
Timed from the moment the command is started to the moment the mock receives Codex's first
request: `sparring start SESSION` as the skills' launcher runs it (`venv/bin/python -I -c
ENTRY`, ENTRY installer/layout.py's, in a runtime install.py makes in a temporary folder: a
non-editable install), in four forms: `--prompt-file FILE` (a deep-discussion session), and
`--template think-about/round1 --vars-file FILE`, as think-about's SKILL.md starts round
one; and `resume SESSION --prompt-file FILE`, round two on the thread round one opened; and
arch-debate's own verb as its SKILL.md runs it, `debate round DIR --file INBOX/round.md`
(Codex's first round, after `debate new`: Claude's opening round handed in); a new
session each round. Against each, the very command line sparring gave codex in that form's
warm-up turn, run directly with the bench's one-line prompt on stdin (the template and
debate forms send codex a longer, rendered one).
Medians over N rounds measured in one run, interleaved; budget <= 2.0x, each figure
printed beside what sparring answered (its verb, ok, the turn's status). Each round's turn is
run to its end before the next starts.
Nothing leaves 127.0.0.1.

Run: python3 bench/start_bench.py [--runs 15] [--python PATH]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner_bench import (  # the benchmarks' shared helpers
    Sparring,
    add_python_option,
    make_repo,
    ms,
    runtime_python,
)
from support.binaries import find_codex
from support.loopback_server import Exchange
from support.responses_mock import ResponsesMock

GOAL_RATIO = 2.0


class TimedMock(ResponsesMock):
    """The Responses mock, noting when each request arrived (time.perf_counter)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def route(self, exchange: Exchange) -> None:
        self.arrivals.append(time.perf_counter())
        super().route(exchange)


def first_request(mock: TimedMock, began: float, seen: int, timeout: float = 60) -> float:
    """Seconds from `began` to the first request after the `seen` ones before it."""
    deadline = time.monotonic() + timeout
    while len(mock.arrivals) <= seen:
        if time.monotonic() > deadline:
            sys.exit("codex sent no request")
        time.sleep(0.001)
    return mock.arrivals[seen] - began


# The ways a turn is started: the bench's own prompt file, the way think-about's SKILL.md
# starts round one (a template and its variables in a YAML file), round two, and
# arch-debate's round verb.
FORMS = {
    "--prompt-file": ("deep-discussion", ["--prompt-file", "{inbox}/prompt.md"]),
    "--template": ("think-about", ["--template", "think-about/round1",
                                   "--vars-file", "{inbox}/round1.yaml"]),
    "resume": ("deep-discussion", ["--prompt-file", "{inbox}/prompt.md"]),
    "debate round": ("arch-debate", []),
}
ROUND1 = ("QUESTION: |\n  Redis or SQLite for sessions? Answer in one line.\n"
          "PROJECT_CONTEXT: |\n  A small web service.\nRELEVANT_FILES: |\n  app.py\n"
          "CONSTRAINTS: |\n  One server.\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    add_python_option(parser)
    args = parser.parse_args()
    codex = find_codex()
    if codex is None:
        sys.exit("no real codex: set SPARRING_TEST_CODEX or run .ci/run")
    with tempfile.TemporaryDirectory(prefix="sparring-start-bench-") as tmp, TimedMock() as mock:
        base = Path(tmp)
        python = args.python or runtime_python(base)
        env = {**mock.codex_env(mock.codex_home(base / "codex-home"), home=base / "home"),
               "XDG_DATA_HOME": str(base / "data"), "XDG_STATE_HOME": str(base / "state"),
               "SPARRING_CODEX": str(codex)}
        repo = make_repo(base, "repo")
        run = Sparring(python, repo, env)  # as the launcher runs the runtime
        inbox = repo / ".sparring" / "inbox"  # its files are taken into the session once read
        text = "Redis or SQLite for sessions? Answer in one line.\n"
        # doctor makes the inbox; it exits 1 when it is not ready (no Claude Code on this
        # PATH, say), which timing codex's start does not need
        run("doctor", "--json", "--inbox", check=False)
        (base / "prompt.md").write_text(text)

        debates = itertools.count(1)

        said: dict[str, str] = {}

        def via_sparring(form: str) -> tuple[float, list[str]]:
            """(seconds to the first request, the command line sparring ran codex with)."""
            if form == "debate round":  # a new debate, Claude's opening handed in
                folder = repo / f"debate-{next(debates)}"
                sid = run("debate", "new", str(folder), text.strip())["session"]
                (inbox / "round.md").write_text("SQLite: one server, no cache.\n")
                argv = [*run.argv, "debate", "round", str(folder), "--file",
                        str(inbox / "round.md")]
            else:
                sid = run("init", "--skill", FORMS[form][0])["session"]
                argv = [*run.argv, *start_words(form, sid)]
            seen, began = len(mock.arrivals), time.perf_counter()
            started = subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.PIPE)
            took = first_request(mock, began, seen)
            out = json.loads(started.communicate()[0])
            assert out["ok"], out
            said[form] = f"{out['verb']}: ok, status {out.get('status')}"
            done = run("wait", sid, "--timeout", "60")
            assert done["status"] not in ("running", "starting"), done
            session = repo / ".sparring" / "sessions" / sid / "session.json"
            return took, json.loads(session.read_text())["turns"][-1]["argv"]

        def start_words(form: str, sid: str) -> list[str]:
            """`start SID …` (or `resume`, after round one on the same thread), its files
            written."""
            verb = "start"
            if form == "resume":  # round two, on the thread round one opened
                (inbox / "prompt.md").write_text(text)
                run("start", sid, "--prompt-file", str(inbox / "prompt.md"))
                assert run("wait", sid, "--timeout", "60")["status"] == "completed"
                verb = "resume"
            (inbox / "prompt.md").write_text(text)
            (inbox / "round1.yaml").write_text(ROUND1)
            return [verb, sid, *(w.format(inbox=inbox) for w in FORMS[form][1])]

        # Warm-ups: each gives the command line sparring runs codex with in that form
        # (think-about's carries --output-schema, a file of its session, kept).
        codex_argv = {form: via_sparring(form)[1] for form in FORMS}

        def direct(form: str) -> float:
            seen = len(mock.arrivals)
            with (base / "prompt.md").open("rb") as stdin:
                began = time.perf_counter()
                proc = subprocess.Popen(codex_argv[form], cwd=repo, env=env, stdin=stdin,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                took = first_request(mock, began, seen)
            proc.wait(timeout=60)
            return took

        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            for form in FORMS:
                times.setdefault((form, "codex exec"), []).append(direct(form))
                times.setdefault((form, "sparring start"), []).append(via_sparring(form)[0])
    found = {key: statistics.median(values) for key, values in times.items()}
    where = f"--python {args.python}" if args.python else "a runtime made by install.py"
    print(f"codex {codex}; sparring: {where}; medians of {args.runs} rounds, interleaved")
    result = []
    for form, (skill, _) in FORMS.items():
        ratio = found[(form, "sparring start")] / found[(form, "codex exec")]
        verb = {"resume": "resume", "debate round": "debate round"}.get(form, "start")
        print(f"{verb if verb != 'start' else 'start ' + form} ({skill}):")
        print(f"  codex exec -> first request:     {ms(found[(form, 'codex exec')])}")
        print(f"  sparring {verb} -> first request: {ms(found[(form, 'sparring start')])}  "
              f"{ratio:.2f}x (budget <= {GOAL_RATIO}x)  answered {said[form]}")
        name = form.strip("-").replace("-", "_").replace(" ", "_")
        result.append(f"{name}_codex_ms={found[(form, 'codex exec')] * 1000:.1f} "
                      f"{name}_start_ms={found[(form, 'sparring start')] * 1000:.1f} "
                      f"{name}_ratio={ratio:.2f}")
    print("RESULT " + " ".join(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
