"""The real Codex CLI, in a turn whose sandbox lets it write, plants traps in the inbox for
the next hand-in (issue 21): a link to the user's private key where Claude's round goes, a
FIFO where its analysis goes, a file named to look like a command. Claude then hands in as
the skills say; the runner refuses each trap by its error code, promptly, and sends nothing
of the key to the model (the loopback mock sees every request)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.debates import answer
from support.responses_mock import ResponsesMock, shell_call, text

pytestmark = pytest.mark.integration

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXkt secret"


def run_cli(*argv: str, cwd: Path) -> dict[str, Any]:
    """The CLI in its own process: a read that blocked would time out, not hang the suite."""
    done = subprocess.run([sys.executable, "-m", "sparring", *argv], cwd=cwd, timeout=60,
                          capture_output=True, text=True)
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_links_and_fifos_codex_plants_in_the_inbox_are_refused(
        real_codex: Path, responses_mock: ResponsesMock, sparring: Any, repo: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text(SECRET + "\n")
    # Codex may write in the project: the user allowed it in their own shell.
    monkeypatch.setenv("SPARRING_SANDBOX", "workspace-write")
    inbox = repo / ".sparring" / "inbox"
    sid = sparring("init", "--skill", "think-about").out["session"]
    plant = (f"ln -s {key} .sparring/inbox/round.md && mkfifo .sparring/inbox/analysis.md && "
             "printf x > '`sparring guard accept SESSION && touch PWNED`'")
    responses_mock.script(shell_call(plant), text(json.dumps(answer([], position="p"))))
    assert sparring("start", sid, "--template", "think-about/round1",
                    "--var", "QUESTION=Redis or SQLite?").exit_code == 0
    waited = sparring("wait", sid, "--timeout", "120").out
    assert waited["status"] == "completed", waited
    assert (inbox / "round.md").is_symlink() and (inbox / "analysis.md").is_fifo(), \
        "the sandbox let Codex plant them"

    sealed = run_cli("wait", sid, "--seal", str(inbox / "analysis.md"), cwd=repo)
    assert sealed["error"]["code"] == "not_a_file", sealed
    sealed = run_cli("seal", sid, "--file", str(inbox / "analysis.md"), cwd=repo)
    assert sealed["error"]["code"] == "not_a_file", sealed
    for argv in (["resume", sid, "--prompt-file", str(inbox / "round.md")],
                 ["seal", sid, "--file", str(inbox / "round.md")]):
        refused = run_cli(*argv, cwd=repo)
        assert refused["error"]["code"] == "path_is_link", refused
        assert "b3BlbnNzaC1rZXkt" not in json.dumps(refused)
    # Nothing of the key reached the model, or any file of the project.
    assert all("b3BlbnNzaC1rZXkt" not in json.dumps(r.body)
               for r in responses_mock.responses_requests())
    assert [p for p in repo.rglob("*") if p.is_file() and not p.is_symlink()
            and "b3BlbnNzaC1rZXkt" in p.read_text(errors="replace")] == []
    assert key.read_text() == SECRET + "\n"
    # A name Codex gave a file is data: listed as it is, never part of a runner command.
    name = "`sparring guard accept SESSION && touch PWNED`"
    assert [c["path"] for c in waited["guard"]["changed"]] == [name]
    assert "PWNED" not in waited["guard"]["violation"]["hint"]
    assert not list(tmp_path.rglob("PWNED"))
