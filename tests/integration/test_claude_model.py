"""Claude's model reaches the runner in the real Claude Code, as a user runs it.

Claude Code tells a command nothing of its model; it names it to a SessionStart hook when an
interactive session begins (2.1.332: `model` in the event; `claude -p` gives none). The
settings `install.py --project` edits run the launcher's `--session-start` as that hook, and
every later Bash call has the name (SPARRING_CLAUDE_MODEL), which each round records and the
report names. Here the real Claude Code runs interactively, on a terminal, against the
loopback Messages mock; the model's one tool call is the skills' `doctor`, whose
`claude_model` check says what the runner was told.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from support import messages_mock as mm
from support.habitat import Scenario, make_habitat, run_workflow
from support.installing import shared_runtime
from support.loopback_server import RecordedRequest
from support.responses_mock import ResponsesMock

WAIT_S = 90


def as_a_person_left_it(home: Path, project: Path, api_key: str) -> None:
    """The HOME of a user who has used Claude Code before: onboarding done, the project
    trusted, the API key in the environment approved (else the terminal asks first)."""
    path = home / ".claude.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.update({"hasCompletedOnboarding": True,
                 "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
                 "projects": {str(project): {"hasTrustDialogAccepted": True,
                                             "hasCompletedProjectOnboarding": True}}})
    path.write_text(json.dumps(data))


def answered(requests: list[RecordedRequest]) -> str | None:
    """The text of the first tool result Claude Code sent back, once it has."""
    for request in requests:
        for block in mm.last_user_tool_results(request):
            return mm.tool_result_text(block)
    return None


def test_an_interactive_session_names_claudes_model_to_every_runner_call(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, messages_mock: mm.MessagesMock,
        responses_mock: ResponsesMock, codex_bin: Path, claude_bin: Path) -> None:
    habitat = make_habitat(tmp_path, shared_runtime(tmp_path_factory), messages_mock,
                           responses_mock, codex_bin)
    as_a_person_left_it(Path(habitat.env["HOME"]), habitat.project,
                        habitat.env.get("ANTHROPIC_API_KEY", ""))
    launcher = habitat.project / ".claude" / "skills" / "think-about" / "sparring"
    messages_mock.script(mm.bash(f"{launcher} doctor --json --full"))
    messages_mock.default = mm.text("done")

    main, child = pty.openpty()
    with subprocess.Popen([str(claude_bin), "check sparring"], cwd=habitat.project,
                          env={**habitat.env, "TERM": "xterm-256color"},
                          stdin=child, stdout=child, stderr=child) as claude:
        os.close(child)
        shown, end = b"", time.monotonic() + WAIT_S
        try:
            while time.monotonic() < end and answered(messages_mock.messages_requests()) is None:
                if select.select([main], [], [], 0.5)[0]:
                    try:
                        shown += os.read(main, 65536)
                    except OSError:
                        break
        finally:  # an interactive Claude Code never ends by itself
            claude.kill()
            os.close(main)

    requests = messages_mock.messages_requests()
    result = answered(requests)
    assert result is not None, shown.decode(errors="replace")[-3000:]
    doctor = json.loads(result)
    [check] = [c for c in doctor["checks"] if c["name"] == "claude_model"]
    models = {r.body.get("model") for r in requests if isinstance(r.body, dict)}
    assert [m for m in models if f"named its model {m} " in check["detail"]], (check, models)


def test_a_projects_settings_cannot_point_the_session_start_write_elsewhere(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, messages_mock: mm.MessagesMock,
        responses_mock: ResponsesMock, codex_bin: Path, claude_bin: Path) -> None:
    """The one file the session-start hook writes is the one Claude Code names to it: a
    committed settings file whose `env` names another (outside the project) does not change
    what a SessionStart hook is given, so it cannot turn the hook's append on a file of its
    choosing. Measured with a hook of the project's own that notes what it was given."""
    habitat = make_habitat(tmp_path, shared_runtime(tmp_path_factory), messages_mock,
                           responses_mock, codex_bin)
    elsewhere, noted = tmp_path / "elsewhere.sh", tmp_path / "noted.txt"
    elsewhere.write_text("")
    (habitat.project / ".claude" / "settings.json").write_text(json.dumps({
        "env": {"CLAUDE_ENV_FILE": str(elsewhere)},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command":
                                               f'echo "$CLAUDE_ENV_FILE" >> {noted}'}]}]}}))

    run_workflow(claude_bin, habitat, Scenario("env-file", "think-about", "hi", [],
                                               [{"text": "done"}]))

    given = noted.read_text().splitlines()
    home = Path(habitat.env["HOME"]) / ".claude"
    assert given and all(Path(g).is_relative_to(home) for g in given), given
    assert elsewhere.read_text() == ""
