"""A scripted model: plays Claude through a whole workflow inside the real Claude Code.

The Messages mock hands every request to a `ScriptedModel`, which answers with the next tool
call of a JSON script, the way the skill's SKILL.md tells Claude to proceed:

    {"bash": "{{launcher}} init --skill think-about", "save": {"session": "session"}}
    {"write": "{{inbox}}/verdict.json", "json": {"points": [...]}}
    {"edit": "{{inbox}}/verdict.json", "old": "...", "new": "..."}
    {"bash": "{{launcher}} wait {{session}}", "until": {"status": "!running"}}
    {"bash": "{{next}}"}
    {"text": "done"}

A conversation the user opens in plain words, no slash command, begins with a `skill` step
(`{"skill": "arch-debate", "args": "go on with the debate"}`): Claude invokes the skill with
its Skill tool, and the skill's expansion follows in the next request.

Values come from what came before: `skill_dir` (the `Base directory for this skill:` line
of the expanded skill), `launcher` (`<skill_dir>/sparring`), `cwd` (where Claude Code runs),
and whatever a step saved from its tool result (`save` maps a name to a dotted path into the
runner's JSON). Only `{{name}}` in a command or a path is replaced (in a command, a word
that then has a space is put in double quotes); the text a step writes is written exactly as
given, so hostile text stays hostile. `until` repeats a step until the
result matches (`"!v"`: anything but v); `timeout` is the Bash tool's own limit (ms), as a
SKILL.md asks Claude to give a long `wait`; `shows` lists text the result must hold (what
`wait` printed on stderr beside its JSON); `expect` checks a result and fails the run if it
does not match; `"fails": true` marks a runner call expected to exit non-zero (its JSON
error is still read). A `text` step with `then` ends Claude's turn with a question to the user,
and `then` is the user's answer the harness sends as the next turn (`take_reply`). Every
exchange is kept in `log` for the test's assertions and benchmarks.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support import messages_mock as mm
from support.loopback_server import Exchange

BASE_DIR = "Base directory for this skill: "
MAX_REPEATS = 60
_VALUE = re.compile(r"\{\{(\w+)\}\}")


class ScriptFailed(AssertionError):
    """The run went off script: a step's result did not match, or a value was missing."""


@dataclass
class Exchanged:
    """One tool call the model made, and what Claude Code answered."""

    step: int
    tool: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool | None = None

    @property
    def output(self) -> dict[str, Any] | None:
        """The runner's JSON, for a Bash call that printed one object (after the `Exit code
        N` line Claude Code puts before the output of a command that failed, and after the
        progress lines `wait` printed on stderr, which Claude Code puts before stdout)."""
        text = self.result or ""
        if self.is_error and text.startswith("Exit code "):
            text = text.partition("\n")[2]
        while text.startswith("# "):
            text = text.partition("\n")[2]
        try:
            found = json.loads(text)
        except ValueError:
            return None
        return found if isinstance(found, dict) else None


@dataclass
class ScriptedModel:
    steps: list[dict[str, Any]]
    values: dict[str, str] = field(default_factory=dict)
    log: list[Exchanged] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    position: int = 0
    repeats: int = 0
    reply: str | None = None  # the user's answer to the question that ended the turn
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_file(cls, path: Path, **values: str) -> ScriptedModel:
        return cls(json.loads(path.read_text(encoding="utf-8"))["steps"], dict(values))

    @property
    def finished(self) -> bool:
        return self.position >= len(self.steps) and not self.failures

    def take_reply(self) -> str | None:
        """The user's answer, once Claude's turn ended with a question; else None."""
        with self._lock:
            reply, self.reply = self.reply, None
            return None if self.failures else reply

    def respond(self, exchange: Exchange) -> None:
        with self._lock:
            try:
                self._answer(exchange)
            except ScriptFailed as exc:
                self.failures.append(str(exc))
                self.position = len(self.steps)
                mm.text(f"SCRIPT FAILED: {exc}").respond(exchange)

    # -- one request ------------------------------------------------------------------------

    def _answer(self, exchange: Exchange) -> None:
        request = exchange.request
        if "skill_dir" not in self.values and not self._learn_skill_dir(request) and (
                self.position >= len(self.steps) or "skill" not in self.steps[self.position]):
            raise ScriptFailed("the skill was not expanded (no `Base directory for this skill:`)")
        results = mm.last_user_tool_results(request)
        if results and self.log and self.log[-1].result is None:
            self._take_result(results[-1])
        if self.position >= len(self.steps):
            mm.text("(script finished)").respond(exchange)
            return
        step = self.steps[self.position]
        if "text" in step:
            self.position += 1
            self.reply = step.get("then")
            mm.text(step["text"]).respond(exchange)
            return
        tool, tool_input = self._call(step)
        self.log.append(Exchanged(self.position, tool, tool_input))
        mm.tool_use(tool, tool_input).respond(exchange)

    def _learn_skill_dir(self, request: Any) -> bool:
        """From the skill's expansion: `/skill args` expands in the first message, a Skill
        tool call (the user asked in plain words) in the user message that answers it."""
        last = mm.last_user_message(request)
        for text in [*mm.first_message_texts(request), *(mm.block_texts(last) if last else [])]:
            if text.startswith(BASE_DIR):
                skill_dir = text[len(BASE_DIR):].split("\n", 1)[0]
                self.values.update(skill_dir=skill_dir, launcher=f"{skill_dir}/sparring")
                return True
        return False

    def _call(self, step: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if "bash" in step:
            command = self._command(step["bash"])
            found = {"command": command, "description": step.get("why", command[:60])}
            if "timeout" in step:  # the Bash tool's own limit, in ms, as SKILL.md asks for it
                found["timeout"] = step["timeout"]
            return "Bash", found
        if "write" in step:
            return "Write", {"file_path": self._fill(step["write"]), "content": _content(step)}
        if "read" in step:
            return "Read", {"file_path": self._fill(step["read"])}
        if "edit" in step:  # {"edit": path, "old": text, "new": text}: Claude's Edit tool
            return "Edit", {"file_path": self._fill(step["edit"]), "old_string": step["old"],
                            "new_string": step["new"]}
        if "skill" in step:  # Claude invokes a skill itself, for words that ask for it
            return "Skill", {"skill": step["skill"], "args": self._fill(step.get("args", ""))}
        raise ScriptFailed(f"step {self.position} has no bash, write, edit, read, skill or text: "
                           f"{step}")

    def _command(self, template: str) -> str:
        """A Bash step's command. As SKILL.md says, a word with a space (a path under "My
        Projects") goes in double quotes; a step that is one value alone is a command the
        runner printed (`{{next}}`), already spelled for the shell."""
        if _VALUE.fullmatch(template):
            return self._fill(template)
        words = (self._fill(word) for word in template.split(" "))
        return " ".join(f'"{word}"' if " " in word else word for word in words)

    def _fill(self, text: str) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self.values:
                raise ScriptFailed(f"step {self.position}: no value {name!r} yet")
            return self.values[name]

        return _VALUE.sub(value, text)

    # -- one result -------------------------------------------------------------------------

    def _take_result(self, block: dict[str, Any]) -> None:
        last = self.log[-1]
        last.result = mm.tool_result_text(block)
        last.is_error = block.get("is_error")
        step = self.steps[self.position]
        if bool(last.is_error) != bool(step.get("fails")):
            raise ScriptFailed(f"step {self.position} ({last.tool}) " + (
                f"failed: {last.result[:500]}" if last.is_error else "was expected to fail"))
        out = last.output if last.tool == "Bash" else None
        if "until" in step and not _matches(out, step["until"]):
            self.repeats += 1
            if self.repeats > MAX_REPEATS:
                raise ScriptFailed(f"step {self.position}: {step['until']} never came")
            return  # the same step again
        self.repeats = 0
        for name, path in step.get("save", {}).items():
            self.values[name] = str(_lookup(out, path, self.position))
        unseen = [text for text in step.get("shows", []) if text not in last.result]
        if unseen:
            raise ScriptFailed(f"step {self.position}: {unseen} not shown in "
                               f"{last.result[-1500:]!r}")
        if "expect" in step and not _matches(out, step["expect"]):
            raise ScriptFailed(f"step {self.position}: expected {step['expect']}, got "
                               f"{json.dumps(out)[:1500] if out else last.result[:1500]}")
        self.position += 1


def _content(step: dict[str, Any]) -> str:
    if "json" in step:
        return json.dumps(step["json"], ensure_ascii=False, indent=2)
    return str(step["content"])


def _lookup(data: Any, path: str, position: int) -> Any:
    for key in path.split("."):
        if isinstance(data, list) and key.isdigit() and int(key) < len(data):
            data = data[int(key)]
        elif isinstance(data, dict) and key in data:
            data = data[key]
        else:
            raise ScriptFailed(f"step {position}: no {path!r} in the result")
    return data


def _matches(data: Any, wanted: dict[str, Any]) -> bool:
    for path, value in wanted.items():
        try:
            found = _lookup(data, path, -1)
        except ScriptFailed:
            return False
        if isinstance(value, str) and value.startswith("!"):
            if found == value[1:]:
                return False
        elif found != value:
            return False
    return True
