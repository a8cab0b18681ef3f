"""poll and wait without the CLI (cli/door.py): an ended turn read quickly (turn/quick.py),
anything else through the verb's own function; what `python -m sparring` answers by itself
prints what the CLI prints, and everything else is left to the CLI.

(Every poll, wait and status of the suite is also held to the CLI's output by conftest's
`sparring`; tests/test_door.py holds every workflow's status calls to it.)
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

from sparring import fastjson, records
from sparring.cli import door as quick
from sparring.store import shapes
from sparring.turn import quick as reader
from sparring.workflows import registry


def answered(*argv: str) -> tuple[int, dict[str, Any]] | None:
    """quick.run's exit status and object, or None when it left the call to the CLI."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = quick.run(list(argv))
    if code is None:
        assert buffer.getvalue() == "", "nothing is printed before the CLI takes over"
        return None
    return code, json.loads(buffer.getvalue())


def read_quickly(verb: str, session: str) -> dict[str, Any] | None:
    """turn/quick.py's object, or None when it leaves the call to the verb's function."""
    try:
        return reader.ended_turn(verb, session)
    except reader.SlowPath:
        return None


def ended(sparring: Any, session: str) -> dict[str, Any]:
    done = sparring("wait", session, "--timeout", "30").out
    assert done["status"] != "running", done
    return dict(done)


def test_an_ended_turn_is_answered_without_the_cli(sparring: Any, session: str,
                                                   fake_codex: Any) -> None:
    fake_codex.mode("ok", reply='{"verdict": "SQLite", "points": []}')
    sparring("start", session, input=b"q")
    cli = ended(sparring, session)
    found = answered("wait", session, "--timeout", "5")
    assert found is not None
    assert found == (0, cli)
    assert found[1]["review"] == {"data": {"verdict": "SQLite", "points": []}}
    polled = {key: value for key, value in cli.items() if key != "wait_timed_out"}
    assert answered("poll", session) == (0, {**polled, "verb": "poll"})
    assert answered("wait", "--timeout=0", session) == (0, cli)


def test_a_session_named_by_its_folder(sparring: Any, session: str, fake_codex: Any,
                                       repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    ended(sparring, session)
    folder = repo / ".sparring" / "sessions" / session
    by_id = answered("poll", session)
    assert by_id is not None and answered("poll", str(folder)) == by_id
    monkeypatch.chdir(repo / ".sparring")
    assert answered("poll", f"sessions/{session}") == answered("poll", str(folder))
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")  # the root is found from a subfolder, as the CLI does
    assert answered("poll", session) is not None


def test_a_failed_turn_prints_its_error_with_the_launchers_commands(
        sparring: Any, session: str, fake_codex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_codex.mode("rate_limited")
    sparring("start", session, input=b"q")
    sparring("wait", session, "--timeout", "30")  # a busy machine may outrun the start window
    monkeypatch.setenv("SPARRING_LAUNCHER", "/opt/skills/think-about/sparring")
    cli = sparring("poll", session)
    found = answered("poll", session)
    assert found == (0, cli.out)
    assert found[1]["error"]["code"] == "rate_limited" and found[1]["recoverable"] is True
    assert "`/opt/skills/think-about/sparring resume" in found[1]["error"]["hint"]
    monkeypatch.setenv("SPARRING_LAUNCHER", "/opt/my skills/sparring")  # in double quotes
    assert answered("poll", session) == (0, sparring("poll", session).out)
    assert '`"/opt/my skills/sparring" resume' in sparring("poll", session).out["error"]["hint"]


def test_a_withheld_answer_and_a_guard_finding(sparring: Any, repo: Path, fake_codex: Any,
                                               tmp_path: Path) -> None:
    sid = sparring("init", "--skill", "think-about").out["session"]
    fake_codex.script([{"mode": "writes_file", "write_path": "notes.txt",
                        "reply": {"position": "p", "points": [], "proposed_summary": None,
                                  "convergence": {"state": "continue", "reason": "r"},
                                  "approve_summary": None}}])
    sparring("start", sid, "--template", "think-about/round1", "--var", "QUESTION=q")
    cli = ended(sparring, sid)
    found = answered("wait", sid)
    assert found == (0, cli)
    assert found[1]["review"] is None and "seal" in found[1]["review_withheld"]
    assert found[1]["guard"]["clean"] is False
    assert [c["path"] for c in found[1]["guard"]["changed"]] == ["notes.txt"]


def test_the_first_reveal_is_left_to_the_verb_which_records_it(
        sparring: Any, repo: Path, fake_codex: Any, scratch: Path) -> None:
    sid = sparring("init", "--skill", "think-about").out["session"]
    fake_codex.mode("ok", reply=json.dumps({
        "position": "p", "points": [], "convergence": {"state": "continue", "reason": "r"},
        "proposed_summary": None, "approve_summary": None}))
    sparring("start", sid, "--template", "think-about/round1", "--var", "QUESTION=q")
    ended(sparring, sid)
    analysis = scratch / "analysis.md"
    analysis.write_text("mine\n")
    assert sparring("seal", sid, "--file", str(analysis)).exit_code == 0
    assert read_quickly("wait", sid) is None
    revealed = answered("wait", sid)  # through commands/poll.py, which records the reveal
    assert revealed is not None and revealed[1]["review"]["data"]["position"] == "p"
    assert read_quickly("wait", sid) == {
        k: v for k, v in revealed[1].items() if k not in ("schema_version", "ok", "verb")}
    assert sparring("wait", sid).out == revealed[1]


@pytest.mark.parametrize("argv", [
    ["poll", "SID", "--full"], ["wait", "SID", "--seal", "a.md"], ["poll", "SID", "--help"],
    ["wait", "SID", "--timeout", "nan"], ["wait", "SID", "--timeout", "-1"],
    ["wait", "SID", "--timeout", "1e9"], ["wait", "SID", "--timeout"], ["poll"],
    ["poll", "SID", "SID"], ["status", "SID", "--table"], ["status"], ["status", "--help"],
    ["poll", "SID", "--timeout", "5"], ["debate", "status"], ["discuss", "status", "--help"],
    ["debate", "status", "SID"], ["discuss", "new"], [],
])
def test_what_it_does_not_know_goes_to_the_cli(sparring: Any, session: str, fake_codex: Any,
                                                argv: list[str]) -> None:
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    ended(sparring, session)
    assert answered(*[session if a == "SID" else a for a in argv]) is None


@pytest.mark.parametrize(("mode", "env"), [
    ("malformed", {}),  # the CLI counts and reports such lines
    ("ok", {"reply": '```json\n{"a": 1}\n```'}),  # a fenced answer
])
def test_unusual_events_go_to_the_cli(sparring: Any, session: str, fake_codex: Any,
                                      mode: str, env: dict[str, str]) -> None:
    fake_codex.mode(mode, **env)
    sparring("start", session, input=b"q")
    ended(sparring, session)
    assert read_quickly("poll", session) is None
    assert answered("poll", session) == (0, sparring("poll", session).out)


def test_a_running_turn_an_unknown_session_and_no_turn_go_to_the_verb(
        sparring: Any, session: str, fake_codex: Any) -> None:
    assert read_quickly("poll", session) is None  # no turn yet
    assert answered("poll", session) == (1, sparring("poll", session).out)
    assert read_quickly("poll", "no-such-session") is None
    unknown = answered("poll", "no-such-session")
    assert unknown is not None and unknown[1]["error"]["code"] == "session_not_found"
    assert unknown == (1, sparring("poll", "no-such-session").out)
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    assert read_quickly("wait", session) is None
    running = answered("wait", session, "--timeout", "0")
    assert running is not None and running[1]["status"] == "running"
    assert running[1]["wait_timed_out"] is True
    sparring("stop", session)
    stopped = answered("wait", session)
    assert stopped is not None and stopped[1]["status"] == "stopped"


def test_a_debate_or_a_discussion_gets_its_status_from_the_verb(
        sparring: Any, repo: Path, fake_codex: Any, scratch: Path) -> None:
    fake_codex.mode("ok", reply="Round one.")
    args = scratch / "args.txt"
    args.write_text("high CODEX")
    sid = sparring("discuss", "new", "--file", str(args)).out["session"]
    frame = scratch / "frame.yaml"
    frame.write_text("TOPIC: t\nFRAMING: f\nCLAUDE_VIEW: v\n")
    assert sparring("discuss", "frame", sid, "--file", str(frame)).exit_code == 0
    done = ended(sparring, sid)
    assert "discussion" in done
    assert read_quickly("wait", sid) is None
    assert answered("wait", sid) == (0, sparring("wait", sid).out)


def test_keys_the_runner_adds_to_any_session_keep_it_quick(sparring: Any, session: str,
                                                           fake_codex: Any, repo: Path) -> None:
    """Only a workflow's own record sends a session past the quick reader (the verb adds
    that workflow's status): what the runner writes into any session (a finalize, a
    budget's refusal) does not."""
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    ended(sparring, session)
    assert sparring("finalize", session).exit_code == 0
    refused = sparring("resume", session, "--budget-tokens", "1", input=b"again")
    assert refused.error_code == "budget_exhausted"
    data = json.loads((repo / ".sparring" / "sessions" / session / "session.json").read_text())
    assert {"finalized_at", "budget_stop"} <= set(data)
    assert read_quickly("poll", session) is not None
    assert answered("poll", session) == (0, sparring("poll", session).out)


def test_the_session_formats_own_keys_are_all_but_the_workflows_records() -> None:
    declared = set(records.SessionRecord.__annotations__)
    own = {flow.status_key for flow in registry.WORKFLOWS.values() if flow.status_key}
    assert own and declared - own <= shapes.SESSION_KEYS
    assert not shapes.SESSION_KEYS & own


def test_python_m_sparring_answers_alone_and_as_the_cli_does(
        sparring: Any, session: str, fake_codex: Any, repo: Path) -> None:
    """The real way in: `python -m sparring` prints the CLI's object, and loads neither
    click, json (nor re) nor the CLI to do it."""
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    cli = ended(sparring, session)
    done, imported = importing("-m", "sparring", "wait", session, cwd=repo)
    assert json.loads(done) == cli
    assert "sparring.cli.door" in imported
    # Beyond what Python loads to start (an editable install's finder brings re along).
    extra = imported - importing("-c", "pass", cwd=repo)[1]
    assert not extra & {"click", "sparring.cli.main", "sparring.turn.view"}


def test_guard_check_is_answered_without_the_cli(sparring: Any, repo: Path,
                                                 scratch: Path) -> None:
    """`guard check --baseline FILE` (either spelling) prints what the CLI prints, clean,
    with changes, or failing; a folder, --help or a typo is the CLI's business."""
    saved = scratch / "base.json"
    assert sparring("guard", "snapshot", "--out", str(saved)).exit_code == 0
    clean = answered("guard", "check", "--baseline", str(saved))
    assert clean is not None and clean[0] == 0 and clean[1]["clean"] is True
    (repo / "README.md").write_text("changed\n")
    changed = sparring("guard", "check", "--baseline", str(saved)).out
    assert changed["changed"] == [{"path": "README.md", "change": "modified"}]
    assert answered("guard", "check", "--baseline", str(saved)) == (0, changed)
    assert answered("guard", "check", f"--baseline={saved}") == (0, changed)
    missing = answered("guard", "check", "--baseline", str(scratch / "nope.json"))
    assert missing is not None and missing[0] == 1
    assert missing[1]["error"]["code"] == "file_not_found"
    for argv in (["--baseline", str(scratch)], ["--help"], ["--baseline"], [],
                 ["--baseline", str(saved), "--extra"], ["--baseline="]):
        assert answered("guard", "check", *argv) is None, argv


def test_python_m_sparring_guard_check_loads_no_cli(sparring: Any, repo: Path,
                                                   scratch: Path) -> None:
    saved = scratch / "base.json"
    assert sparring("guard", "snapshot", "--out", str(saved)).exit_code == 0
    (repo / "new.txt").write_text("new\n")
    done, imported = importing("-m", "sparring", "guard", "check", "--baseline", str(saved),
                               cwd=repo)
    assert json.loads(done) == sparring("guard", "check", "--baseline", str(saved)).out
    assert "sparring.guard.check" in imported
    assert not imported & {"click", "sparring.cli.main", "sparring.cli.guard"}


def importing(*argv: str, cwd: Path) -> tuple[str, set[str]]:
    """stdout of `python -X importtime ARGV`, and the modules it imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=cwd, check=True,
                          capture_output=True, text=True)
    return done.stdout, {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}


@pytest.mark.parametrize("text", [
    '{"a": [1, 2.5, -0, 1e400, "x\\u00e9\\ud800", null, true]}', " 7 ", "NaN", '"\ufeff"',
    "\ufeff{}", "{} x", "", "  ", '{"a": 1,}', '"ctrl\x01"', '{"k": "v"}\r\n', "[",
])
def test_fastjson_reads_as_json_does(text: str) -> None:
    try:
        expected: Any = ("ok", repr(json.loads(text)))
    except ValueError:
        expected = ("error",)
    try:
        found: Any = ("ok", repr(fastjson.loads(text)))
    except ValueError:
        found = ("error",)
    assert found == expected


@pytest.mark.parametrize("raw", [
    b'{"type": "x"}', b'\xef\xbb\xbf{"a": 1}', '{"a": "\u00e9"}'.encode("utf-16"),
    '{"a": 1}'.encode("utf-16-le"), '{"a": 1}'.encode("utf-32-be"), b"\xff\xfe", b"7",
    b"\x80{}", b'{"a": "\xed\xa0\x80"}', b"", b"  [1] ",
])
def test_fastjson_reads_bytes_as_json_does(raw: bytes) -> None:
    """Codex's events are read as bytes, by the CLI and the fast path alike (events.py)."""
    try:
        expected: Any = ("ok", repr(json.loads(raw)))
    except ValueError:
        expected = ("error",)
    try:
        found: Any = ("ok", repr(fastjson.loads(raw)))
    except ValueError:
        found = ("error",)
    assert found == expected


def test_an_answer_nested_past_the_bound_is_text_on_both_paths(sparring: Any, session: str,
                                                               fake_codex: Any) -> None:
    """One reader of Codex's answer (events.parse_review): nested past what sparring reads,
    the answer is shown as text by the CLI and the fast path alike."""
    deep = "[" * 40 + "]" * 40
    fake_codex.mode("ok", reply=deep)
    sparring("start", session, input=b"q")
    cli = ended(sparring, session)
    assert cli["review"] == {"text": deep}
    assert answered("wait", session) == (0, cli)


def test_fastjson_writes_as_json_does() -> None:
    value = {"é\u2028": ["\ud800", 1, 2.5, 1e400, float("nan"), -0.0, None, True, {}],
             "nested": {"k": [[], {"x": "`sparring poll`"}]}, 3: "int key", None: 1}
    assert fastjson.dumps(value) == json.dumps(value, ensure_ascii=False)
    with pytest.raises(TypeError, match="not JSON serializable"):
        fastjson.dumps({"a": object()})


def test_ctrl_c_is_one_json_object_as_the_cli_prints_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(verb: str, ref: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(reader, "ended_turn", interrupted)
    found = answered("poll", "any-session")
    assert found is not None and found[0] == 130
    assert found[1]["ok"] is False and found[1]["error"]["code"] == "interrupted"
