"""The calls a debate makes, answered by the entry (cli/entry.py, what `python -m
sparring` runs) without click: parsed against the declarations click's commands are made
from (cli/declared.py), they get the values click gives, run the same function, and print
what the CLI prints, byte for byte, in every workflow and for every way a turn ends.
(conftest's `sparring` asks the entry too after each call of the suite that changes
nothing; here each one is asked explicitly, and must have been answered by the entry.)
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

from sparring.cli import entry
from sparring.cli.main import main
from support.debates import ARCH_QUESTION, FRAME, Debate, answer, cpt


def both(*argv: str) -> tuple[int, str]:
    """The entry's answer, then the CLI's to the same state: they must be the same."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = entry.run(list(argv))
    assert code is not None, f"the entry left {argv} to the CLI"
    cli = io.StringIO()
    with contextlib.redirect_stdout(cli):
        cli_code = main(list(argv))
    assert (code, printed.getvalue()) == (cli_code, cli.getvalue()), argv
    return code, printed.getvalue()


def rounds_calls(sid: str, *own: str) -> None:
    """Every status call of a round, through the entry and the CLI."""
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
    code, first = both("wait", debate.sid)  # the first reveal, recorded by the entry's call
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


def test_a_running_turn_is_reported_by_the_entry_without_the_cli(
        sparring: Any, fake_codex: Any, repo: Path) -> None:
    fake_codex.mode("hang")
    sid = sparring("debate", "new", "debate", ARCH_QUESTION).out["session"]
    (repo / "debate" / "round-0-claude.md").write_text("SQLite.\n")
    sparring("debate", "round", "debate")
    for argv in (["wait", sid, "--timeout", "0"], ["poll", sid], ["status", sid],
                 ["debate", "status", "debate"]):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert entry.run(argv) == 0
        assert '"running"' in printed.getvalue(), argv
    assert sparring("stop", sid).exit_code == 0


# What a debate's every-round call must not load (a budget of 3.0x Python's own start,
# bench/status_bench.py): what lies outside the standard library, the CLI (click), and what
# only starting a turn needs. The standard library's modules load where they are used.
HEAVY = {
    "click", "jinja2", "yaml", "psutil", "sparring.cli.main",
    "sparring.turn.launch", "sparring.turn.runner", "sparring.guard.snapshot",
    "sparring.workflows.audit", "runpy",
}
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def loaded_by_the_launchers_way_in(sparring: Any, repo: Path, argv: list[str]) -> set[str]:
    """The modules the launcher's way in (`python -I -c ENTRY ARGV`, installer/layout.py)
    loads once Python has started, having printed the CLI's object. Without site (-S): this
    environment's editable install loads pathlib and re before anything else (a runtime
    install.py makes does not); sparring comes from the source folder instead, and what it
    needs beyond the standard library is missing, so a call the CLI answered would fail."""
    from sparring.installer.layout import ENTRY

    program = f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); {ENTRY}"

    def imported(*args: str) -> tuple[str, set[str]]:
        done = subprocess.run([sys.executable, "-S", "-X", "importtime", *args], cwd=repo,
                              check=True, capture_output=True, text=True)
        return done.stdout, {line.rsplit("|", 1)[-1].strip()
                             for line in done.stderr.splitlines()}

    printed, loaded = imported("-c", program, *argv)
    assert printed == sparring(*argv).raw
    assert "sparring.cli.entry" in loaded
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
    # Nor hashlib (OpenSSL, 4 ms): the runner's record is named only while a turn runs.
    assert "hashlib" not in loaded


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


# Command lines of every verb the entry takes: (argv, whether the entry parses it). A word
# S is a session, inbox/... a file the test makes.
CALLS = [
    (["poll", "S"], True), (["poll", "S", "--full"], True), (["poll", "--full", "S"], True),
    (["wait", "S"], True), (["wait", "S", "--timeout", "0"], True),
    (["wait", "S", "--timeout=5", "--full"], True), (["wait", "S", "--seal", "inbox/a.md"], True),
    (["wait", "S", "--timeout", "soon"], False), (["wait", "S", "--timeout", "nan"], False),
    (["wait", "S", "--timeout", "1", "--timeout", "2"], False), (["wait"], False),
    (["wait", "S", "T"], False), (["poll", "S", "--help"], False), (["poll", "-h"], False),
    (["status"], True), (["status", "S"], True), (["status", "--open"], True),
    (["status", "--cwd", "inbox"], True), (["status", "--cwd", "nowhere"], False),
    (["status", "--table"], False),
    (["start", "S", "--prompt-file", "inbox/p.md"], True), (["start", "S"], True),
    (["start", "S", "--template", "think-about/round1", "--vars-file", "inbox/r1.yaml"], True),
    (["start", "S", "--prompt-file=inbox/p.md", "--effort", "low", "--sandbox", "read-only",
      "--timeout", "60", "--budget-tokens", "5000", "--var", "A=b", "--var", "C=d"], True),
    (["start", "--prompt-file", "inbox/p.md", "S"], True),
    (["start", "S", "--effort", "maximum"], False), (["start", "S", "--budget-tokens", "0"],
                                                     False),
    (["start", "S", "--prompt-file", "inbox"], False), (["start", "S", "--prompt-file"], False),
    (["start", "S", "--", "--prompt-file"], False), (["start"], False), (["start", "-S"], False),
    (["resume", "S", "--recover"], True), (["resume", "S", "--accept-changes", "--schema", "none"],
                                           True),
    (["resume", "S", "--model", "m"], False), (["resume", "S", "--recover=yes"], False),
    (["guard", "check", "--baseline", "inbox/b.json"], True),
    (["guard", "check", "--baseline=inbox/b.json"], True), (["guard", "check"], False),
    (["debate", "round", "debate", "--file", "inbox/round.md"], True),
    (["debate", "round", "debate"], True), (["debate", "status", "debate"], True),
    (["debate", "new", "debate", "Which queue?"], True),
    (["debate", "round", "debate", "--effort", "low", "--timeout", "60"], True),
    (["discuss", "frame", "S", "--file", "inbox/frame.yaml"], True),
    (["discuss", "round", "S", "--accept-changes", "--file", "inbox/round.yaml"], True),
    (["discuss", "synthesis", "S", "--stall-after", "30"], True),
    (["debate", "round"], False), (["debate", "round", "d", "e"], False),
    (["debate", "round", "d", "--file", "a", "--file", "b"], False),
    (["nothing", "round", "d"], False), (["init", "--skill", "think-about"], False),
]


def click_values(argv: list[str]) -> dict[str, Any]:
    """The values click gives the callback of `argv`'s command."""
    from sparring.cli.main import cli

    command: Any = cli
    words = list(argv)
    while hasattr(command, "commands") and words and words[0] in command.commands:
        command = command.commands[words.pop(0)]
    made: dict[str, Any] = command.make_context(argv[0], words).params
    return made


@pytest.fixture
def inbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("SPARRING_EFFORT", "SPARRING_MODEL", "SPARRING_TIMEOUT",
                 "SPARRING_STALL_AFTER", "SPARRING_OFFLINE_AFTER"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "inbox"
    folder.mkdir()
    for name in ("p.md", "r1.yaml", "a.md", "b.json", "round.md", "frame.yaml", "round.yaml"):
        (folder / name).write_text("x\n")
    (tmp_path / "debate").mkdir()
    return folder


@pytest.mark.parametrize(("argv", "taken"), CALLS, ids=[" ".join(c[0]) for c in CALLS])
def test_the_entry_parses_what_click_parses_from_the_same_declarations(
        argv: list[str], taken: bool, inbox: Path) -> None:
    """Every call the entry takes gets the values click gives; anything else (a value that is
    not one, --help, a repeat, an option it does not declare) it leaves to click."""
    from sparring.cli import declared

    found = declared.find(argv)
    parsed = None if found is None else declared.parse(*found)
    if not taken:
        assert parsed is None, parsed
        return
    assert parsed is not None, argv
    clicked = click_values(argv)
    if argv[0] == "status":  # --table, a person's table, is click's alone: never taken here
        assert clicked.pop("table") is False
    assert parsed == clicked


@pytest.mark.parametrize("variable", ["SPARRING_EFFORT", "SPARRING_TIMEOUT"])
def test_a_setting_from_the_environment_is_read_as_click_reads_it(
        variable: str, inbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sparring.cli import declared

    argv = ["start", "S", "--prompt-file", "inbox/p.md"]
    monkeypatch.setenv(variable, "high" if variable == "SPARRING_EFFORT" else "90")
    assert declared.parse(*declared.find(argv)) == click_values(argv)  # type: ignore[misc]
    monkeypatch.setenv(variable, "bogus")  # click reports it: config_invalid
    assert declared.parse(*declared.find(argv)) is None  # type: ignore[misc]
    assert json.loads(_cli(argv))["error"]["code"] == "config_invalid"


def _cli(argv: list[str]) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        main(argv)
    return printed.getvalue()


def test_a_bug_in_a_verb_the_entry_runs_is_internal_error_and_runs_once(
        sparring: Any, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One failure policy: a verb the entry ran is never run again by the CLI."""
    sid = sparring("init", "--skill", "think-about").out["session"]
    calls: list[str] = []

    def broken(*args: Any) -> dict[str, Any]:
        calls.append("ran")
        raise KeyError("a bug")

    monkeypatch.setattr("sparring.commands.poll.poll", broken)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = entry.run(["poll", sid])
    assert code == 1 and json.loads(printed.getvalue())["error"]["code"] == "internal_error"
    assert calls == ["ran"]


@pytest.mark.parametrize("argv", [
    ["debate", "round", "debate", "--file", "{file}"],
    ["debate", "round", "debate", "--stand-in", "{file}"],
    ["start", "{session}", "--prompt-file", "{file}"],
], ids=lambda argv: " ".join(argv[:2]))
@pytest.mark.parametrize("way", ["outside", "link"])
def test_a_file_the_entry_takes_is_read_only_inside_the_project(
        argv: list[str], way: str, sparring: Any, fake_codex: Any, repo: Path,
        tmp_path: Path) -> None:
    """The launcher is approved with any arguments: a file named to a call the entry
    runs without click is read only inside the project, never through a link out of it,
    and a refused one starts nothing and writes nothing."""
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
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = entry.run(words)
    out = json.loads(printed.getvalue())
    assert code != 0 and out["error"]["code"] == (
        "path_outside_project" if way == "outside" else "path_is_link"), out
    assert sorted(p.name for p in (repo / "debate").iterdir()) == before
    assert fake_codex.turn_calls() == [] and secret.read_text() == "the user's private notes\n"
