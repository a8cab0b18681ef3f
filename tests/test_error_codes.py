"""Every error code in the registry (sparring/errors.py) is pinned: for each code one scenario
provokes it from outside, through the CLI (the launcher for `runtime_missing`), against real git
and the fake codex, and the test checks the one JSON error it ends in: that code, a message and
a hint saying what to do. A code added to the registry without a scenario here fails
`test_every_registered_code_is_pinned`; a code removed fails
`test_the_pinned_codes_are_the_registry`.

A verb's error is the whole output (`ok: false` and `error`); a failed Codex turn is reported by
`poll`/`wait` as the turn's `error` beside its status (the verb itself succeeded).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparring.errors import CODES
from support.barepath import BARE_PATH
from support.debates import FRAME, ArchDebate, Debate, answer, cpt, pt

ROOT = Path(__file__).resolve().parents[1]
ENDED = {"failed", "timeout", "stalled", "stopped"}
# Runs the rest of argv in this python with Ctrl-C's signal at its default, as in a terminal:
# a suite started as a shell script's background job inherits SIGINT ignored, and Python then
# (as it should) leaves it ignored, so the Ctrl-C a test sends would never arrive.
AS_IN_A_TERMINAL = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


@dataclass
class Case:
    """What a scenario may use: the in-process CLI, the fake codex, a git repository."""

    sparring: Any
    fake: Any
    repo: Path
    tmp: Path
    monkeypatch: pytest.MonkeyPatch

    def run(self, *args: str, input: bytes | None = None) -> Any:
        return self.sparring(*args, input=input)

    def session(self, skill: str = "deep-discussion") -> str:
        created = self.run("init", "--skill", skill)
        assert created.exit_code == 0, created.raw
        return str(created.out["session"])

    @property
    def inbox(self) -> Path:
        """Where Claude writes what it hands in (files are read only inside the project)."""
        from sparring.store.workspace import inbox_dir

        return inbox_dir(self.repo, create=True)

    def file(self, name: str, content: str | bytes) -> str:
        path = self.inbox / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return str(path)

    def state(self, sid: str) -> Path:
        return self.repo / ".sparring" / "sessions" / sid / "session.json"

    def turn(self, sid: str) -> dict[str, Any]:
        turns: list[dict[str, Any]] = json.loads(self.state(sid).read_text())["turns"]
        return turns[-1]

    def think_about(self) -> Debate:
        return Debate(self.sparring, self.fake, self.inbox)


def failed(result: Any) -> dict[str, Any]:
    """The one error of a verb that failed."""
    assert result.out.get("ok") is False, result.raw[:400]
    assert set(result.out) == {"schema_version", "ok", "verb", "error"}, result.raw[:400]
    error: dict[str, Any] = result.out["error"]
    return error


def ended(result: Any) -> dict[str, Any]:
    """The error of a Codex turn that ended badly, as `poll`/`wait` print it."""
    assert result.exit_code == 0 and result.out["status"] in ENDED, result.raw[:400]
    error: dict[str, Any] = result.out["error"]
    return error


def started_then_ended(case: Case, sid: str, *flags: str,
                       prompt: bytes = b"the question") -> dict[str, Any]:
    """Start a turn and wait for its end: a fault codex shows within its first second is
    start's own error, a later one the turn's."""
    started = case.run("start", sid, *flags, input=prompt)
    if started.exit_code != 0:
        return failed(started)
    return ended(case.run("wait", sid, "--timeout", "30"))


def wait_for(check: Callable[[], bool], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


PROVOKE: dict[str, Callable[[Case], dict[str, Any]]] = {}


def provokes(code: str) -> Callable[[Callable[[Case], dict[str, Any]]],
                                    Callable[[Case], dict[str, Any]]]:
    def register(scenario: Callable[[Case], dict[str, Any]]) -> Callable[[Case], dict[str, Any]]:
        assert code not in PROVOKE, code
        PROVOKE[code] = scenario
        return scenario
    return register


# -- arguments, configuration, files -----------------------------------------------------------

@provokes("usage_error")
def _usage_error(case: Case) -> dict[str, Any]:
    result = case.run("start")
    assert result.exit_code == 2
    return failed(result)


@provokes("config_invalid")
def _config_invalid(case: Case) -> dict[str, Any]:
    sid = case.session()
    (case.repo / "sparring.yaml").write_text("effort: [unclosed\n")
    return failed(case.run("start", sid, input=b"q"))


@provokes("file_not_found")
def _file_not_found(case: Case) -> dict[str, Any]:
    return failed(case.run("start", case.session(), "--prompt-file",
                           str(case.inbox / "nothing")))


@provokes("path_outside_project")
def _path_outside_project(case: Case) -> dict[str, Any]:
    secret = case.tmp / "credentials"  # beside the project, not in it
    secret.write_text("aws_secret_access_key = s3cr3t\n")
    error = failed(case.run("start", case.session(), "--prompt-file", str(secret)))
    assert case.fake.turn_calls() == [] and "s3cr3t" not in json.dumps(error)
    return error


@provokes("path_is_link")
def _path_is_link(case: Case) -> dict[str, Any]:
    secret = case.tmp / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    (case.inbox / "round.md").symlink_to(secret)
    return failed(case.run("start", case.session(), "--prompt-file",
                           str(case.inbox / "round.md")))


@provokes("path_too_long")
def _path_too_long(case: Case) -> dict[str, Any]:
    """A folder or file name no file system holds: refused before the disk is touched."""
    error = failed(case.run("debate", "new", "d" * 300, "Which queue?"))
    assert not list(case.repo.glob("ddd*"))
    return error


@provokes("path_protected")
def _path_protected(case: Case) -> dict[str, Any]:
    error = failed(case.run("render", "reask", "--var", "PROBLEMS=p", "--out",
                            str(case.repo / ".git" / "hooks" / "pre-commit")))
    assert not (case.repo / ".git" / "hooks" / "pre-commit").exists()
    return error


@provokes("not_a_file")
def _not_a_file(case: Case) -> dict[str, Any]:
    sid = case.session("think-about")
    os.mkfifo(case.inbox / "analysis.md")  # would block a plain read forever
    return failed(case.run("seal", sid, "--file", str(case.inbox / "analysis.md")))


@provokes("file_too_large")
def _file_too_large(case: Case) -> dict[str, Any]:
    sid = case.session("think-about")
    with open(case.inbox / "analysis.md", "wb") as f:
        f.truncate(2 << 30)  # 2 GiB, sparse: refused by its size, never read
    return failed(case.run("seal", sid, "--file", str(case.inbox / "analysis.md")))


@provokes("input_changed")
def _input_changed(case: Case) -> dict[str, Any]:
    sid = case.session("think-about")
    path = Path(case.file("analysis.md", "my analysis\n" * 1000))
    target, real_read = path.stat().st_ino, os.read

    grown = []

    def read_while_someone_writes(fd: int, n: int) -> bytes:
        if os.fstat(fd).st_ino == target and not grown:  # it grows while sparring reads it
            grown.append(True)
            with open(path, "a") as f:
                f.write("more\n")
        return real_read(fd, n)

    case.monkeypatch.setattr(os, "read", read_while_someone_writes)
    return failed(case.run("seal", sid, "--file", str(path)))


@provokes("not_utf8")
def _not_utf8(case: Case) -> dict[str, Any]:
    sid = case.session("think-about")
    return failed(case.run("seal", sid, "--file", case.file("analysis.md", b"caf\xe9\n")))


@provokes("prompt_empty")
def _prompt_empty(case: Case) -> dict[str, Any]:
    return failed(case.run("start", case.session(), input=b""))


@provokes("prompt_too_large")
def _prompt_too_large(case: Case) -> dict[str, Any]:
    huge = case.file("huge.md", b"x" * 2_000_000)
    return failed(case.run("start", case.session(), "--prompt-file", huge))


@provokes("input_empty")
def _input_empty(case: Case) -> dict[str, Any]:
    debate = case.think_about()
    debate.start()
    return failed(debate.seal(" "))


@provokes("template_not_found")
def _template_not_found(case: Case) -> dict[str, Any]:
    return failed(case.run("render", "think-about/no-such-template"))


@provokes("template_missing_var")
def _template_missing_var(case: Case) -> dict[str, Any]:
    return failed(case.run("render", "think-about/round1"))


@provokes("invalid_arguments")
def _invalid_arguments(case: Case) -> dict[str, Any]:
    return failed(case.run("discuss", "new", "--args", "medium"))


@provokes("not_writable")
def _not_writable(case: Case) -> dict[str, Any]:
    # Below a file, where nobody (root included) can make a directory.
    return failed(case.run("guard", "snapshot", "--out", str(case.repo / "app.py" / "b.json")))


@provokes("git_failed")
def _git_failed(case: Case) -> dict[str, Any]:
    broken = case.repo / "broken"  # a folder of the project, with a .git that leads nowhere
    broken.mkdir()
    (broken / ".git").write_text("gitdir: /nowhere\n")
    return failed(case.run("guard", "snapshot", "--cwd", str(broken),
                           "--out", str(case.inbox / "baseline.json")))


# -- sessions and their state ------------------------------------------------------------------

@provokes("session_not_found")
def _session_not_found(case: Case) -> dict[str, Any]:
    return failed(case.run("poll", "no-such-session"))


@provokes("invalid_transition")
def _invalid_transition(case: Case) -> dict[str, Any]:
    return failed(case.run("resume", case.session(), input=b"a second round before a first"))


@provokes("session_busy")
def _session_busy(case: Case) -> dict[str, Any]:
    case.fake.mode("hang")
    sid = case.session()
    case.run("start", sid, input=b"q")
    try:
        return failed(case.run("resume", sid, input=b"again"))
    finally:
        case.run("stop", sid)


@provokes("state_corrupt")
def _state_corrupt(case: Case) -> dict[str, Any]:
    sid = case.session()
    case.state(sid).write_text("{not json")
    error = failed(case.run("poll", sid))
    assert case.state(sid).read_text() == "{not json", "the file is left as it was"
    return error


@provokes("state_version_unsupported")
def _state_version_unsupported(case: Case) -> dict[str, Any]:
    sid = case.session()
    data = json.loads(case.state(sid).read_text())
    data["format"] += 100  # as a newer sparring would write it
    case.state(sid).write_text(json.dumps(data))
    return failed(case.run("poll", sid))


@provokes("budget_exhausted")
def _budget_exhausted(case: Case) -> dict[str, Any]:
    sid = case.run("init", "--skill", "deep-discussion", "--budget-tokens", "1").out["session"]
    case.run("start", sid, input=b"round one")
    assert case.run("wait", sid, "--timeout", "30").out["status"] == "completed"
    return failed(case.run("resume", sid, input=b"round two"))


@provokes("sandbox_not_allowed")
def _sandbox_not_allowed(case: Case) -> dict[str, Any]:
    """A committed sparring.yaml asks for more than the user allows (tests/test_sandbox.py
    has every other way to ask)."""
    (case.repo / "sparring.yaml").write_text("sandbox: workspace-write\n")
    return failed(case.run("start", case.session(), input=b"q"))


# -- codex: starting it, and how its turn ends --------------------------------------------------

@provokes("codex_not_found")
def _codex_not_found(case: Case) -> dict[str, Any]:
    case.monkeypatch.setenv("SPARRING_CODEX", str(case.tmp / "no-codex-here"))
    return failed(case.run("start", case.session(), input=b"q"))


@provokes("codex_usage_error")
def _codex_usage_error(case: Case) -> dict[str, Any]:
    case.fake.mode("usage_error")
    return started_then_ended(case, case.session())


@provokes("codex_start_failed")
def _codex_start_failed(case: Case) -> dict[str, Any]:
    case.fake.mode("die_early", stderr="Error: simulated broken config.toml")
    # A start window a busy machine cannot outrun: it ends as soon as codex dies.
    case.monkeypatch.setenv("SPARRING_STARTSECS", "10")
    return failed(case.run("start", case.session(), input=b"q"))


@provokes("codex_crashed")
def _codex_crashed(case: Case) -> dict[str, Any]:
    case.fake.mode("crash", event_delay="0.3")
    return started_then_ended(case, case.session())


@provokes("codex_protocol_error")
def _codex_protocol_error(case: Case) -> dict[str, Any]:
    case.fake.mode("no_message", event_delay="0.3")  # completes the turn with no answer
    return started_then_ended(case, case.session())


@provokes("turn_failed")
def _turn_failed(case: Case) -> dict[str, Any]:
    case.fake.mode("server_error", delay="1.5")  # reconnects, then turn.failed
    return started_then_ended(case, case.session())


@provokes("rate_limited")
def _rate_limited(case: Case) -> dict[str, Any]:
    case.fake.mode("rate_limited")
    return started_then_ended(case, case.session())


@provokes("context_window_exceeded")
def _context_window_exceeded(case: Case) -> dict[str, Any]:
    case.fake.mode("replay", replay="context_window")  # what the real codex 0.171.0 printed
    return started_then_ended(case, case.session())


@provokes("codex_too_old")
def _codex_too_old(case: Case) -> dict[str, Any]:
    case.fake.mode("ok")
    case.monkeypatch.setenv("FAKE_CODEX_VERSION", "0.131.0")
    return failed(case.run("start", case.session(), input=b"q"))


@provokes("turn_timeout")
def _turn_timeout(case: Case) -> dict[str, Any]:
    case.fake.mode("slow", delay="30", event_delay="0.2")
    return started_then_ended(case, case.session(), "--timeout", "1.5")


@provokes("turn_stalled")
def _turn_stalled(case: Case) -> dict[str, Any]:
    case.fake.mode("hang")
    return started_then_ended(case, case.session(), "--stall-after", "1")


@provokes("network_unreachable")
def _network_unreachable(case: Case) -> dict[str, Any]:
    case.fake.mode("offline", delay="0.3")
    return started_then_ended(case, case.session(), "--offline-after", "1.5",
                              "--stall-after", "10")


@provokes("turn_stopped")
def _turn_stopped(case: Case) -> dict[str, Any]:
    case.fake.mode("hang")
    sid = case.session()
    case.run("start", sid, input=b"q")
    return ended(case.run("stop", sid))


@provokes("runner_died")
def _runner_died(case: Case) -> dict[str, Any]:
    case.fake.mode("slow", delay="5")
    sid = case.session()
    case.run("start", sid, input=b"q")
    wait_for(lambda: case.turn(sid).get("codex") is not None)
    turn = case.turn(sid)
    os.kill(turn["runner"]["pid"], signal.SIGKILL)
    wait_for(lambda: _zombie(turn["codex"]["pid"]))
    return ended(case.run("poll", sid))


def _zombie(pid: int) -> bool:
    """Gone, or a zombie."""
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


@provokes("thread_not_found")
def _thread_not_found(case: Case) -> dict[str, Any]:
    case.fake.mode("rate_limited")
    sid = case.session()
    assert started_then_ended(case, sid)["code"] == "rate_limited"
    # Codex's record of the thread is gone (CODEX_HOME changed): resuming it cannot work.
    case.monkeypatch.setenv("CODEX_HOME", str(case.tmp / "another-codex-home"))
    case.fake.mode("ok")
    return started_again(case, sid, "--recover")


def started_again(case: Case, sid: str, *flags: str) -> dict[str, Any]:
    resumed = case.run("resume", sid, *flags)
    if resumed.exit_code != 0:
        return failed(resumed)
    return ended(case.run("wait", sid, "--timeout", "30"))


@provokes("no_thread")
def _no_thread(case: Case) -> dict[str, Any]:
    # codex refuses the prompt before it keeps a thread: nothing to resume.
    case.fake.mode("ok", max_input_chars="50")
    sid = case.session()
    assert started_then_ended(case, sid, prompt=b"y" * 100)["code"] == "prompt_too_large"
    return failed(case.run("resume", sid, "--recover"))


@provokes("recovery_exhausted")
def _recovery_exhausted(case: Case) -> dict[str, Any]:
    case.fake.mode("hang")
    sid = case.session()
    assert started_then_ended(case, sid, "--stall-after", "0.5")["code"] == "turn_stalled"
    assert started_again(case, sid, "--recover", "--stall-after", "0.5")["code"] == \
        "turn_stalled"
    return failed(case.run("resume", sid, "--recover"))


# -- think-about: seal, reveal, answers, verdicts, reports -------------------------------------

def _answered(case: Case) -> Debate:
    """A think-about round Codex answered, sealed and revealed (no challenge turn follows an
    agreement: the scenarios need the round judged, not tested)."""
    (case.repo / "sparring.yaml").write_text("think-about:\n  challenge: false\n")
    debate = case.think_about()
    case.fake.script([{"reply": answer([cpt("X-1", "agree")], state="agree",
                                       proposed="SQLite, with TTL sweeps (X-1).")}])
    debate.start()
    debate.seal()
    assert debate.wait()["status"] == "completed"
    return debate


CONSENSUS = {"points": [pt("X-1", "agree", cls="genuine_agreement")],
             "convergence": {"state": "agree", "reason": "we agree"}, "approve_summary": "S-1"}
CONTINUE = {"points": [pt("X-1", "disagree", cls="genuine_disagreement")],
            "convergence": {"state": "continue", "reason": "on reflection, no"}}


@provokes("seal_required")
def _seal_required(case: Case) -> dict[str, Any]:
    debate = case.think_about()
    case.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    shown = debate.wait()
    assert shown["status"] == "completed" and shown["review"] is None, "withheld until sealed"
    return failed(debate.verdict(CONTINUE))


@provokes("sealed_point_unanswered")
def _sealed_point_unanswered(case: Case) -> dict[str, Any]:
    """The sealed analysis held C-1 and C-2; the verdict on round one answers only C-1."""
    debate = case.think_about()
    case.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    assert debate.seal("# Mine\nC-1: sessions need TTLs.\nC-2: Redis is one more service.\n"
                       ).exit_code == 0
    assert debate.wait()["status"] == "completed"
    return failed(debate.verdict({
        "points": [pt("X-1", "agree", cls="genuine_agreement", sealed="C-1")],
        "convergence": {"state": "continue", "reason": "r"}}))


@provokes("analysis_incomplete")
def _analysis_incomplete(case: Case) -> dict[str, Any]:
    """The question names options; the analysis names no first choice among them."""
    debate = case.think_about()
    case.fake.script([{"reply": answer([cpt("X-1", "agree")], choice="SQLite",
                                       confidence=70)}])
    assert case.run("start", debate.sid, "--template", "think-about/round1", "--vars-file",
                    case.file("r1.yaml", "QUESTION: q\nOPTIONS: |\n  Redis\n  SQLite\n")
                    ).exit_code == 0
    assert debate.wait()["status"] == "completed"
    return failed(debate.seal("# Mine\nSQLite, surely.\n"))


@provokes("seal_too_early")
def _seal_too_early(case: Case) -> dict[str, Any]:
    """Codex's round one still runs: an analysis written now would lie where it can read it."""
    debate = case.think_about()
    case.fake.script([{"mode": "slow", "delay": "4", "reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    found = failed(case.run("seal", debate.sid, "--file", debate.file("a.md", "# Mine\n")))
    case.fake.release()
    assert debate.wait()["status"] == "completed"
    return found


@provokes("not_revealed")
def _not_revealed(case: Case) -> dict[str, Any]:
    debate = case.think_about()
    case.fake.script([{"reply": answer([cpt("X-1", "agree")])}])
    debate.start()
    assert debate.wait()["review"] is None
    assert debate.seal().exit_code == 0
    return failed(debate.verdict(CONTINUE))  # judged before `wait` showed the answer


@provokes("already_sealed")
def _already_sealed(case: Case) -> dict[str, Any]:
    debate = case.think_about()
    debate.start()
    assert debate.seal("first analysis").exit_code == 0
    return failed(debate.seal("a different analysis"))


@provokes("invalid_answer")
def _invalid_answer(case: Case) -> dict[str, Any]:
    debate = case.think_about()
    case.fake.script(["I think SQLite is fine.", {"reply": {"position": "no points field"}}])
    debate.start()
    debate.seal()
    return ended(case.run("wait", debate.sid, "--timeout", "30"))


@provokes("verdict_invalid")
def _verdict_invalid(case: Case) -> dict[str, Any]:
    debate = _answered(case)
    return failed(case.run("verdict", debate.sid, input=b"{oops"))


@provokes("already_judged")
def _already_judged(case: Case) -> dict[str, Any]:
    debate = _answered(case)
    assert debate.verdict(CONSENSUS).out["decision"] == "unchallenged"
    return failed(debate.verdict(CONTINUE))


@provokes("rejudge_too_late")
def _rejudge_too_late(case: Case) -> dict[str, Any]:
    debate = _answered(case)
    assert debate.verdict(CONTINUE).out["next"]["action"] == "wait"  # round 2 has started
    error = failed(case.run("verdict", debate.sid, "--rejudge", "1", "--file",
                            case.file("rejudge.json", json.dumps(CONSENSUS))))
    assert debate.wait()["round"] == 2
    return error


@provokes("synthesis_invalid")
def _synthesis_invalid(case: Case) -> dict[str, Any]:
    debate = _answered(case)
    bad = case.file("synthesis.json", json.dumps({"recommendations": "not a list"}))
    return failed(case.run("report", debate.sid, "--synthesis", bad))


@provokes("report_exists")
def _report_exists(case: Case) -> dict[str, Any]:
    debate = _answered(case)
    foreign = case.repo / "notes.md"
    foreign.write_text("mine")
    error = failed(case.run("report", debate.sid, "--out", str(foreign)))
    assert foreign.read_text() == "mine"
    return error


@provokes("guard_violation")
def _guard_violation(case: Case) -> dict[str, Any]:
    case.fake.script([{"mode": "writes_file", "write_path": "notes.txt", "reply": "One."}])
    sid = case.run("discuss", "new", "--args", "").out["session"]
    assert case.run("discuss", "frame", sid, input=FRAME).exit_code == 0
    assert case.run("wait", sid, "--timeout", "30").out["status"] == "completed"
    return failed(case.run("discuss", "round", sid, input=b"response: next\n"))


# -- arch-debate --------------------------------------------------------------------------------

@provokes("debate_exists")
def _debate_exists(case: Case) -> dict[str, Any]:
    ArchDebate(case.sparring, case.fake, case.repo)
    return failed(case.run("debate", "new", "debate", "another question"))


@provokes("round_missing")
def _round_missing(case: Case) -> dict[str, Any]:
    debate = ArchDebate(case.sparring, case.fake, case.repo)
    case.fake.script(["Answer one."])
    debate.write(0, "SQLite.\n")
    debate.codex_round()
    return failed(case.run("debate", "round", str(debate.dir)))  # round-1-claude.md is missing


# -- outside the runner's own verbs -------------------------------------------------------------

@provokes("runtime_missing")
def _runtime_missing(case: Case) -> dict[str, Any]:
    """The launcher, with no runtime to find, speaks the same contract."""
    bare = ["env", "-i", f"PATH={BARE_PATH}", f"HOME={case.tmp}",
            f"XDG_DATA_HOME={case.tmp / 'no-data'}"]
    done = subprocess.run([*bare, str(ROOT / "skills" / "think-about" / "sparring"), "poll", "x"],
                          cwd=case.repo, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert out["ok"] is False and set(out) == {"schema_version", "ok", "verb", "error"}
    error: dict[str, Any] = out["error"]
    return error


@provokes("runtime_in_project")
def _runtime_in_project(case: Case) -> dict[str, Any]:
    """The launcher, told by a variable the project's settings may set to run a Python that
    lies in the project (tests/test_layout.py tries each variable)."""
    planted = case.repo / "tools" / "py"
    planted.parent.mkdir()
    planted.write_text("#!/bin/sh\nexit 0\n")
    planted.chmod(0o755)
    done = subprocess.run([str(ROOT / "skills" / "think-about" / "sparring"), "poll", "x"],
                          env={**os.environ, "SPARRING_PYTHON": str(planted)}, cwd=case.repo,
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 1
    error: dict[str, Any] = json.loads(done.stdout)["error"]
    return error


@provokes("runtime_build_failed")
def _runtime_build_failed(case: Case) -> dict[str, Any]:
    """The plugin's launcher on first use, its data folder named, with pip finding nothing
    to install from (tests/test_plugin_runtime.py builds and fails in full)."""
    data, wheels = case.tmp / "plugin-data", case.tmp / "no-wheels"
    wheels.mkdir()
    env = {"PATH": BARE_PATH, "HOME": str(case.tmp), "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(wheels), "XDG_DATA_HOME": str(case.tmp / "no-data"),
           "SPARRING_PLUGIN_DATA": str(data)}
    done = subprocess.run([str(ROOT / "skills" / "think-about" / "sparring"), "status"],
                          env=env, cwd=case.repo, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 1 and not (data / "venv").exists()
    error: dict[str, Any] = json.loads(done.stdout)["error"]
    return error


@provokes("platform_unsupported")
def _platform_unsupported(case: Case) -> dict[str, Any]:
    """Any verb on native Windows (simulated as tests/test_windows.py does)."""
    from test_windows import ENTRY_POINTS, as_on_windows

    done = as_on_windows(ENTRY_POINTS["python -m sparring"], case.tmp)
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert out["ok"] is False and set(out) == {"schema_version", "ok", "verb", "error"}
    error: dict[str, Any] = out["error"]
    return error


@provokes("interrupted")
def _interrupted(case: Case) -> dict[str, Any]:
    """Ctrl-C while `wait` waits: the process prints one JSON object and exits 130."""
    case.fake.mode("hang")
    sid = case.session()
    case.run("start", sid, input=b"q")
    try:
        waiting = subprocess.Popen([sys.executable, "-c", AS_IN_A_TERMINAL, "-m", "sparring",
                                    "wait", sid, "--timeout", "60"],
                                   cwd=case.repo, stdout=subprocess.PIPE, text=True)
        time.sleep(2.5)  # well into its wait (python starts in a tenth of that)
        waiting.send_signal(signal.SIGINT)
        out, _ = waiting.communicate(timeout=30)
    finally:
        case.run("stop", sid)
    assert waiting.returncode == 130, out
    result = json.loads(out)
    assert result["ok"] is False and set(result) == {"schema_version", "ok", "verb", "error"}
    error: dict[str, Any] = result["error"]
    return error


@provokes("internal_error")
def _internal_error(case: Case) -> dict[str, Any]:
    """No input may provoke a bug on purpose, so this one is pinned one level down: a verb whose
    code raises an unexpected exception still ends in one JSON error, with the traceback."""
    from sparring.cli.main import cli  # the click command tree

    def bug(**_: object) -> None:
        raise RuntimeError("a bug planted by the test")

    case.monkeypatch.setattr(cli.commands["doctor"], "callback", bug)
    error = failed(case.run("doctor"))
    assert "a bug planted by the test" in error["message"] and "RuntimeError" in error["traceback"]
    return error


# -- the tests ---------------------------------------------------------------------------------

@pytest.fixture
def case(sparring: Any, fake_codex: Any, repo: Path, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Case:
    return Case(sparring, fake_codex, repo, tmp_path, monkeypatch)


@pytest.mark.parametrize("code", list(CODES))
def test_every_registered_code_is_pinned(code: str, case: Case) -> None:
    if code not in PROVOKE:
        pytest.fail(f"error code {code!r} has no scenario in {Path(__file__).name}")
    error = PROVOKE[code](case)
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"].strip(), error
    assert isinstance(error["hint"], str) and error["hint"].strip(), f"{code}: no hint"


def test_the_pinned_codes_are_the_registry() -> None:
    assert set(PROVOKE) == set(CODES), (f"not pinned: {sorted(set(CODES) - set(PROVOKE))}; "
                                        f"not registered: {sorted(set(PROVOKE) - set(CODES))}")
