"""The calls a debate makes every round, answered by the first door (cli/door.py, what
`python -m sparring` runs) without click: in every workflow and for every way a turn ends,
they print what the CLI prints, byte for byte, because both run the same functions and
print through cli/verb.py. (conftest's `sparring` asks the door too after each such call of
the suite; here each one is asked explicitly, and must have been answered by the door.)
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sparring.cli import door
from sparring.cli.main import main
from support.debates import ARCH_QUESTION, FRAME, Debate, answer, cpt


def both(*argv: str) -> tuple[int, str]:
    """The door's answer, then the CLI's to the same state: they must be the same."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = door.run(list(argv))
    assert code is not None, f"the door left {argv} to the CLI"
    cli = io.StringIO()
    with contextlib.redirect_stdout(cli):
        cli_code = main(list(argv))
    assert (code, printed.getvalue()) == (cli_code, cli.getvalue()), argv
    return code, printed.getvalue()


def rounds_calls(sid: str, *own: str) -> None:
    """Every status call of a round, through both doors."""
    for argv in (("poll", sid), ("wait", sid), ("wait", sid, "--timeout", "0"),
                 ("wait", sid, "--timeout=5"), ("status", sid)):
        both(*argv)
    if own:
        both(*own)


# How a turn ends, as the fake codex makes it end: (mode, its settings, start's options).
ENDINGS = {
    "completed": ("ok", {}, ()),
    "failed": ("rate_limited", {}, ()),
    "timeout": ("hang", {}, ("--timeout", "1")),
    "stalled": ("hang_silent", {}, ("--stall-after", "1")),
    "stopped": ("hang", {}, ()),
}


def ended(sparring: Any, sid: str, status: str) -> None:
    if status == "stopped":
        assert sparring("stop", sid).exit_code == 0
    done = sparring("wait", sid, "--timeout", "30").out
    assert done["status"] == status, done


@pytest.mark.parametrize("status", sorted(ENDINGS))
@pytest.mark.parametrize("skill", ["think-about", "dual-model"])
def test_structured_rounds_every_ending(sparring: Any, fake_codex: Any, repo: Path,
                                        skill: str, status: str) -> None:
    mode, env, flags = ENDINGS[status]
    fake_codex.mode(mode, reply=json.dumps(answer([cpt("X-1", "agree")])), **env)
    sid = sparring("init", "--skill", skill).out["session"]
    first = "think-about/round1" if skill == "think-about" else "dual-model/dispatch"
    sparring("start", sid, "--template", first, "--var", "QUESTION=Redis or SQLite?",
             "--var", "CONTEXT=none", *flags)  # a failure may come within its window
    ended(sparring, sid, status)
    rounds_calls(sid)


def test_structured_rounds_sealed_and_revealed(sparring: Any, fake_codex: Any,
                                               scratch: Path) -> None:
    debate = Debate(sparring, fake_codex, scratch)
    debate.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    debate.wait()
    rounds_calls(debate.sid)  # withheld until Claude seals
    debate.seal()
    code, first = both("wait", debate.sid)  # the first reveal, recorded by the door's call
    assert code == 0 and '"X-1"' in first
    rounds_calls(debate.sid)


@pytest.mark.parametrize("status", sorted(ENDINGS))
def test_arch_debate_every_ending(sparring: Any, fake_codex: Any, repo: Path,
                                  status: str) -> None:
    mode, env, flags = ENDINGS[status]
    fake_codex.mode(mode, **env)
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    both("debate", "status", "debate")  # no round yet
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate", *flags)
    ended(sparring, sid, status)
    rounds_calls(sid, "debate", "status", "debate")
    both("debate", "status", str(repo / "debate"))


def test_arch_debate_agreed_and_stuck(sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.script(["AGREED: SQLite.\n\nBrief: SQLite in WAL mode."])
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate")
    ended(sparring, sid, "completed")
    rounds_calls(sid, "debate", "status", "debate")
    (repo / "debate" / "round-1-claude.md").write_text("AGREED: SQLite.\n\nBrief: WAL.\n")
    _, agreed = both("debate", "status", "debate")  # writes round-1-agreed.md, once
    assert '"step": "agreed"' in agreed and (repo / "debate" / "round-1-agreed.md").is_file()
    rounds_calls(sid, "debate", "status", "debate")


@pytest.mark.parametrize("status", sorted(ENDINGS))
def test_deep_discussion_every_ending(sparring: Any, fake_codex: Any, repo: Path,
                                      status: str) -> None:
    mode, env, flags = ENDINGS[status]
    fake_codex.mode(mode, **env)
    sid = sparring("discuss", "new", "--args", "high").out["session"]
    both("discuss", "status", sid)  # not framed yet
    sparring("discuss", "frame", sid, *flags, input=FRAME)
    ended(sparring, sid, status)
    rounds_calls(sid, "discuss", "status", sid)


def test_deep_discussion_consensus_and_synthesis(sparring: Any, fake_codex: Any,
                                                 repo: Path) -> None:
    fake_codex.script(["The audit table wins.\n\n[CONSENSUS_REACHED]\n",
                       "## Agreed points\n- audit table\n"])
    sid = sparring("discuss", "new", "--args", "high").out["session"]
    sparring("discuss", "frame", sid, input=FRAME)
    ended(sparring, sid, "completed")
    rounds_calls(sid, "discuss", "status", sid)
    assert sparring("discuss", "synthesis", sid).exit_code == 0
    ended(sparring, sid, "completed")
    rounds_calls(sid, "discuss", "status", sid)


def test_errors_are_printed_as_the_cli_prints_them(sparring: Any, repo: Path,
                                                   fake_codex: Any) -> None:
    sid = sparring("init", "--skill", "think-about").out["session"]
    for argv in (("status", "no-such-session"), ("poll", sid), ("poll", "no-such-session"),
                 ("wait", "no-such-session", "--timeout", "0"),
                 ("discuss", "status", sid), ("discuss", "status", "nope"),
                 ("debate", "status", str(repo))):
        code, _ = both(*argv)
        assert code == 1, argv


def test_a_running_turn_is_reported_by_the_door_without_the_cli(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.mode("hang")
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate")
    for argv in (["wait", sid, "--timeout", "0"], ["poll", sid], ["status", sid],
                 ["debate", "status", "debate"]):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert door.run(argv) == 0
        assert '"running"' in printed.getvalue(), argv
    assert sparring("stop", sid).exit_code == 0


# What no call a debate makes each round may load (bench/status_bench.py measures them
# against `python -I -c pass`, goal 2.0x; docs/performance.md): the CLI and what only it
# needs (click, the template engine, the schema validator, the YAML reader), and what only
# starting a turn, recording its end or writing a report needs, each a few milliseconds.
HEAVY = {
    "click", "jinja2", "jsonschema", "yaml", "psutil", "sparring.cli.main",
    "subprocess", "secrets", "dataclasses", "inspect",
    "sparring.records", "sparring.ledger", "sparring.config", "sparring.turn.launch",
    "sparring.turn.runner", "sparring.guard", "sparring.workflows.audit",
}


def loaded_by_python_m_sparring(sparring: Any, repo: Path, argv: list[str]) -> set[str]:
    """The modules `python -m sparring ARGV` imported, once it printed the CLI's object."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "sparring", *argv],
                          cwd=repo, check=True, capture_output=True, text=True)
    assert done.stdout == sparring(*argv).raw
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "sparring.cli.door" in imported
    return imported


@pytest.mark.parametrize("argv", [
    ["status", "SID"], ["discuss", "status", "SID"], ["wait", "SID", "--timeout", "0"],
])
def test_python_m_sparring_answers_them_without_click(sparring: Any, fake_codex: Any,
                                                      repo: Path, argv: list[str]) -> None:
    """The real way in: `python -m sparring` prints the CLI's object and loads neither click
    nor anything else heavy (HEAVY) to do it."""
    fake_codex.mode("ok", reply="An answer.")
    sid = sparring("discuss", "new", "--args", "high").out["session"]
    sparring("discuss", "frame", sid, input=FRAME)
    ended(sparring, sid, "completed")
    argv = [sid if a == "SID" else a for a in argv]
    assert not loaded_by_python_m_sparring(sparring, repo, argv) & HEAVY


@pytest.mark.parametrize("argv", [["debate", "status", "debate"], ["poll", "SID"]])
def test_an_arch_debates_calls_load_nothing_heavy(sparring: Any, fake_codex: Any, repo: Path,
                                                  argv: list[str]) -> None:
    fake_codex.mode("ok", reply="Round 1: SQLite, because one writer is enough.")
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate")
    ended(sparring, sid, "completed")
    argv = [sid if a == "SID" else a for a in argv]
    assert not loaded_by_python_m_sparring(sparring, repo, argv) & HEAVY
