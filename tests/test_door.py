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
# needs (click, the template engine, the schema validator, the YAML reader), what only
# starting a turn, recording its end or writing a report needs, each a few milliseconds,
# and what the launcher's way in and the readers of every round no longer load: runpy (and
# importlib), OpenSSL's hashlib, the process layer and the runners' records, typing (for the
# type checker only), json (fastjson reads as it does), pathlib (with fnmatch,
# urllib.parse and ipaddress: the readers of every round work on str paths), and re, enum
# and contextlib (markers and hints are read with string methods, locks and updates import
# contextlib where taken).
# What a debate's every-round call must not load (a budget of 3.0x Python's own start,
# bench/status_bench.py): what lies outside the standard library, the CLI (click), and what
# only starting a turn needs. The standard library's modules load where they are used.
HEAVY = {
    "click", "jinja2", "jsonschema", "yaml", "psutil", "sparring.cli.main",
    "sparring.turn.launch", "sparring.turn.runner", "sparring.guard.snapshot",
    "sparring.workflows.audit", "runpy",
}
# What think-about's quick poll and wait (turn/quick.py) load neither, beyond HEAVY.
QUICK_HEAVY = {"sparring.turn.view", "sparring.commands.poll"}
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def loaded_by_the_launchers_way_in(sparring: Any, repo: Path, argv: list[str]) -> set[str]:
    """The modules the launcher's way in (`python -I -c ENTRY ARGV`, installer/layout.py)
    loads once Python has started, having printed the CLI's object. Without site (-S): this
    environment's editable install loads pathlib and re before anything else (a runtime
    install.py makes does not); sparring comes from the source folder instead, and what it
    needs beyond the standard library is missing, so a call the CLI answered would fail."""
    from sparring.installer.layout import ENTRY

    entry = f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); {ENTRY}"

    def imported(*args: str) -> tuple[str, set[str]]:
        done = subprocess.run([sys.executable, "-S", "-X", "importtime", *args], cwd=repo,
                              check=True, capture_output=True, text=True)
        return done.stdout, {line.rsplit("|", 1)[-1].strip()
                             for line in done.stderr.splitlines()}

    printed, loaded = imported("-c", entry, *argv)
    assert printed == sparring(*argv).raw
    assert "sparring.cli.door" in loaded
    return loaded - imported("-c", "pass")[1]


@pytest.mark.parametrize("argv", [
    ["status", "SID"], ["discuss", "status", "SID"], ["wait", "SID", "--timeout", "0"],
])
def test_python_m_sparring_answers_them_without_click(sparring: Any, fake_codex: Any,
                                                      repo: Path, argv: list[str]) -> None:
    """The real way in, the launcher's: it prints the CLI's object and loads neither click
    nor anything else heavy (HEAVY) to do it."""
    fake_codex.mode("ok", reply="An answer.")
    sid = sparring("discuss", "new", "--args", "high").out["session"]
    sparring("discuss", "frame", sid, input=FRAME)
    ended(sparring, sid, "completed")
    argv = [sid if a == "SID" else a for a in argv]
    loaded = loaded_by_the_launchers_way_in(sparring, repo, argv)
    assert not loaded & HEAVY, loaded & HEAVY


@pytest.mark.parametrize("argv", [["debate", "status", "debate"], ["poll", "SID"]])
def test_an_arch_debates_calls_load_nothing_heavy(sparring: Any, fake_codex: Any, repo: Path,
                                                  argv: list[str]) -> None:
    fake_codex.mode("ok", reply="Round 1: SQLite, because one writer is enough.")
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate")
    ended(sparring, sid, "completed")
    argv = [sid if a == "SID" else a for a in argv]
    loaded = loaded_by_the_launchers_way_in(sparring, repo, argv)
    assert not loaded & HEAVY, loaded & HEAVY


def test_think_abouts_quick_wait_loads_only_what_it_reads(sparring: Any, fake_codex: Any,
                                                          repo: Path) -> None:
    """turn/quick.py answers from session.json and the turn's events alone: no pathlib, no
    re, no json, no typing, none of the CLI's path (QUICK_HEAVY), nor anything in HEAVY."""
    fake_codex.mode("ok", reply=json.dumps(answer([cpt("X-1", "agree")])))
    sid = sparring("init", "--skill", "think-about").out["session"]
    sparring("start", sid, "--template", "think-about/round1", "--var", "QUESTION=Redis?",
             "--var", "CONTEXT=none")
    ended(sparring, sid, "completed")
    sparring("wait", sid)  # the first reveal is recorded: the CLI's path; later ones are quick
    loaded = loaded_by_the_launchers_way_in(sparring, repo, ["wait", sid])
    assert "sparring.turn.quick" in loaded
    assert not loaded & (HEAVY | QUICK_HEAVY)


def test_a_debates_wait_reads_its_session_once_before_its_status(
        sparring: Any, fake_codex: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """turn/quick.py reads and checks the session; a workflow that adds where it stands
    sends the call on to commands/poll.py, which takes the session as quick.py read it
    instead of reading session.json again (the workflow's status reads it for itself)."""
    fake_codex.mode("ok", reply="Round 1: SQLite, because one writer is enough.")
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate")
    ended(sparring, sid, "completed")
    from sparring.commands import poll
    from sparring.store import witness

    reads: list[str] = []
    real_read = witness.read

    def counted(path: Any) -> bytes | None:
        if str(path).endswith(f"{sid}/session.json"):
            reads.append(str(path))
        return real_read(path)

    monkeypatch.setattr(witness, "read", counted)
    shown: list[dict[str, Any]] = []
    real_status = poll._shown

    def before_status(*args: Any) -> dict[str, Any]:
        shown.append({"reads": len(reads)})
        return real_status(*args)

    monkeypatch.setattr(poll, "_shown", before_status)
    code, printed = both("wait", sid)  # the door's answer, then the CLI's
    assert code == 0 and json.loads(printed)["debate"]["step"]
    assert shown[0]["reads"] == 1  # quick.py's read alone, until the debate's status


def test_a_debates_status_reads_no_other_workflows_sessions(
        sparring: Any, fake_codex: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`debate status DIR` finds the folder's session among the project's arch-debates
    only: sessions of the other workflows, however many and however new, are not read."""
    fake_codex.mode("ok", reply="Round 1: SQLite, because one writer is enough.")
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate")
    ended(sparring, sid, "completed")
    others = [sparring("init", "--skill", skill).out["session"]
              for skill in ("think-about", "dual-model", "deep-discussion")]
    from sparring.store import witness

    reads: list[str] = []
    real_read = witness.read

    def counted(path: Any) -> bytes | None:
        reads.append(str(path))
        return real_read(path)

    monkeypatch.setattr(witness, "read", counted)
    code, printed = both("debate", "status", "debate")
    assert code == 0 and json.loads(printed)["session"] == sid
    assert reads and not [p for p in reads if any(f"/{o}/" in p for o in others)]


LAUNCHES = [
    ["start", "S", "--prompt-file", "inbox/p.md"],
    ["start", "S", "--template", "think-about/round1", "--vars-file", "inbox/r1.yaml"],
    ["start", "S", "--vars-file", "inbox/r1.yaml", "--template", "dual-model/dispatch"],
    ["resume", "S", "--prompt-file", "inbox/p.md"],
    ["resume", "S", "--template", "think-about/round2", "--vars-file", "inbox/r2.yaml"],
    ["start", "S"],  # the prompt from stdin
    ["resume", "S"],
]
NOT_TAKEN = [
    ["start", "S", "--prompt-file=inbox/p.md"], ["start", "--prompt-file", "p.md", "S"],
    ["start", "S", "--effort", "low", "--prompt-file", "p.md"], ["start", "S", "--help"],
    ["start", "S", "--prompt-file", "p.md", "--prompt-file", "q.md"],
    ["start", "S", "--prompt-file", "-"], ["start", "S", "--prompt-file"], ["start", "-S"],
    ["resume", "S", "--recover"], ["start", "S", "--", "--prompt-file"], ["start"],
    ["start", "S", "--prompt-file", "."], ["start", "S", "--template", "t", "--var", "A=b"],
]


def click_params(argv: list[str]) -> dict[str, Any]:
    from sparring.cli.main import cli

    command = cli.commands[argv[0]]  # type: ignore[attr-defined]
    params: dict[str, Any] = command.make_context(argv[0], argv[1:]).params
    return params


@pytest.mark.parametrize("argv", LAUNCHES, ids=" ".join)
def test_start_and_resume_get_from_the_door_what_click_gives_them(
        argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The first door runs start and resume as the skills call them without click: the
    callback's parameters are the ones click would have parsed, key for key, and the verb
    gets the very call the CLI's callback makes."""
    for name in door._LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert door.launch_params(argv) == click_params(argv)
    calls: list[tuple[Any, ...]] = []

    def record(*args: Any) -> dict[str, Any]:
        calls.append(args)
        return {}

    monkeypatch.setattr(f"sparring.commands.start.{argv[0]}", record)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
        assert door.launching(argv) == 0
    assert len(calls) == 2 and calls[0] == calls[1]


@pytest.mark.parametrize("argv", NOT_TAKEN, ids=" ".join)
def test_anything_else_is_left_to_the_cli(argv: list[str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in door._LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert door.launch_params(argv) is None


# A workflow's own verbs that start a turn, as their SKILL.md calls them.
VERB_LAUNCHES = [
    ["debate", "round", "debate", "--file", "inbox/round.md"],
    ["debate", "round", "debate"],
    ["debate", "round", "debate", "--stand-in", "inbox/stand-in.md"],
    ["discuss", "frame", "S", "--file", "inbox/frame.yaml"],
    ["discuss", "round", "S", "--file", "inbox/round.yaml"],
    ["discuss", "round", "S", "--accept-changes", "--file", "inbox/round.yaml"],
    ["discuss", "synthesis", "S"],
]
VERB_NOT_TAKEN = [
    ["debate", "round", "debate", "--effort", "low"], ["debate", "round", "debate", "--file"],
    ["debate", "round", "debate", "--file", "-"], ["debate", "round", "--file", "r.md", "d"],
    ["debate", "round"], ["debate", "round", "d", "--file", "a", "--file", "b"],
    ["debate", "round", "d", "e"], ["debate", "round", "d", "--help"],
    ["debate", "new", "d", "Which queue?"], ["debate", "status", "d"],
    ["discuss", "round", "S", "--timeout", "60"], ["discuss", "round", "S", "--file=r.yaml"],
    ["debate", "round", "d", "--file", "."], ["nothing", "round", "d"],
]


def click_verb_values(argv: list[str]) -> dict[str, Any]:
    """What cli/workflows.py's callback hands registry.call for `argv`."""
    calls: list[dict[str, Any]] = []

    def record(flow: Any, verb: str, values: dict[str, Any], cwd: Path) -> dict[str, Any]:
        calls.append({"flow": flow.name, "verb": verb, "values": values, "cwd": cwd})
        return {}

    import sparring.workflows.registry as registry

    real = registry.call
    registry.call = record  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(list(argv)) == 0
        with contextlib.redirect_stdout(io.StringIO()):
            assert door.launching(list(argv)) == 0
    finally:
        registry.call = real  # type: ignore[assignment]
    assert len(calls) == 2
    return {"cli": calls[0], "door": calls[1]}


@pytest.mark.parametrize("argv", VERB_LAUNCHES, ids=" ".join)
def test_a_workflows_turn_verbs_get_from_the_door_what_click_gives_them(
        argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`debate round DIR --file F` and the discussion's turn verbs, as the skills call them:
    the first door makes the very call the CLI's callback makes, without click."""
    monkeypatch.chdir(tmp_path)
    for name in door._LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert door.workflow_launch(argv) is not None
    made = click_verb_values(argv)
    assert made["door"] == made["cli"]


@pytest.mark.parametrize("argv", VERB_NOT_TAKEN, ids=" ".join)
def test_any_other_workflow_verb_call_is_left_to_the_cli(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in door._LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert door.workflow_launch(argv) is None


def test_the_door_knows_every_setting_click_reads_for_a_call_it_takes() -> None:
    """With any of them set the CLI answers: a new one click reads must be added there."""
    from sparring.cli.main import cli

    commands = [cli.commands["start"], cli.commands["resume"]]  # type: ignore[attr-defined]
    for group in ("debate", "discuss"):
        commands += cli.commands[group].commands.values()  # type: ignore[attr-defined]
    read = {p.envvar for command in commands for p in command.params if p.envvar}
    assert read and read <= set(door._LAUNCH_VARIABLES)


@pytest.mark.parametrize("variable", door._LAUNCH_VARIABLES)
def test_a_setting_click_reads_from_the_environment_is_left_to_the_cli(
        variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(variable, "high")
    assert door.launch_params(LAUNCHES[0]) is None
    assert door.workflow_launch(VERB_LAUNCHES[0]) is None


@pytest.mark.parametrize("argv", [
    ["debate", "round", "debate", "--file", "{file}"],
    ["debate", "round", "debate", "--stand-in", "{file}"],
    ["start", "{session}", "--prompt-file", "{file}"],
], ids=lambda argv: " ".join(argv[:2]))
@pytest.mark.parametrize("way", ["outside", "link"])
def test_a_file_the_door_takes_is_read_only_inside_the_project(
        argv: list[str], way: str, sparring: Any, fake_codex: Any, repo: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher is approved with any arguments: a file named to a call the first door
    runs without click is read only inside the project, never through a link out of it,
    and a refused one starts nothing and writes nothing."""
    for name in door._LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    secret = tmp_path / "secret.md"
    secret.write_text("the user's private notes\n")
    session = sparring("init", "--skill", "deep-discussion").out["session"]
    assert sparring("debate", "new", "debate", "Which queue?").exit_code == 0
    before = sorted(p.name for p in (repo / "debate").iterdir())
    named = secret
    if way == "link":
        named = repo / ".sparring" / "inbox" / "round.md"
        named.parent.mkdir(parents=True, exist_ok=True)
        named.symlink_to(secret)
    words = [w.format(file=named, session=session) for w in argv]
    assert door.launch_params(words) is not None or door.workflow_launch(words) is not None
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = door.launching(words)
    out = json.loads(printed.getvalue())
    assert code != 0 and out["error"]["code"] == (
        "path_outside_project" if way == "outside" else "path_is_link"), out
    assert sorted(p.name for p in (repo / "debate").iterdir()) == before
    assert fake_codex.turn_calls() == [] and secret.read_text() == "the user's private notes\n"
