"""The running turn is known from the runner's own record, not from session.json alone
(issue 21, case 10). Codex may be let write anywhere in the project, `.sparring/` included,
but not the user's state folder, where sparring keeps two things out of its reach: the
witness copy of each record it writes (store/witness.py) and each runner's own record
(store/runs.py). A session.json changed while its turn runs is put back from its copy, the
changed one kept beside it, and the turn's guard reports it. Where no copy vouches for the
file (a session older than the copies, or a copy lost), a session.json that disagrees with
the runner's record is `state_corrupt`, the turn it hides is ended, the file is left byte
for byte, and no process is ever signalled on session.json's word."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from sparring.store import runs, witness
from sparring.store.sessions import Session


def directory(repo: Path, sid: str) -> Path:
    return repo / ".sparring" / "sessions" / sid


def edit(repo: Path, sid: str, change: Any, copy: bool = False) -> bytes:
    """Rewrite session.json as something other than sparring would; returns the bytes. Its
    witness copy goes too (as for a session older than the copies), unless `copy`."""
    path = directory(repo, sid) / "session.json"
    data = json.loads(path.read_text())
    change(data)
    if not copy:
        kept = witness.copy_of(path)
        assert kept is not None
        Path(kept).unlink(missing_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path.read_bytes()


def test_a_running_turn_dropped_from_session_json_is_put_back_and_stopped_right(
        sparring: Any, session: str, repo: Path, second_round: dict[str, Any]) -> None:
    """The first defence: the witness copy. The dropped turn is back, `stop` ends it and
    nothing else, the changed file is kept for the user, and the turn says its records
    were changed by someone else."""
    edited = edit(repo, session, lambda data: data["turns"].pop(), copy=True)
    stopped = sparring("stop", session)
    assert stopped.exit_code == 0 and stopped.out["turn"] == 2, stopped.raw
    assert stopped.out["status"] == "stopped"
    assert wait_gone(second_round["runner"]["pid"], second_round["codex"]["pid"])
    kept = [p.read_bytes() for p in directory(repo, session).glob("session.json.foreign-*")]
    assert kept == [edited]
    guard = Session(directory(repo, session)).load()["turns"][-1]["guard"]
    assert guard and any(c["path"].endswith("/session.json") for c in guard["changed"])


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(*pids: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def second_round(sparring: Any, session: str, fake_codex: Any, repo: Path) -> dict[str, Any]:
    """Round one answered, round two running (codex hangs in it): its turn record."""
    fake_codex.script([{"reply": "round one"}, {"mode": "hang"}])
    sparring("start", session, input=b"one")
    assert sparring("wait", session).out["status"] == "completed"
    sparring("resume", session, input=b"two")
    turn: dict[str, Any] = Session(directory(repo, session)).load()["turns"][-1]
    assert turn["status"] == "running" and turn["codex"]
    return turn


def test_a_running_turn_dropped_from_session_json_is_state_corrupt_not_a_wrong_stop(
        sparring: Any, session: str, repo: Path, second_round: dict[str, Any]) -> None:
    edited = edit(repo, session, lambda data: data["turns"].pop())
    stopped = sparring("stop", session)
    assert stopped.exit_code == 1 and stopped.error_code == "state_corrupt", stopped.raw
    message = stopped.out["error"]["message"]
    assert "session.json" in message and "turn 2" in message
    # The turn it hid does not run on, and nothing was written over the evidence.
    assert wait_gone(second_round["runner"]["pid"], second_round["codex"]["pid"])
    assert (directory(repo, session) / "session.json").read_bytes() == edited
    for verb in ("poll", "stop", "status"):
        assert sparring(verb, session).error_code == "state_corrupt", verb


def test_a_dropped_turns_runner_never_ends_the_next_turn(
        sparring: Any, session: str, repo: Path, fake_codex: Any,
        second_round: dict[str, Any]) -> None:
    """Resuming over the dropped turn would make a new turn 2: refused, and the dropped
    turn's runner, which would have recorded its end into that turn, is ended."""
    edited = edit(repo, session, lambda data: data["turns"].pop())
    calls = len(fake_codex.turn_calls())
    refused = sparring("resume", session, input=b"a new round two")
    assert refused.error_code == "state_corrupt", refused.raw
    assert wait_gone(second_round["runner"]["pid"], second_round["codex"]["pid"])
    assert len(fake_codex.turn_calls()) == calls, "no codex started"
    assert (directory(repo, session) / "session.json").read_bytes() == edited


def test_round_one_dropped_while_it_runs_cannot_be_started_over(
        sparring: Any, session: str, repo: Path, fake_codex: Any) -> None:
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    turn = Session(directory(repo, session)).load()["turns"][-1]
    edited = edit(repo, session, lambda data: data["turns"].clear())
    refused = sparring("start", session, input=b"q again")
    assert refused.error_code == "state_corrupt", refused.raw
    assert wait_gone(turn["runner"]["pid"], turn["codex"]["pid"])
    assert len(fake_codex.turn_calls()) == 1
    assert (directory(repo, session) / "session.json").read_bytes() == edited


def test_a_running_turn_marked_ended_in_session_json_is_state_corrupt(
        sparring: Any, session: str, repo: Path, second_round: dict[str, Any]) -> None:
    def completed(data: dict[str, Any]) -> None:
        data["turns"][-1].update(status="completed", ended_at=time.time())

    edited = edit(repo, session, completed)
    for verb in ("poll", "wait", "stop"):
        assert sparring(verb, session).error_code == "state_corrupt", verb
    assert wait_gone(second_round["runner"]["pid"], second_round["codex"]["pid"])
    assert (directory(repo, session) / "session.json").read_bytes() == edited


def test_no_process_is_signalled_on_session_jsons_word(sparring: Any, session: str,
                                                       repo: Path, fake_codex: Any) -> None:
    """A turn written into session.json as `running`, its runner and codex named as a
    process of the user's: stop reports state_corrupt and leaves that process alone."""
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    assert sparring("wait", session).out["status"] == "completed"
    record = runs.path_for(str(directory(repo, session)))
    deadline = time.monotonic() + 10
    while record.exists() and time.monotonic() < deadline:  # the runner has finished
        time.sleep(0.05)
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        who = {"pid": bystander.pid, "started": psutil.Process(bystander.pid).create_time()}

        def forged(data: dict[str, Any]) -> None:
            data["turns"][-1].update(status="running", ended_at=None, runner=who, codex=who)

        edit(repo, session, forged)
        stopped = sparring("stop", session)
        assert stopped.error_code == "state_corrupt", stopped.raw
        assert "no record of" in stopped.out["error"]["message"]
        time.sleep(0.3)
        assert bystander.poll() is None, "a process named in session.json was signalled"
    finally:
        bystander.kill()
        bystander.wait()


def test_the_record_is_kept_outside_the_project_while_a_turn_runs_and_then_removed(
        sparring: Any, session: str, repo: Path, fake_codex: Any, tmp_path: Path) -> None:
    fake_codex.mode("hang")
    sparring("start", session, input=b"q")
    record = runs.path_for(str(directory(repo, session)))
    assert record.is_file() and repo not in record.parents
    assert record.parent.stat().st_mode & 0o777 == 0o700
    run = runs.read(str(directory(repo, session)))
    assert run is not None and run.turn == 1 and run.runner and run.codex and run.watchdog
    assert sparring("stop", session).out["status"] == "stopped"
    assert not record.exists()
    fake_codex.mode("ok")
    sparring("resume", session, input=b"again")
    assert sparring("wait", session).out["status"] == "completed"
    deadline = time.monotonic() + 15
    while record.exists() and time.monotonic() < deadline:  # the runner removes it as it exits
        time.sleep(0.05)
    assert not record.exists()


@pytest.mark.parametrize("where", ["session", "turn"])
def test_a_thread_id_that_could_read_as_a_flag_is_state_corrupt_and_starts_nothing(
        sparring: Any, fake_codex: Any, session: str, repo: Path, where: str) -> None:
    """A session.json from a clone (no copy of sparring's vouches for it) whose thread id
    would be a flag on codex's command line: every verb says the record is damaged, and no
    codex starts."""
    fake_codex.mode("ok")
    sparring("start", session, input=b"q")
    sparring("wait", session, "--timeout", "30")

    def forge(data: dict[str, Any]) -> None:
        if where == "session":
            data["thread_id"] = "--sandbox=danger-full-access"
        else:
            data["turns"][0]["thread_id"] = "-c"

    edit(repo, session, forge)
    calls = len(fake_codex.calls())
    for argv in (("resume", session), ("poll", session), ("status", session)):
        refused = sparring(*argv, input=b"next")
        assert refused.error_code == "state_corrupt", refused.raw
        assert "thread id" in refused.out["error"]["message"]
    assert len(fake_codex.calls()) == calls
