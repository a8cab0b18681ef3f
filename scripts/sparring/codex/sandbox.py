"""Codex's sandbox: widening it is the user's decision alone.

The user allows a sandbox in one of two places neither Claude's commands nor a repository's
files reach: `SPARRING_SANDBOX` in the shell Claude Code was started from, or `sandbox:` in
their own config file, `${XDG_CONFIG_HOME:-~/.config}/sparring/config.yaml` (the variable
wins). What they allow is also what Codex runs in; without either it is read-only. The same
file alone may keep Codex's sub-agents or hooks on in a debate turn (USER_SWITCHES), which
every turn runs without otherwise.

`--sandbox`, the project's `sparring.yaml` and, on resume, the previous round may only
narrow it. One asking for more is `sandbox_not_allowed`, which names where the user may
allow it: never a silent clamp that would hide the request.

A value found where the project reaches counts as the project's request (it may narrow,
never widen), because a variable alone does not prove the user set it: Claude Code hands
the `env` of a project's `.claude/settings.json` and `settings.local.json` to every command
it runs (measured with 2.1.197 and 2.1.332). So `SPARRING_SANDBOX` set there, a config file
inside the project or linked into it, and a config file found through `HOME` or
`XDG_CONFIG_HOME` set there are not the user's decision. Claude cannot set a variable for
one command itself: Claude Code refuses `VAR=x launcher …`, `env VAR=x …` and
`export VAR=x && …` without asking.

The runner checks every codex command line once more just before it starts codex (`gate`):
whatever built it, a turn never runs with more than the user allows at that moment, nor with
a flag that could widen it (the bypass flag, `--add-dir`, `--profile`, a `-c` override,
`--trust`).
"""

from __future__ import annotations

import json
import os
import pwd
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from sparring import config, yamltext
from sparring.config import SANDBOXES
from sparring.errors import SparringError
from sparring.quoting import shell_word
from sparring.store import locate, witness

ENV = "SPARRING_SANDBOX"
DEFAULT = "read-only"
# Variables that locate the user's config file: set by the project, they would choose it.
LOCATORS = ("HOME", "XDG_CONFIG_HOME")
CLAUDE_SETTINGS = ("settings.json", "settings.local.json")  # in <dir>/.claude/
# Variables that choose which program runs as codex, or the configuration it reads
# (`$CODEX_HOME/config.toml`, else `~/.codex/`): its MCP servers and notify command run as the
# user outside any sandbox, and it may add writable roots. Set by the project, they are not
# the user's decision: no codex starts (HOME counts only when CODEX_HOME is not the user's).
CHOOSERS = {"SPARRING_CODEX": "which program runs as codex",
            "CODEX_HOME": "Codex's own configuration",
            "XDG_STATE_HOME": "where sparring keeps its records' copies out of Codex's reach",
            "HOME": "Codex's own configuration (~/.codex) and where sparring keeps its "
                    "records' copies (~/.local/state)"}

# Where each sandbox came from, as `source` and `allowed_by` spell it.
SOURCES = {
    "default": "the default",
    "environment": f"{ENV} in the user's environment",
    "user_config": "the user's config file",
    "flag": "--sandbox",
    "project_config": "the project's sparring.yaml",
    "project_settings": f"{ENV} in the project's Claude Code settings",
    "linked_config": "a config file that lies in the project",
    "previous_round": "the previous round",
}


# What the user's config file alone may keep on in a debate turn, each a switch of codex's
# (config.TURN_SETTINGS, CodexArg.features), off unless it says `true`: never sparring.yaml,
# an option or a variable, as with the sandbox.
USER_SWITCHES = {"codex_subagents": "subagents", "codex_hooks": "hooks"}
USER_KEYS = ("sandbox", *USER_SWITCHES)


def rank(mode: str) -> int:
    return SANDBOXES.index(mode)


class Request(NamedTuple):
    """A sandbox someone asked for, who asked, and in which file (None: a flag, a round)."""
    mode: str
    source: str
    where: str | None = None


class Allowance(NamedTuple):
    """The widest sandbox the user allows, and where they said so (None: the default)."""
    mode: str
    source: str
    where: str | None
    project: tuple[Request, ...] = ()  # values found where the project reaches
    notes: tuple[str, ...] = ()
    keeps: tuple[str, ...] = ()  # what the user's config file keeps on (USER_SWITCHES)


class Sandbox(NamedTuple):
    """The sandbox a turn runs in, and why."""
    mode: str
    source: str
    allowed: Allowance
    where: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"mode": self.mode, "source": self.source,
                                 "allowed": self.allowed.mode,
                                 "allowed_by": self.allowed.source, "where": self.allowed.where}
        if self.notes:
            found["notes"] = list(self.notes)
        return found


# -- what the user allows --------------------------------------------------------------------


def user_config(env: Mapping[str, str] | None = None) -> Path:
    """${XDG_CONFIG_HOME:-$HOME/.config}/sparring/config.yaml (a relative XDG_CONFIG_HOME
    is ignored, as the XDG spec says)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(env.get("HOME") or str(Path.home()), ".config")
    return Path(base) / "sparring" / "config.yaml"


def allowance(root: Path, cwd: Path, env: Mapping[str, str] | None = None) -> Allowance:
    """What the user allows, read now: their variable, else their config file, else read-only."""
    env = os.environ if env is None else env
    by_project = project_env(root, cwd)
    project: list[Request] = []
    notes: list[str] = []
    chosen: Allowance | None = None
    keeps: tuple[str, ...] = ()
    value = env.get(ENV)
    if value:
        mode = _mode(value, f"{ENV}={value!r}", f"set {ENV} to one of them, or unset it")
        if ENV in by_project:
            project.append(Request(mode, "project_settings", str(by_project[ENV])))
            notes.append(f"{ENV} is set by {by_project[ENV]}, which the project controls: "
                         "it may narrow the sandbox, not widen it")
        else:
            chosen = Allowance(mode, "environment", ENV)
    path = user_config(env)
    locator = next((name for name in LOCATORS if name in by_project), None)
    if locator is not None:
        notes.append(f"{path} was not read: {locator} is set by {by_project[locator]}, "
                     "which the project controls")
    else:
        in_file = read_user_config(path)
        mode_in_file = in_file.get("sandbox")
        if in_file and _reaches_project(path, root, cwd):
            if mode_in_file is not None:
                project.append(Request(mode_in_file, "linked_config", str(path)))
            notes.append(f"{path} lies in the project or links into it: it may narrow the "
                         "sandbox, not widen it, and keeps nothing of Codex's on")
        else:
            keeps = tuple(name for key, name in USER_SWITCHES.items() if in_file.get(key))
            if mode_in_file is not None and chosen is None:
                chosen = Allowance(mode_in_file, "user_config", str(path))
    found = chosen or Allowance(DEFAULT, "default", None)
    return Allowance(found.mode, found.source, found.where, tuple(project), tuple(notes),
                     keeps)


def read_user_config(path: Path) -> dict[str, Any]:
    """The user's config file, checked: `sandbox` (a mode) and USER_SWITCHES (true or
    false), each when it says it; {} when there is none. Only a file only the user can change
    counts: one that other users may write is refused."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise _invalid(path, f"cannot be read: {exc.strerror}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise _invalid(path, "is not a regular file")
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _invalid(path, "may be changed by other users; sparring takes your sandbox only "
                       "from a file only you can change",
                       f"`chmod go-w {shell_word(str(path))}` (and own it)")
    try:
        data = yamltext.load(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _invalid(path, f"is not valid YAML text: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict) or set(data) - set(USER_KEYS):
        raise _invalid(path, f"must be a mapping whose keys are among {', '.join(USER_KEYS)}")
    found: dict[str, Any] = {key: _switch(path, key, data[key])
                             for key in USER_SWITCHES if key in data}
    if "sandbox" in data:
        found["sandbox"] = _mode(data["sandbox"], f"{path} `sandbox: {data['sandbox']}`",
                                 f"fix {path.name}, or remove it")
    return found


def _switch(path: Path, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _invalid(path, f"`{key}: {value}` is not true or false",
                       f"write `{key}: true` or `{key}: false` in {path.name}, or remove it")
    return value


def switches(allowed: Allowance, folders: Sequence[str]) -> dict[str, Any]:
    """Each of codex's switches (config.switches) as a turn runs it: on only when the user's
    config file keeps it on; with hooks on, the project's `folders` untrusted, so that its
    own hooks never load."""
    found: dict[str, Any] = {row.name: row.name in allowed.keeps for row in config.switches()}
    found["untrusted"] = list(dict.fromkeys(folders)) if found["hooks"] else None
    return found


def project_env(root: Path, cwd: Path) -> dict[str, Path]:
    """The variables sparring reads for the user's decision that a project's Claude Code
    settings set (`env`), each with the settings file that sets it: those of the working
    directory and of every folder above it up to the project's root."""
    found: dict[str, Path] = {}
    for folder in _folders(root.resolve(), cwd.resolve()):
        for name in CLAUDE_SETTINGS:
            path = folder / ".claude" / name
            for key in _env_keys(path):
                if key in (ENV, *LOCATORS, *CHOOSERS):
                    found.setdefault(key, path)
    return found


def codex_chosen_by_project(root: Path, cwd: Path, env: Mapping[str, str] | None = None
                            ) -> SparringError | None:
    """The error when the project's Claude Code settings choose the codex that would run, or
    its configuration (CHOOSERS); None when the user's environment does."""
    env = os.environ if env is None else env
    by_project = project_env(root, cwd)
    for name, what in CHOOSERS.items():
        if name not in by_project or not env.get(name):
            continue
        if name == "HOME" and all(env.get(n) and n not in by_project
                                  for n in ("CODEX_HOME", "XDG_STATE_HOME")):
            continue  # the user's CODEX_HOME and XDG_STATE_HOME decide, not ~
        return SparringError(
            "sandbox_not_allowed",
            f"{name} is set by {by_project[name]}, which the project controls: it chooses "
            f"{what}, which can run commands outside Codex's sandbox; nothing was started",
            f"remove {name} from the `env` of {by_project[name]} (only the user chooses "
            "codex and its configuration, in the shell they start Claude Code from)",
            requested=name, source="project_settings", where=str(by_project[name]))
    return None


def codex_in_project(executable: str, root: Path, cwd: Path) -> SparringError | None:
    """The error when the codex that would run lies in the project (found on a PATH the
    project's Claude Code settings may have set, or named by SPARRING_CODEX): a program the
    project chose, which would run as the user outside any sandbox. The project is the root
    and the working folder (one with no .git of its own in a home kept in git); one that
    holds the user's own home (as the user database says) chose nothing: its programs are
    the user's, as the launcher decides for the runtime (scripts/launcher.sh)."""
    real = os.path.realpath(executable)
    try:
        own_home = os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:  # no entry for this uid (a container's): no home to exempt
        own_home = None
    tops = [os.path.realpath(place) for place in (root, cwd)]
    top = next((t for t in tops if locate.within(real, t)
                and not (own_home and locate.within(own_home, t))), None)
    if top is None:
        return None
    return SparringError(
        "sandbox_not_allowed", f"the codex that would run ({executable}) lies inside the "
        f"project {top}, which chose it: it would run outside any sandbox; nothing was "
        "started", "install codex outside the project (`npm install -g @openai/codex`) and "
        "start Claude Code from a shell whose PATH finds it there, or set SPARRING_CODEX to "
        "it in that shell", requested="codex", source="project_path", where=real)


def _witness_within_reach(argv: Sequence[str], root: Path) -> SparringError | None:
    """A turn that may write the project never runs while the copies of sparring's records
    lie in it (a project that is the home folder, a state folder set inside it): Codex could
    rewrite a record and its copy together (store/witness.py)."""
    parsed = _parse(argv)
    if isinstance(parsed, str) or parsed.get("-s") != ["workspace-write"]:
        return None
    if not witness.within(root):
        return None
    return SparringError(
        "config_invalid", f"the copies of sparring's records ({witness.folder(root)}) lie "
        f"inside the project {root}, where Codex's workspace-write sandbox could rewrite "
        "them with the records; nothing was started",
        "set XDG_STATE_HOME to a folder outside the project in the shell Claude Code starts "
        "from, or let Codex run read-only (`sparring doctor` shows `records`)",
        where=str(witness.folder(root)))


def _folders(root: Path, cwd: Path) -> list[Path]:
    if cwd != root and root in cwd.parents:
        return [cwd, *[p for p in cwd.parents if p == root or root in p.parents]]
    return [root] if cwd == root else [cwd, root]


def _env_keys(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return []  # absent, or a file Claude Code cannot apply either
    env = data.get("env") if isinstance(data, dict) else None
    return [str(key) for key in env] if isinstance(env, dict) else []


def _reaches_project(path: Path, root: Path, cwd: Path) -> bool:
    """Whether the config file is in the project (the project is the config folder, or holds
    it) or links into it: a file a repository or Codex could write."""
    places = {root.absolute(), root.resolve(), cwd.absolute(), cwd.resolve()}
    seen = {path.absolute(), path.resolve()}
    return any(p == place or place in p.parents for p in seen for place in places)


# -- what a turn runs in ------------------------------------------------------------------


def decide(allowed: Allowance, flag: str | None = None, project_file: str | None = None,
           previous: Request | None = None, project: Path | None = None) -> Sandbox:
    """The sandbox a turn runs in: the first request, else what the user allows. A request for
    more than that is refused. `project` is the project's sparring.yaml (for messages)."""
    ordered = [Request(flag, "flag") if flag else None, previous,
               *[r for r in allowed.project if r.source == "project_settings"],
               Request(project_file, "project_config", str(project) if project else None)
               if project_file else None,
               *[r for r in allowed.project if r.source == "linked_config"]]
    request = next((r for r in ordered if r is not None), None)
    if request is None:
        return Sandbox(allowed.mode, allowed.source, allowed, allowed.where, allowed.notes)
    if rank(request.mode) > rank(allowed.mode):
        raise not_allowed(request, allowed)
    return Sandbox(request.mode, request.source, allowed, request.where, allowed.notes)


def not_allowed(request: Request, allowed: Allowance) -> SparringError:
    asker = SOURCES[request.source] + (f" ({request.where})" if request.where else "")
    by = SOURCES[allowed.source] + (f" ({allowed.where})" if allowed.where else "")
    undo = {
        "flag": f"run the command without --sandbox (or with --sandbox {allowed.mode})",
        "previous_round": f"go on narrower: add `--sandbox {allowed.mode}` to the command",
        "project_config": f"remove `sandbox:` from {request.where or 'sparring.yaml'}",
        "project_settings": f"remove {ENV} from the `env` of {request.where}",
        "linked_config": f"move {request.where} out of the project",
    }[request.source]
    return SparringError(
        "sandbox_not_allowed",
        f"{asker} asks for Codex's sandbox {request.mode}, but the user allows at most "
        f"{allowed.mode} ({by}); nothing was started",
        f"only the user can widen it, where neither Claude nor the repository reaches: "
        f"`export {ENV}={request.mode}` in the shell they start Claude Code from, or "
        f"`sandbox: {request.mode}` in {user_config()}. Or {undo}",
        requested=request.mode, source=request.source, allowed=allowed.mode,
        allowed_by=allowed.source)


def _mode(value: Any, what: str, fix: str) -> str:
    if value not in SANDBOXES:
        raise SparringError("config_invalid", f"{what} is not a sandbox: one of "
                            f"{', '.join(SANDBOXES)}", fix)
    return str(value)


def _invalid(path: Path, why: str, hint: str = "") -> SparringError:
    return SparringError("config_invalid", f"{path} {why}", hint or f"fix {path.name}, or "
                         "remove it")


# -- the last check, where codex starts ----------------------------------------------------

# What the runner passes (codex.exec_argv), and nothing else: bare flags, and flags with a
# value: the settings' (config.TURN_SETTINGS, each value as its row makes and checks it),
# `--output-schema` and `-C`.
_BARE = ("--json", "--skip-git-repo-check")
_OWN = ("--output-schema", "-C")


def refusal(argv: Sequence[str], allowed: Allowance) -> str | None:
    """Why this codex command line may not run, or None. Anything outside the shape the
    runner builds is refused, so no model name, path or override can widen the sandbox."""
    parsed = _parse(argv)
    if isinstance(parsed, str):
        return f"the codex command line is not one sparring builds: {parsed}"
    modes = parsed.pop("-s", [])
    if len(modes) != 1 or modes[0] not in SANDBOXES:
        return f"the codex command line names {len(modes)} sandbox(es): {modes}"
    bad = [f"{flag} {word}" for flag, words in parsed.items() if flag not in _OWN
           for word in words if _setting_of(flag, word) is None]
    if bad:
        return f"the codex command line passes what no setting of sparring's makes: {bad}"
    if rank(modes[0]) > rank(allowed.mode):
        by = SOURCES[allowed.source] + (f" ({allowed.where})" if allowed.where else "")
        return (f"the turn asks for Codex's sandbox {modes[0]}, but the user allows at most "
                f"{allowed.mode} ({by})")
    return _switched_on(parsed, allowed)


def _switched_on(parsed: dict[str, list[str]], allowed: Allowance) -> str | None:
    """Why the command line leaves on a feature of codex the user's config file does not keep
    on (its `--disable` words missing), or None."""
    for row in config.switches():
        assert row.codex is not None
        given = parsed.get(row.codex.flag, [])
        missing = [f for f in row.codex.features if f not in given]
        if missing and row.name not in allowed.keeps:
            return (f"the codex command line leaves Codex's {row.name} on ({row.codex.flag} "
                    f"{', '.join(missing)} missing), which only the user's config file may "
                    "keep on")
    untrusting = config.setting("untrusted").codex
    assert untrusting is not None
    if "hooks" not in parsed.get("--disable", []) and not any(
            untrusting.value_of(word) is not None for word in parsed.get("-c", [])):
        return "the codex command line leaves hooks on and the project's own trusted"
    return None


def _setting_of(flag: str, word: str) -> str | None:
    """The setting whose codex argument `flag word` is, with a value its check takes."""
    for row in config.TURN_SETTINGS:
        value = row.codex.value_of(word) if row.codex and row.codex.flag == flag else None
        if value is None:
            continue
        try:
            row.check(value)
        except ValueError:
            return None
        return row.name
    return None


def _valued() -> tuple[str, ...]:
    return (*_OWN, *(r.codex.flag for r in config.TURN_SETTINGS if r.codex is not None))


def _parse(argv: Sequence[str]) -> dict[str, list[str]] | str:
    if len(argv) < 3 or argv[1] != "exec" or argv[-1] != "-":
        return "not `codex exec … -`"
    found: dict[str, list[str]] = {}
    valued, rest = _valued(), list(argv[2:-1])
    while rest:
        word = rest.pop(0)
        if word in _BARE:
            continue
        if word not in (*valued, "resume") or not rest or rest[0].startswith("-"):
            return f"unexpected {word!r}"
        found.setdefault(word, []).append(rest.pop(0))
    if len(found.pop("resume", [])) > 1:
        return "resume twice"
    return found


def gate(argv: Sequence[str], root: Path, cwd: Path) -> dict[str, Any] | None:
    """The error a turn ends with instead of starting codex, or None when it may start."""
    try:
        chosen = codex_chosen_by_project(root, cwd) or _witness_within_reach(argv, root)
        if chosen is not None:
            return chosen.to_dict()
        why = refusal(argv, allowance(root, cwd))
    except SparringError as error:
        return error.to_dict()
    if why is None:
        return None
    return {"code": "sandbox_not_allowed", "message": why + "; codex was not started",
            "hint": f"only the user can widen the sandbox: `export {ENV}=MODE` in the shell "
            f"they start Claude Code from, or `sandbox: MODE` in {user_config()}"}
