"""The fake codex (tests/support/fake_codex.py) held to the real one (the pinned npm
package) on the same command lines: what each says to a wrong argument, a missing folder,
an unreadable schema, an empty or a non-UTF-8 prompt (exit status and stderr, byte for
byte), and the shape of a whole turn on sparring's own command line (the events' types and
keys, against the Responses mock). The unit tests of the fake (tests/test_fake_codex.py)
rest on these; a pin that moves shows here what the fake must learn."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sparring.codex import rollout
from support import codex_streams
from support.responses_mock import ResponsesMock, shell_call, text

pytestmark = pytest.mark.integration

FAKE = Path(__file__).resolve().parents[1] / "support" / "bin" / "codex"
# Real codex under a CODEX_HOME in a temporary folder warns that it makes no helper links:
# a line about where the test keeps its home, not about the command line.
ALIASES = "WARNING: proceeding, even though we could not create PATH aliases"

# (name, arguments after `codex`, stdin); {MISSING} and {OUTSIDE} are folders the test makes.
BEFORE_THE_THREAD: list[tuple[str, tuple[str, ...], bytes | None]] = [
    ("a flag codex dropped", ("exec", "--approval-policy", "never", "hi"), None),
    ("an unknown flag", ("exec", "--bogus", "hi"), None),
    ("a bad sandbox", ("exec", "-s", "bogus", "hi"), None),
    ("--sandbox after resume", ("exec", "resume", "-s", "read-only", "--last", "hi"), None),
    ("--cd after resume", ("exec", "resume", "-C", "/tmp", "--last", "hi"), None),
    ("a flag given twice", ("exec", "-m", "a", "-m", "b", "hi"), None),
    ("a flag without its value", ("exec", "-m"), None),
    ("two prompts", ("exec", "a", "b"), None),
    ("resume's near miss", ("exec", "resume", "--json", "--jsn", "x"), None),
    ("a missing folder", ("exec", "--json", "-C", "{MISSING}", "hi"), None),
    ("outside git", ("exec", "--json", "-C", "{OUTSIDE}", "hi"), b""),
    ("an unreadable schema", ("exec", "--json", "--skip-git-repo-check", "--output-schema",
                              "/nonexistent.json", "hi"), b""),
    ("an unwritable last message", ("exec", "--json", "--skip-git-repo-check", "-o",
                                    "/nonexistent/last.txt", "hi"), b""),
    ("an empty prompt", ("exec", "--json", "--skip-git-repo-check"), b""),
    ("a prompt not UTF-8", ("exec", "--json", "--skip-git-repo-check"), b"ab\xffcd"),
]


def said(done: subprocess.CompletedProcess[bytes]) -> tuple[int, bytes, str]:
    lines = done.stderr.decode("utf-8", "replace").splitlines(keepends=True)
    return done.returncode, done.stdout, "".join(
        line for line in lines if not line.startswith(ALIASES))


def run(binary: Path, args: tuple[str, ...], stdin: bytes | None, env: dict[str, str],
        cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(binary), *args], input=stdin, capture_output=True, env=env,
                          cwd=cwd, timeout=60, check=False,
                          stdin=subprocess.DEVNULL if stdin is None else None)


@pytest.mark.parametrize(("name", "args", "stdin"), BEFORE_THE_THREAD,
                         ids=[case[0] for case in BEFORE_THE_THREAD])
def test_before_the_thread_the_fake_says_what_the_real_codex_says(
        name: str, args: tuple[str, ...], stdin: bytes | None, codex_bin: Path,
        codex_env: dict[str, str], repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    made = tuple(a.replace("{MISSING}", str(tmp_path / "missing"))
                 .replace("{OUTSIDE}", str(outside)) for a in args)
    fake_env = {**codex_env, "FAKE_CODEX_LOG_DIR": str(tmp_path / "fake-log")}

    real = said(run(codex_bin, made, stdin, codex_env, repo))
    fake = said(run(FAKE, made, stdin, fake_env, repo))

    assert real[0] != 0, real  # each case is one codex refuses
    assert fake == real, name


def shape(stdout: bytes) -> list[tuple[str, tuple[str, ...], str | None]]:
    """Each event's type, its keys, and its item's type."""
    events = [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]
    return [(e["type"], tuple(sorted(e)), (e.get("item") or {}).get("type")) for e in events]


def test_a_whole_turn_on_sparrings_command_line_has_the_real_shape(
        codex_bin: Path, codex_env: dict[str, str], responses_mock: ResponsesMock,
        repo: Path, tmp_path: Path) -> None:
    """sparring's own argv (as the recordings hold it), one answer from the mock."""
    argv = [a.replace("{CWD}", str(repo)) for a in codex_streams.load("answer")["argv"][1:]]
    responses_mock.script(text("Round one."))
    real = run(codex_bin, tuple(argv), b"Redis or SQLite?", codex_env, repo)
    # The mock's model is one codex knows nothing of: the real codex warns of it as an
    # error item before the turn, and the fake, told which models it knows, does the same.
    fake_env = {**codex_env, "FAKE_CODEX_LOG_DIR": str(tmp_path / "fake-log"),
                "FAKE_CODEX_REPLY": "Round one.", "FAKE_CODEX_KNOWN_MODELS": "gpt-5.5"}
    fake = run(FAKE, tuple(argv), b"Redis or SQLite?", fake_env, repo)

    assert real.returncode == fake.returncode == 0, (real.stderr[-2000:], fake.stderr)
    assert shape(fake.stdout) == shape(real.stdout), real.stdout.decode()
    last: Any = [json.loads(line) for line in real.stdout.decode().splitlines()][-1]
    assert sorted(last["usage"]) == sorted(
        json.loads(fake.stdout.decode().splitlines()[-1])["usage"])


def thread_of(stdout: bytes) -> str:
    first = json.loads(stdout.decode().splitlines()[0])
    assert first["type"] == "thread.started", first
    return str(first["thread_id"])


def rollout_lines(thread: str) -> dict[str, dict[str, Any]]:
    """The first line of each kind in the thread's rollout (`turn_context`, `token_count`,
    `function_call`, …: the line's type, or its payload's for events and items), by kind."""
    path = rollout.find(thread)
    assert path is not None, thread
    kinds: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        said = json.loads(line)
        kind = said["type"]
        if kind in ("event_msg", "response_item"):
            kind = said["payload"].get("type")
        kinds.setdefault(kind, said)
    return kinds


# The lines sparring reads (codex/rollout.py, progress's tokens so far), and what it reads
# in each: the fake writes each as the real codex does, with the same keys on the way.
READ = {"turn_context": ("payload", "sandbox_policy"),
        "token_count": ("payload", "info"), "task_complete": ("payload",),
        "function_call": ("payload",), "function_call_output": ("payload",)}


def keys_on_the_way(line: dict[str, Any], path: tuple[str, ...]) -> list[tuple[str, ...]]:
    found, value = [tuple(sorted(line))], line
    for key in path:
        value = value[key]
        if isinstance(value, dict):
            found.append(tuple(sorted(value)))
    return found


@pytest.mark.parametrize("scenario", ["answer", "command"])
def test_what_sparring_reads_of_a_rollout_the_fake_writes_as_the_real_codex(
        scenario: str, codex_bin: Path, codex_env: dict[str, str], responses_mock: ResponsesMock,
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings a turn ran with, its tokens, its answer and the commands it ran, as
    sparring reads them from each rollout (codex/rollout.py): the same, but for the model's
    name (the mock's, beside the fake's own) and what the counts are."""
    argv = [a.replace("{CWD}", str(repo)) for a in codex_streams.load("answer")["argv"][1:]]
    command = "cat notes.md"
    (repo / "notes.md").write_text("# notes\n")
    if scenario == "command":
        responses_mock.script(shell_call(command), text("Round one."))
    else:
        responses_mock.script(text("Round one."))
    real = run(codex_bin, tuple(argv), b"Redis or SQLite?", codex_env, repo)
    fake_env = {**codex_env, "FAKE_CODEX_LOG_DIR": str(tmp_path / "fake-log"),
                "FAKE_CODEX_REPLY": "Round one.", "FAKE_CODEX_MODE":
                "ok" if scenario == "answer" else "commands",
                "FAKE_CODEX_COMMAND": f"/bin/bash -lc '{command}'"}
    fake = run(FAKE, tuple(argv), b"Redis or SQLite?", fake_env, repo)
    assert real.returncode == fake.returncode == 0, (real.stderr[-2000:], fake.stderr)
    monkeypatch.setenv("CODEX_HOME", codex_env["CODEX_HOME"])
    real_thread, fake_thread = thread_of(real.stdout), thread_of(fake.stdout)

    real_ran, fake_ran = rollout.turn_context(real_thread), rollout.turn_context(fake_thread)
    assert real_ran and fake_ran and sorted(real_ran) == sorted(fake_ran)
    assert {**real_ran, "model": None} == {**fake_ran, "model": None}
    real_used, fake_used = rollout.usage(real_thread), rollout.usage(fake_thread)
    assert real_used and fake_used and sorted(real_used) == sorted(fake_used)
    real_calls = rollout.tool_calls(real_thread) or []
    fake_calls = rollout.tool_calls(fake_thread) or []
    assert [(c.kind, c.what) for c in real_calls] == [(c.kind, c.what) for c in fake_calls[:1]]
    assert all(command in c.wrote for c in real_calls + fake_calls[:1])
    real_lines, fake_lines = rollout_lines(real_thread), rollout_lines(fake_thread)
    for kind, path in READ.items():
        if kind in real_lines:
            assert kind in fake_lines, kind
            assert keys_on_the_way(fake_lines[kind], path) == keys_on_the_way(
                real_lines[kind], path), kind
