"""The plugin's PreToolUse hook: what install.py's rules approve for an installed pack, the
plugin approves for itself, and nothing more.

A plugin install writes no permission settings, and a skill's `allowed-tools` last only the
turn it was invoked in, so without this every runner call after a skill's first turn would
stop to ask. Claude Code runs this hook (hooks/hooks.json, through scripts/hook.py) before
each Bash, Write, Edit, Read and Skill call while the plugin is enabled. It answers `allow` for
exactly what layout.rules() approves for an installed skill folder, here the plugin's own:

- its launcher, `<plugin>/skills/<skill>/sparring`, by its full path as written under the
  plugin root Claude Code names (CLAUDE_PLUGIN_ROOT, which must be the plugin this file is in),
  followed by one of the verbs that skill runs (layout.verbs), plain words, or words in
  double quotes (a single quote only there), one space apart; never a call naming --sandbox
  (layout.ASKED: the rules ask);
- a write into `.sparring/inbox/` of the directory Claude Code runs in (layout.INBOX);
- a read inside one of the plugin's skill folders;
- Claude invoking one of the plugin's skills itself (`sparring:<skill>`), as it does when the
  user asks in plain words, "go on with the debate" (install.py's `Skill(<skill>)` rules).

Anything else, and anything it cannot be sure of (a character a shell treats specially, a
second command, a link out of the plugin or the inbox, input it cannot parse), gets no
answer at all: Claude Code then asks the user as it would without the hook. It never denies.
An `allow` from a hook does not override the user's own deny or ask rules, and the runner
still refuses what it refuses (its sandbox rules, its own argument checks).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from sparring.installer import layout

OWN_ROOT = Path(__file__).resolve().parents[3]  # scripts/sparring/installer/hook.py
MAX_INPUT = 1 << 20
# The characters a command may hold: none a shell treats specially outside double quotes
# but the space, and none it treats specially inside them (no $, `, \, !): what is between
# double quotes is literal. Letters and digits of any script are fine. Inside double quotes a
# space and a single quote are literal too (a home such as /Users/Jane O'Doe).
PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
QUOTED = PLAIN | frozenset(" '")  # inside a double-quoted word
WORD = r'"[^"]+"|[^ "]+'  # a word: plain, or whole in double quotes
WORDS = re.compile(rf"(?:{WORD})(?: (?:{WORD}))*")  # one space apart
WRITES = ("Write", "Edit", "MultiEdit")
NAME = "sparring"  # .claude-plugin/plugin.json's: Claude Code names its skills `sparring:<skill>`


def main() -> int:
    """Read the event on stdin; print an `allow` decision, or nothing. Always exit 0."""
    try:
        event = json.loads(sys.stdin.read(MAX_INPUT))
        reason = decide(event, os.environ.get("CLAUDE_PLUGIN_ROOT", ""))
    except Exception:  # on any doubt: no answer, and Claude Code asks
        reason = None
    if reason is not None:
        sys.stdout.write(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": reason}}) + "\n")
    return 0


def decide(event: Any, plugin: str) -> str | None:
    """Why this tool call is approved, or None when it is not this hook's to approve."""
    if not isinstance(event, dict) or event.get("hook_event_name") != "PreToolUse":
        return None
    root = _plugin_root(plugin)
    tool, given = event.get("tool_name"), event.get("tool_input")
    if root is None or not isinstance(given, dict):
        return None
    if tool == "Bash":
        return launcher_call(given.get("command"), root)
    if tool in WRITES:
        return inbox_write(given.get("file_path"), event.get("cwd"))
    if tool == "Read":
        return skill_read(given.get("file_path"), root)
    if tool == "Skill":
        return own_skill(given.get("skill"), root)
    return None


def _plugin_root(plugin: str) -> Path | None:
    """The plugin root as Claude Code names it, when it is the plugin this hook ships in.
    2.1.197 names a plugin installed from a marketplace in a local folder with a trailing
    `/`, which the skills' paths do not have: one is taken off."""
    if plugin.endswith("/") and len(plugin) > 1:
        plugin = plugin[:-1]
    if not _plain_absolute(plugin) or os.path.realpath(plugin) != str(OWN_ROOT):
        return None
    return Path(plugin)


def _plain_absolute(path: Any) -> bool:
    """An absolute path spelled one way only: no `..`, `.`, `//` or trailing `/`."""
    return isinstance(path, str) and os.path.isabs(path) and "\0" not in path and \
        os.path.normpath(path) == path and not path.startswith("//")


def words_of(command: Any) -> list[str] | None:
    """The words of a command written as the skills write one, else None."""
    if not isinstance(command, str) or not command or len(command) > 8192:
        return None
    if not WORDS.fullmatch(command):
        return None  # two spaces, a quote inside a word, an empty word
    words = []
    for token in re.findall(WORD, command):
        quoted = token.startswith('"')
        word, allowed = (token[1:-1], QUOTED) if quoted else (token, PLAIN)
        if any(c not in allowed and not (c.isalnum() and not c.isascii()) for c in word):
            return None  # ; | & < > ( ) $ ` \ * ? [ ] { } ~ ! # newline tab, ' unquoted …
        words.append(word)
    return words


def launcher_call(command: Any, root: Path) -> str | None:
    words = words_of(command)
    if not words:
        return None
    skill = _skill_of(words[0], root, name="sparring")
    if skill is None:
        return None
    rest = words[1:]
    if fnmatch.fnmatchcase(" ".join(rest), layout.ASKED):
        return None  # the installed rules ask the user here, whatever the verb
    for verb in layout.verbs(skill):
        if rest[:len(verb.split())] == verb.split():
            return f"sparring plugin: the {skill} skill's runner, `{verb}`"
    return None


def _skill_of(path: str, root: Path, name: str) -> str | None:
    """The skill whose folder holds `path` (the launcher itself when `name` is given), when
    it is one of the plugin's skills and `path` does not lead out of the plugin."""
    if not _plain_absolute(path):
        return None
    parts = Path(path).relative_to(root).parts if Path(path).is_relative_to(root) else ()
    if len(parts) < 3 or parts[0] != "skills" or parts[1] not in layout.SKILL_VERBS:
        return None
    if name and parts[2:] != (name,):
        return None
    folder = root / "skills" / parts[1]
    real = os.path.realpath(path)
    if not (folder / "SKILL.md").is_file() or not _within(real, str(OWN_ROOT)):
        return None
    if name and not os.path.isfile(real):
        return None
    return parts[1]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def inbox_write(path: Any, cwd: Any) -> str | None:
    """A file in `.sparring/inbox/` of the directory Claude Code runs in, reached without a
    link (layout.INBOX_RULE)."""
    if not _plain_absolute(path) or not _plain_absolute(cwd):
        return None
    inbox = os.path.join(cwd, layout.INBOX)
    real_inbox = os.path.join(os.path.realpath(cwd), layout.INBOX)
    if not _within(path, inbox) or path == inbox:
        return None
    if os.path.realpath(inbox) != real_inbox or os.path.islink(path):
        return None  # the inbox, or the file, is a link: it may lead anywhere
    if not _within(os.path.realpath(os.path.dirname(path)), real_inbox):
        return None
    return "sparring plugin: a file for the runner, in the inbox"


def skill_read(path: Any, root: Path) -> str | None:
    skill = _skill_of(path, root, name="") if isinstance(path, str) else None
    return None if skill is None else f"sparring plugin: the {skill} skill's own folder"


def own_skill(name: Any, root: Path) -> str | None:
    """One of the plugin's own skills, by the name Claude Code gives it: never a bare name,
    which a project's or the user's skill of that name may hold."""
    if not isinstance(name, str) or not name.startswith(f"{NAME}:"):
        return None
    skill = name[len(NAME) + 1:]
    if skill not in layout.SKILL_VERBS or not (root / "skills" / skill / "SKILL.md").is_file():
        return None
    return f"sparring plugin: its {skill} skill"
