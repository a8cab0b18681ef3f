"""A turn's own files, swapped during its turn (issue 21).

Codex's events and stderr went to files in the session's turn folder, which a sandbox that
lets Codex write the project let it replace while it worked. They now lie out of the project
(store/locate.outputs_folder), out of any sandbox's reach but `danger-full-access`; the reader
stays as hardened, and these tests swap them where they lie (the fake codex's shell runs
unsandboxed). A FIFO there blocked the runner's last read forever (the turn never ended,
every `poll`, `wait` and `start` of the session hung with it); a link made the runner read
what it points at, `/dev/zero` without end. The runner reads them without following a link
or blocking, as plain files of bounded size, and a turn whose events are gone ends as a turn
without an answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sparring.store.sessions import Session

SECRET = "b3BlbnNzaC1rZXkt-secret"


def run_cli(*argv: str, cwd: Path, timeout: float = 60) -> dict[str, Any]:
    """The CLI in a process of its own, so a read that blocks fails the test, not hangs it."""
    done = subprocess.run([sys.executable, "-m", "sparring", *argv], cwd=cwd, timeout=timeout,
                          capture_output=True, text=True)
    out: dict[str, Any] = json.loads(done.stdout)
    return out


@pytest.mark.parametrize("swap", ["events-fifo", "events-link", "events-zero", "stderr-fifo"])
def test_a_turn_file_codex_swapped_never_blocks_or_leads_out(
        swap: str, session: str, fake_codex: Any, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(json.dumps({"type": "item.completed", "item": {
        "id": "x", "type": "agent_message", "text": SECRET}}) + "\n")
    name, how = swap.split("-")
    file = "events.jsonl" if name == "events" else "stderr.log"
    target = Session(repo / ".sparring" / "sessions" / session).output(1, file)
    make = {"fifo": f"mkfifo {target}", "link": f"ln -s {outside} {target}",
            "zero": f"ln -s /dev/zero {target}"}[how]
    fake_codex.mode("shell", shell=f"rm -f {target} && {make}")
    (repo / ".sparring" / "inbox").mkdir(parents=True, exist_ok=True)
    (repo / ".sparring" / "inbox" / "q.md").write_text("q\n")
    started = run_cli("start", session, "--prompt-file", ".sparring/inbox/q.md", cwd=repo,
                      timeout=30)
    assert started.get("ok") is not None
    waited = run_cli("wait", session, "--timeout", "20", cwd=repo, timeout=40)
    assert waited["status"] in ("completed", "failed"), waited
    assert SECRET not in json.dumps(waited) and SECRET not in json.dumps(started)
    assert run_cli("poll", session, cwd=repo, timeout=20)["status"] == waited["status"]
    deadline = time.time() + 10  # and the turn's runner has ended too
    while time.time() < deadline and _runner_alive(repo, session):
        time.sleep(0.1)
    assert not _runner_alive(repo, session)


def _runner_alive(repo: Path, session: str) -> bool:
    from sparring import process

    data = json.loads((repo / ".sparring" / "sessions" / session / "session.json").read_text())
    runner = data["turns"][-1].get("runner")
    return runner is not None and process.is_alive(process.Identity.from_dict(runner))


@pytest.mark.parametrize("head", ["fifo", "link", "plain"])
def test_a_git_head_that_is_not_a_plain_file_never_blocks(head: str, tmp_path: Path) -> None:
    """The branch in a report's default path is read from HEAD (where a `.git` file says),
    never through a link and never waiting on a FIFO."""
    project, gitdir = tmp_path / "project", tmp_path / "project" / "g"
    gitdir.mkdir(parents=True)
    (project / ".git").write_text("gitdir: g\n")
    if head == "fifo":
        os.mkfifo(gitdir / "HEAD")
    elif head == "link":
        (tmp_path / "secret").write_text("ref: refs/heads/b3BlbnNzaC1rZXkt\n")
        (gitdir / "HEAD").symlink_to(tmp_path / "secret")
    else:
        (gitdir / "HEAD").write_text("ref: refs/heads/feature/x\n")
    done = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                           "from sparring.store.workspace import branch; "
                           "print(branch(Path(sys.argv[1])))", str(project)],
                          capture_output=True, text=True, timeout=20)
    assert done.stdout.strip() == {"plain": "feature-x"}.get(head, "no-git"), done.stderr


EVENTS = "\n".join([
    '{"type":"thread.started","thread_id":"0199a000-0000-7000-8000-000000000001"}',
    '{"type":"turn.started"}',
    '{"type":"item.completed","item":{"id":"i1","type":"agent_message",'
    '"text":"Kafka \\ud800 because replay."}}',
    '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,'
    '"output_tokens":5,"reasoning_output_tokens":0}}']) + "\n"


def test_an_answer_no_file_can_hold_never_bricks_the_debate(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path, tmp_path: Path) -> None:
    """Codex rewrote its events with half a UTF-16 pair (`\\ud800`) in its answer: writing
    the round file, and every verb of the session after it, ended in internal_error. The
    event is read, never dropped, the half pair as U+FFFD, which a file can hold."""
    sid = sparring("debate", "new", "debate", "Redis or SQLite?").out["session"]
    events = Session(repo / ".sparring" / "sessions" / sid).output(1, "events.jsonl")
    (tmp_path / "events.jsonl").write_text(EVENTS)
    fake_codex.mode("shell", shell=f"rm -f {events} && cp {tmp_path / 'events.jsonl'} {events}")
    (scratch / "round.md").write_text("Opening: SQLite is enough.\n")
    sparring("debate", "round", "debate", "--file", str(scratch / "round.md"))
    waited = sparring("wait", sid, "--timeout", "30")
    assert waited.out["status"] == "completed" and "malformed_lines" not in waited.out, \
        waited.raw
    for argv in (("status", sid), ("debate", "status", "debate"), ("stop", sid)):
        assert sparring(*argv).error_code != "internal_error", argv
    assert (repo / "debate" / "round-1-codex.md").read_text() == "Kafka \ufffd because replay.\n"
