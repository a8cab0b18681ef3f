"""What the real codex prints, recorded: its `--json` events, stderr, exit code and rollouts
for one turn of each scenario below, run with the command line sparring builds
(codex.exec_argv) against the loopback Responses mock. The turn tests replay them through
the fake codex (`FAKE_CODEX_MODE=replay`, `FAKE_CODEX_REPLAY=<scenario>`), so what they
read is what codex prints, not what the fake imagines.

Record them again when the codex pin moves (support/binaries.py's CODEX_VERSION):

    .venv/bin/python tests/support/codex_streams.py

which writes tests/fixtures/codex/<version>/<scenario>.json with the pinned codex
(SPARRING_TEST_CODEX, .ci/node), and its help (tests/support/codex-*help.txt, which the fake
shows and reads its options from). tests/integration/test_streams_real_codex.py records
each scenario again with the pinned binary and fails when what it prints has changed shape
from the committed fixture, or when no fixture is recorded for the pin.

A fixture keeps codex's lines as it printed them (web_search items carry two `id` keys),
with the run's own values as placeholders: `{THREAD}` the thread, `{THREAD_1}`… the
sub-agents' threads, `{CWD}` the project, `{HOME}` and `{CODEX_HOME}`. Rollouts keep what
sparring reads (session_meta without its instructions, turn_context, tool calls and their
outputs, events), not the prompts codex sends the model.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if __name__ == "__main__":  # run as the recording command: the tests' own imports
    sys.path[:0] = [str(HERE.parent), str(HERE.parents[1] / "scripts")]

from support import mcp_notes  # noqa: E402
from support.binaries import CODEX_VERSION, find_codex  # noqa: E402
from support.debates import answer, cpt  # noqa: E402
from support.loopback_server import Exchange  # noqa: E402
from support.responses_mock import (  # noqa: E402
    MOCK_MODEL,
    Behaviour,
    Failed,
    Items,
    ResponsesMock,
    ShellCall,
    custom_tool_call,
    function_call,
    message,
    reasoning_then_text,
    shell_call,
    status,
    text,
    web_search_call,
)

FIXTURES = HERE.parent / "fixtures" / "codex"
PROMPT = "Is SQLite enough for the session store?"
# A structured answer (schemas/codex-answer): think-about and dual-model rounds replay it.
ANSWER = json.dumps(answer([cpt("X-1", "agree", "Expiry needs a sweep job")],
                           position="SQLite in WAL mode holds the write rate."))
NOTES = "# notes\n\n" + mcp_notes.NOTE + "\n"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TEMP_WARNING = "WARNING: proceeding, even though we could not create PATH aliases"


@dataclass(frozen=True)
class Scenario:
    """One recorded turn: what the mock answers (a script, or a router for every request),
    and what codex runs with."""

    about: str
    answers: Callable[[], list[Behaviour]] | None = None
    router: Callable[[], Behaviour] | None = None
    sandbox: str = "read-only"
    model: str = MOCK_MODEL
    config: str = ""  # appended to config.toml
    files: dict[str, str] = field(default_factory=dict)  # in the project
    subagents: bool = False  # kept on, as the user's config file may (codex_subagents)


def _output_of(exchange: Exchange) -> str:
    """The text of the tool output a request ends with."""
    items = exchange.request.body.get("input", []) if isinstance(exchange.request.body,
                                                                 dict) else []
    output = items[-1].get("output", "") if items else ""
    if isinstance(output, list):
        return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    return str(output)


class PollSession:
    """`write_stdin` to the session a yielded `exec_command` left running (unified exec)."""

    def respond(self, exchange: Exchange) -> None:
        found = re.search(r"session ID (\d+)", _output_of(exchange))
        poll = {"session_id": int(found.group(1)) if found else 0, "chars": "",
                "yield_time_ms": 5000}
        Items((function_call("write_stdin", poll, call_id="call_poll"),)).respond(exchange)


class WaitForAgent:
    """`wait_agent` on the sub-agent a `spawn_agent` output names."""

    def respond(self, exchange: Exchange) -> None:
        found = _UUID.search(_output_of(exchange))
        wait = {"targets": [found.group(0) if found else ""], "timeout_ms": 30000}
        Items((function_call("wait_agent", wait, namespace="multi_agent_v1",
                             call_id="call_wait"),)).respond(exchange)


class ByThread:
    """The primary thread's answers in order, and each sub-agent's: a request's
    `thread-id` header says whose it is (the first thread to ask is the primary)."""

    def __init__(self, primary: list[Behaviour], agent: list[Behaviour]) -> None:
        self.queues = {True: list(primary), False: list(agent)}
        self.primary: str | None = None
        self.lock = threading.Lock()

    def respond(self, exchange: Exchange) -> None:
        thread = exchange.request.header("thread-id")
        with self.lock:
            self.primary = self.primary or thread
            queue = self.queues[thread == self.primary]
            behaviour = queue.pop(0) if queue else text("mock: nothing more to say")
        behaviour.respond(exchange)


def _spawning() -> Behaviour:
    task = {"message": "Look through the user's notes for what they say about the batch "
                       "window"}
    return ByThread(
        [Items((function_call("spawn_agent", task, namespace="multi_agent_v1",
                              call_id="call_spawn"),)), WaitForAgent(), text(ANSWER)],
        [shell_call("grep -rn 'batch window' ."), text("The notes say what the user thinks.")])


_PATCH = "*** Begin Patch\n*** Add File: sweep.py\n+def sweep(rows): ...\n*** End Patch\n"
_CODE = ("const run = await tools.exec_command({cmd: \"cat notes.md\"});\n"
         "text(JSON.stringify(run));\n")
_MCP = (f'\n[mcp_servers.notes]\ncommand = "{sys.executable}"\n'
        f'args = ["{HERE / "mcp_notes.py"}"]\n')
_RESETS_IN = 3600

SCENARIOS: dict[str, Scenario] = {
    "answer": Scenario("a plain answer", lambda: [text(ANSWER)]),
    "command": Scenario("a shell command reading a file of the project, then the answer",
                        lambda: [shell_call("cat notes.md"), text(ANSWER)],
                        files={"notes.md": NOTES}),
    "failed_command": Scenario("a shell command that fails (a file that is not there)",
                               lambda: [shell_call("cat missing.md"), text(ANSWER)]),
    "reasoning": Scenario("a reasoning summary before the answer",
                          lambda: [reasoning_then_text("Weighing the write rate.", ANSWER)]),
    "file_change": Scenario(
        "apply_patch adding a file (workspace-write; gpt-5.5 has the apply_patch tool)",
        lambda: [Items((custom_tool_call("apply_patch", _PATCH),)), text(ANSWER)],
        sandbox="workspace-write", model="gpt-5.5"),
    "mcp_call": Scenario(
        f"an MCP tool call whose result nests {mcp_notes.NOTE_DEPTH} levels deep",
        lambda: [Items((function_call("read_note", {"name": "draft"},
                                      namespace="mcp__notes"),)), text(ANSWER)],
        config=_MCP),
    "mcp_resource": Scenario(
        "a file read as an MCP resource (read_mcp_resource): its text comes back as JSON",
        lambda: [Items((function_call("read_mcp_resource", {"server": "notes",
                                                            "uri": mcp_notes.RESOURCE}),)),
                 text(ANSWER)],
        config=_MCP),
    "web_search": Scenario(
        "web searches: a query, a page opened, a pattern found in it",
        lambda: [Items((web_search_call({"type": "search", "query": "sqlite wal write rate"}),
                        web_search_call({"type": "open_page",
                                         "url": "https://example.com/notes"}, "ws_2"),
                        web_search_call({"type": "find_in_page",
                                         "url": "https://example.com/notes",
                                         "pattern": mcp_notes.NOTE.splitlines()[0]}, "ws_3"),
                        message(ANSWER)))]),
    "code_mode": Scenario(
        "code mode, as codex 0.171's default models run (the catalog's tool_mode "
        "code_mode_only): a script whose nested exec_command reads a file",
        lambda: [Items((custom_tool_call("exec", _CODE),)), text(ANSWER)],
        model="gpt-6.1-sol", files={"notes.md": NOTES}),
    "unified_exec": Scenario(
        "a command that outlives its first yield, polled with write_stdin",
        lambda: [ShellCall("sleep 1; cat notes.md", yield_time_ms=250), PollSession(),
                 text(ANSWER)],
        files={"notes.md": NOTES}),
    "sub_agent": Scenario(
        "a sub-agent spawned and waited for; its command runs in its own thread",
        router=_spawning, files={"notes.md": NOTES}, subagents=True),
    "usage_limit": Scenario(
        "the ChatGPT plan's usage limit (429 usage_limit_reached, a reset time)",
        lambda: [status(429, {"error": {"type": "usage_limit_reached",
                                        "message": "The usage limit has been reached",
                                        "plan_type": "plus",
                                        "resets_at": int(time.time()) + _RESETS_IN}})]),
    "concurrency_limit": Scenario(
        "a provider's concurrency limit, as a 400 whose body codex passes on",
        lambda: [status(400, {"error": {"type": "rate_limit_error", "message":
                                        "Concurrency limit exceeded for user, please retry "
                                        "later"}})]),
    "context_window": Scenario(
        "the model's context window exceeded (response.failed context_length_exceeded)",
        lambda: [Failed({"code": "context_length_exceeded",
                         "message": "Your input exceeds the context window of this model."})]),
    "partial_then_failure": Scenario(
        "part of an answer, then the response fails (server_error)",
        lambda: [Failed({"code": "server_error", "message": "The server had an error while "
                                                            "processing your request."},
                        partial="SQLite in WAL mode holds")]),
}


# -- recording -----------------------------------------------------------------------------


def record(codex: Path, name: str, base: Path) -> dict[str, Any]:
    """One turn of scenario `name` with `codex`, in folders under `base`, as a fixture."""
    from sparring.codex import exec_argv
    from sparring.config import TurnSettings

    scenario = SCENARIOS[name]
    work, home = base / "work", base / "home"
    work.mkdir(parents=True)
    for path, content in scenario.files.items():
        (work / path).write_text(content, encoding="utf-8")
    with ResponsesMock() as mock:
        if scenario.router is not None:
            mock.router = scenario.router()
        else:
            assert scenario.answers is not None
            mock.script(*scenario.answers())
        codex_home = mock.codex_home(base / "codex-home", model=scenario.model)
        with (codex_home / "config.toml").open("a", encoding="utf-8") as config:
            config.write(scenario.config)
        settings = TurnSettings.from_record({"sandbox": scenario.sandbox,
                                             "subagents": scenario.subagents})
        argv = exec_argv(str(codex), cwd=work, settings=settings, thread_id=None,
                         output_schema=None)
        done = subprocess.run(argv, input=PROMPT.encode(), capture_output=True, cwd=work,
                              env=mock.codex_env(codex_home, home), timeout=180, check=False)
        assert not mock.errors, mock.errors
    places = {str(work.resolve()): "{CWD}", str(work): "{CWD}",
              str(codex_home): "{CODEX_HOME}", str(home): "{HOME}"}
    return _fixture(name, argv, done, codex_home, places)


def _fixture(name: str, argv: list[str], done: subprocess.CompletedProcess[bytes],
             codex_home: Path, places: dict[str, str]) -> dict[str, Any]:
    stdout = done.stdout.decode("utf-8", "replace").splitlines()
    rollouts = {_UUID.findall(p.name)[-1]: p
                for p in sorted((codex_home / "sessions").glob("*/*/*/rollout-*.jsonl"))}
    primary = next((json.loads(line)["thread_id"] for line in stdout
                    if '"thread.started"' in line), None)
    said = "\n".join(stdout)
    order = [primary, *sorted((t for t in rollouts if t != primary),
                              key=lambda t: (said.find(t) < 0, said.find(t), t))]
    for n, thread in enumerate(t for t in order if t):
        places[thread] = "{THREAD}" if n == 0 else f"{{THREAD_{n}}}"

    def placed(line: str) -> str:
        for real, placeholder in sorted(places.items(), key=lambda p: -len(p[0])):
            line = line.replace(real, placeholder)
        return line

    return {
        "codex": CODEX_VERSION, "scenario": name, "about": SCENARIOS[name].about,
        "argv": ["codex", *[placed(a) for a in argv[1:]]], "prompt": PROMPT,
        "exit_code": done.returncode,
        "events": [placed(line) for line in stdout],
        "stderr": [placed(line) for line in done.stderr.decode("utf-8", "replace").splitlines()
                   if line.strip() and not line.startswith(_TEMP_WARNING)],
        "rollouts": {places[thread]: [placed(line) for line in _kept(path)]
                     for thread, path in rollouts.items() if thread in places},
    }


def _kept(path: Path) -> list[str]:
    """The rollout's lines sparring reads, the instructions and prompts codex sends the
    model left out (they are most of its bytes)."""
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        payload = entry.get("payload") or {}
        if entry.get("type") == "response_item" and payload.get("type") == "message" and \
                payload.get("role") in ("developer", "user"):
            continue
        if entry.get("type") == "session_meta":
            entry["payload"] = {k: v for k, v in payload.items()
                                if k not in ("base_instructions", "instructions")}
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        kept.append(line)
    return kept


def said(codex: Path, *args: str) -> str:
    """What `codex ARGS` prints on stdout, run in an empty home of its own."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="codex-said-") as home:
        done = subprocess.run([str(codex), *args], capture_output=True, text=True, timeout=60,
                              env={"CODEX_HOME": home, "HOME": home, "PATH": "/usr/bin:/bin"},
                              check=True)
    return done.stdout


def record_help(codex: Path) -> None:
    """The pinned codex's help at each level the fake models, into the files the fake
    shows and reads its options from (fake_codex.HELP_FILES)."""
    from support.fake_codex import HELP_FILES

    for level, name in HELP_FILES.items():
        (HERE / name).write_text(said(codex, *level.split()[1:], "--help"), encoding="utf-8")


def catalog(codex: Path) -> dict[str, Any]:
    """`codex debug models --bundled` (the models shipped with the binary), cut to what
    sparring reads of it: each model's slug, its efforts and its default."""
    kept = ("slug", "default_reasoning_level", "supported_reasoning_levels", "visibility",
            "priority")
    return {"models": [{key: model[key] for key in kept if key in model}
                       for model in json.loads(said(codex, "debug", "models", "--bundled"))
                       ["models"]]}


# -- reading -------------------------------------------------------------------------------


def load(name: str, version: str = CODEX_VERSION) -> dict[str, Any]:
    """The recorded fixture of scenario `name` at codex `version`."""
    data: dict[str, Any] = json.loads((FIXTURES / version / f"{name}.json").read_text("utf-8"))
    return data


def events(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    """The fixture's events, parsed (a web search's second `id` wins, as in json.loads)."""
    return [json.loads(line) for line in fixture["events"]]


def shape(fixture: dict[str, Any]) -> list[tuple[str, ...]]:
    """What a fixture says, without its run's values: each event's type and keys, and its
    item's type, status and keys."""
    found = []
    for event in events(fixture):
        item = event.get("item") if isinstance(event.get("item"), dict) else None
        found.append((event.get("type"), ",".join(sorted(event)),
                      *((item.get("type"), str(item.get("status")), ",".join(sorted(item)))
                        if item else ())))
    return [tuple(str(part) for part in entry) for entry in found]


def main(argv: list[str]) -> int:
    """Record every scenario (or those named) with the pinned codex, into FIXTURES; with
    `--codex PATH`, with another codex, into its version's folder (an older dialect's)."""
    import tempfile

    from support.binaries import binary_version

    other = argv[1] if argv[:1] == ["--codex"] and len(argv) > 1 else None
    argv = argv[2:] if other else argv
    codex = Path(other) if other else find_codex()
    if codex is None:
        print(f"no codex {CODEX_VERSION}: run .ci/run, or set SPARRING_TEST_CODEX",
              file=sys.stderr)
        return 1
    version = binary_version(codex) if other else CODEX_VERSION
    target = FIXTURES / str(version)
    target.mkdir(parents=True, exist_ok=True)
    if not argv and not other:
        (target / "models.json").write_text(json.dumps(catalog(codex), indent=1) + "\n",
                                            encoding="utf-8")
        record_help(codex)
    for name in argv or list(SCENARIOS):
        with tempfile.TemporaryDirectory(prefix=f"codex-{name}-") as base:
            fixture = {**record(codex, name, Path(base)), "codex": version}
        (target / f"{name}.json").write_text(
            json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{name}: exit {fixture['exit_code']}, {len(fixture['events'])} events")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
