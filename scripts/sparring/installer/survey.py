"""What is installed, as `sparring doctor` sees it: the skills and where Claude Code finds them
(once, or twice), whether they are older than the clone they came from, the permission rules
that let a debate go on without prompts, and the runtime the launcher runs.

Each function returns one check, `{name, ok, detail, hint}`: what it saw, and what to do.
Only `sparring doctor` imports this module (install.py runs it through the launcher).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from sparring import __version__
from sparring.installer import layout
from sparring.installer.core import InstallError
from sparring.installer.plugin import sealed
from sparring.installer.skills import plan_update, read_marker
from sparring.installer.source import load_source
from sparring.process import spawn
from sparring.quoting import shell_word

Check = dict[str, Any]
USER, PROJECT = "user", "project"
HOOKS = Path("hooks") / "hooks.json"  # the plugin's PreToolUse hook (installer/hook.py)
PLUGIN = "sparring"  # .claude-plugin/plugin.json's name: Claude Code's key is `sparring@<market>`


def check(name: str, ok: bool, detail: str, hint: str = "") -> Check:
    return {"name": name, "ok": ok, "detail": detail, "hint": "" if ok else hint}


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def installed(skills_dir: Path) -> dict[str, dict[str, Any]]:
    """Skill name -> marker, for the folders install.py installed (they hold its marker)."""
    if not skills_dir.is_dir():
        return {}
    found = {}
    for folder in sorted(skills_dir.iterdir()):
        marker = read_json(folder / layout.MARKER)
        if marker.get("tool") == "sparring":
            found[folder.name] = marker
    return found


def launcher() -> Path | None:
    """The skill launcher that started us, when one did (it exports its path)."""
    value = os.environ.get("SPARRING_LAUNCHER", "")
    return Path(value).absolute() if value else None


def in_use() -> Path | None:
    """The skill folder whose launcher started us: an installed one, the plugin's, a clone's."""
    found = launcher()
    return found.parent if found and (found.parent / "SKILL.md").is_file() else None


def plugin_root() -> Path | None:
    """The plugin (or clone) whose own skills are in use: not an installed copy."""
    folder = in_use()
    if folder is None or (folder / layout.MARKER).exists():
        return None
    root = folder.parent.parent
    return root if (root / ".claude-plugin" / "plugin.json").is_file() else None


def plugin_data() -> Path | None:
    """The folder Claude Code keeps for the plugin's data, when the plugin's own launcher
    started us in a session of Claude Code running it (its SessionStart hook names the
    folder: scripts/session-start.sh)."""
    value = os.environ.get(layout.PLUGIN_DATA, "")
    return Path(value) if value and plugin_root() is not None else None


def plugin_runtime() -> Path | None:
    """The plugin's own runtime's folder, when the launcher runs it: sealed for its root."""
    data, root = plugin_data(), plugin_root()
    return data if data is not None and root is not None and sealed(data, str(root)) else None


def plugin_installs() -> list[str]:
    """The sparring plugin as Claude Code recorded it installed (`/plugin install`), each as
    `name@marketplace (its folder)`."""
    record = read_json(Path.home() / ".claude" / "plugins" / "installed_plugins.json")
    plugins = record.get("plugins")
    found = []
    for key, entries in (plugins.items() if isinstance(plugins, dict) else []):
        if isinstance(key, str) and key.split("@")[0] == PLUGIN and isinstance(entries, list):
            found += [f"{key} ({e.get('installPath', '?')})" for e in entries
                      if isinstance(e, dict)]
    return found


def runtime_home() -> Path:
    """The data folder of the runtime the launcher runs: the plugin's own, else install.py's."""
    return plugin_runtime() or layout.data_dir()


def runtime_fix(where: dict[str, Path]) -> str:
    """What makes the runtime again: for the plugin, its next runner call."""
    data = plugin_data()
    if data is not None:
        return (f"the plugin's next runner call makes its runtime anew in {data} (remove "
                f"{data / layout.PLUGIN_READY} first if it is there); no install.py step")
    return install_command("--runtime-only", where)


def places(root: Path) -> dict[str, Path]:
    """Where Claude Code looks for skills: the project's root, and the user's home."""
    return {PROJECT: root / ".claude" / "skills", USER: Path.home() / ".claude" / "skills"}


def clone(where: dict[str, Path]) -> Path | None:
    """A sparring clone to run install.py from: the launcher's own (a clone or the plugin:
    an installed copy, which has a marker, is neither, and the folder above it is the
    project's, whose install.py is anyone's), else the one the runtime or an installed skill
    was made from."""
    found = launcher()
    own = found is not None and found.exists() and not (found.parent / layout.MARKER).exists()
    candidates = [found.resolve().parents[1]] if found is not None and own else []
    sources = [read_json(runtime_home() / layout.RUNTIME_STATE).get("source")]
    for label, skills_dir in where.items():
        sources += [m.get("source") for m in installed(skills_dir).values()
                    if named(label, m.get("source"), where)]
    candidates += [Path(s) for s in sources if isinstance(s, str) and s]
    return next((c for c in candidates if (c / "install.py").is_file()), None)


def named(label: str, source: Any, where: dict[str, Path]) -> bool:
    """Whether a marker's `source` may be named in a command to run: a marker in the
    project is a file a clone can hold, and a clone it names inside the project is the
    project's own program (its install.py is anyone's), however well quoted."""
    if not isinstance(source, str) or not os.path.isabs(source):
        return False
    if label != PROJECT:
        return True
    return not Path(source).resolve().is_relative_to(where[PROJECT].parents[1].resolve())


def install_py(clone: str | Path) -> str:
    """`python3 <clone>/install.py`, its path one word of the command."""
    return f"python3 {shell_word(str(Path(clone) / 'install.py'))}"


def install_command(args: str, where: dict[str, Path]) -> str:
    found = clone(where)
    if found is None:
        return f"from a clone of sparring run `python3 install.py {args}`"
    return f"run `{install_py(found)} {args}`"


def option_for(label: str, where: dict[str, Path]) -> str:
    return "--user" if label == USER else \
        f"--project {shell_word(str(where[PROJECT].parents[1]))}"


# -- the skills ---------------------------------------------------------------------------


def skills(where: dict[str, Path]) -> Check:
    found = {label: installed(path) for label, path in where.items()}
    parts = [f"{label} {where[label]}: " + (", ".join(
        f"{name} {marker.get('version', '?')}" for name, marker in markers.items()) or "none")
        for label, markers in found.items()]
    folder, plugin, installs = in_use(), plugin_data() and plugin_root(), plugin_installs()
    if plugin is not None:
        parts.append(f"in use from the plugin, {plugin} (Claude Code names them "
                     "sparring:<skill>): the skills come from the plugin, nothing to install")
    elif folder is not None and folder.parent not in where.values():
        parts.append(f"in use from {folder.parent} (the plugin, or a clone)")
    if installs and plugin is None:
        parts.append(f"the Claude Code plugin: {', '.join(installs)}")
    install = install_command(option_for(PROJECT, where), where)
    other = sorted({str(m.get("version", "?")) for markers in found.values()
                    for m in markers.values()} - {__version__})
    if other:
        return check("skills", False, "; ".join(parts),
                     f"the installed skills are version {', '.join(other)} but the runtime "
                     f"is {__version__}: reinstall them, {install} (or --user)")
    return check("skills", any(found.values()) or folder is not None or bool(installs),
                 "; ".join(parts),
                 f"install the skills: {install} (or --user, for every project)")


def duplicates(where: dict[str, Path]) -> Check:
    """The same skill for the user and in the project: Claude Code runs the user's copy (the
    project's own, its rules and its version, are passed over; 2.1.197 lists both)."""
    user, project = installed(where[USER]), installed(where[PROJECT])
    plugin = plugin_data() and plugin_root()
    if plugin is not None and (user or project):
        return _beside_the_plugin(plugin, user, project, where)
    both = sorted(set(user) & set(project))
    if not both or where[USER] == where[PROJECT]:
        places = [str(where[label]) for label, found in ((USER, user), (PROJECT, project))
                  if found]
        return check("duplicates", True, f"installed once, in {' and '.join(places)}"
                     if places else "no skills installed for the user or in this project")
    return check("duplicates", False, f"{', '.join(both)} installed twice: for your user "
                 f"({where[USER]}) and in this project ({where[PROJECT]}); Claude Code runs "
                 "the user's copy and passes over the project's (2.1.197 lists each twice)",
                 "keep one: " + install_command(f"{option_for(USER, where)} --uninstall",
                                                where) + " or " + install_command(
                     f"{option_for(PROJECT, where)} --uninstall", where))


def _beside_the_plugin(plugin: Path, user: dict[str, Any], project: dict[str, Any],
                       where: dict[str, Path]) -> Check:
    """The plugin's skills, and installed copies too: Claude Code lists both."""
    copies = [str(where[label]) for label, found in ((USER, user), (PROJECT, project)) if found]
    names = ", ".join(sorted(set(user) | set(project)))
    uninstall = install_command(f"{option_for(USER if user else PROJECT, where)} --uninstall",
                                where)
    return check("duplicates", False, f"the plugin ({plugin}) brings the skills, and {names} "
                 f"are installed as well (in {' and '.join(copies)}): Claude Code lists both, "
                 "/sparring:<skill> the plugin's and /<skill> the installed copy",
                 f"keep one: {uninstall}, or remove the plugin (`/plugin uninstall "
                 "sparring@sparring`)")


def updates(where: dict[str, Path]) -> Check:
    """Is what is installed older than the clone it came from? (install.py --check says the
    same for one target; both ask the installer's own plan.)"""
    older, seen = [], []
    for label, path in where.items():
        markers = installed(path)
        sources = {m.get("source") for m in markers.values()} - {None}
        for source in sorted(str(s) for s in sources):
            try:
                stale = _stale(path, markers, load_source(Path(source)))
            except (InstallError, OSError):
                continue  # the clone moved or broke: nothing to compare with
            seen.append(source)
            if stale:
                older.append((label, source, stale))
    runtime = _runtime_stale()
    if runtime:
        older.append(("runtime", runtime, ["the runtime"]))
    if not older:
        if not seen and runtime is None and not _runtime_source():
            return check("updates", True, "nothing installed from a clone to compare with it")
        return check("updates", True, "what is installed matches the clone it came from"
                     + (f" ({', '.join(seen)})" if seen else ""))
    detail = "; ".join(f"{', '.join(stale)} older than the clone {source}" if label != "runtime"
                       else f"the runtime is older than the clone {source}"
                       for label, source, stale in older)
    if plugin_runtime() is not None and [label for label, _, _ in older] == ["runtime"]:
        return check("updates", False, detail, f"update: {runtime_fix(where)}")
    fixes = [_update(label, source, where) for label, source, _ in older]
    return check("updates", False, detail, "update: run " + ", ".join(dict.fromkeys(fixes))
                 + " (your edits are kept)")


def _update(label: str, source: str, where: dict[str, Path]) -> str:
    """The command that updates what `source` installed there (named: see `named`)."""
    option = option_for(label, where) if label != "runtime" else "--runtime-only"
    if named(label, source, where):
        return f"`{install_py(source)} {option}`"
    return f"`python3 install.py {option}` from a clone of sparring"


def _stale(skills_dir: Path, markers: dict[str, dict[str, Any]], source: Any) -> list[str]:
    stale = [s.name for s in source.skills if s.name not in markers]
    for skill in source.skills:
        old = read_marker(skills_dir / skill.name) if skill.name in markers else None
        if old is None:
            continue
        plan = plan_update(skills_dir / skill.name, source, skill, old, force=False)
        if plan.write or plan.remove:
            stale.append(skill.name)
    return sorted(stale)


def _runtime_source() -> str | None:
    source = read_json(runtime_home() / layout.RUNTIME_STATE).get("source")
    return source if isinstance(source, str) else None


def _runtime_stale() -> str | None:
    """The clone the runtime was built from, when its sources have changed since; else None."""
    state = read_json(runtime_home() / layout.RUNTIME_STATE)
    source = state.get("source")
    if not isinstance(source, str) or "sources_sha256" not in state:
        return None
    try:
        digest = load_source(Path(source)).runtime_digest
    except (InstallError, OSError):
        return None
    return source if digest != state["sources_sha256"] else None


# -- the permission rules -----------------------------------------------------------------


def permissions(where: dict[str, Path]) -> Check:
    """Are the skills allowed in every turn, and no more? allowed-tools covers only the turn
    a skill was invoked in; install.py writes the same rules into Claude Code's settings,
    and the plugin's hook approves the same."""
    folder = in_use()
    found = [path / name for path in where.values() for name in installed(path)]
    folders = [folder] if folder is not None else found
    if not folders:
        return check("permissions", True, "no installed skills to check")
    project = where[PROJECT].parents[1]
    files = [read_json(f) for f in layout.settings_files(project, Path.home())]
    have = {kind: {r for f in files for r in layout.allowed(f, kind)} for kind in ("allow", "ask")}
    broad = [r for r in layout.broad_rules(folders) if r in have["allow"]]
    if broad:
        return check("permissions", False, f"{len(broad)} rule(s) in Claude Code's settings "
                     "approve the launcher with any arguments (every verb, `render`, `guard "
                     f"revert`, `--sandbox`): {', '.join(broad)}", "remove them: run install.py "
                     "again (it takes back the rules it wrote), or delete them from "
                     "permissions.allow by hand")
    plugin = plugin_root()
    if plugin is not None and (plugin / HOOKS).is_file():
        return check("permissions", True, f"the plugin's PreToolUse hook ({plugin / HOOKS}) "
                     "approves the skills' runner verbs, their folders and the inbox in every "
                     "turn, and nothing else; Claude Code asks before anything else")
    missing = {"allow": [r for r in layout.rules(folders) if r not in have["allow"]],
               "ask": [r for r in layout.ask_rules(folders) if r not in have["ask"]]}
    if not any(missing.values()):
        return check("permissions", True, "Claude Code may run the skills' runner verbs and "
                     "write the inbox in every turn, and asks before anything else (rules in "
                     "its settings)")
    detail = (f"{len(missing['allow']) + len(missing['ask'])} rule(s) missing from Claude "
              "Code's settings: a debate runs, but after a skill's first turn (an answer to "
              "its question, a deeper dive) Claude Code asks before each runner call, or "
              "does not ask before one naming --sandbox")
    if folder is not None and folder not in found:  # a clone's skills, or a plugin without hook
        return check("permissions", False, detail, "add them to ~/.claude/settings.json: to "
                     f"permissions.allow {', '.join(missing['allow']) or 'nothing'}; to "
                     f"permissions.ask {', '.join(missing['ask']) or 'nothing'}")
    label = USER if folder is not None and folder.parent == where[USER] else PROJECT
    return check("permissions", False, detail, "add them: " + install_command(
        option_for(label, where), where) + " (without --no-permissions)")


# -- the runtime --------------------------------------------------------------------------


def runtime(where: dict[str, Path]) -> Check:
    """The Python the launcher will run, found in the launcher's own order."""
    chosen = os.environ.get("SPARRING_PYTHON", "")
    venv = layout.data_dir() / "venv"
    fix = runtime_fix(where)
    plugin = plugin_runtime()
    if chosen and os.access(chosen, os.X_OK):
        return _runtime_python(Path(chosen), "SPARRING_PYTHON", [], fix)
    if plugin is not None:
        return _runtime_python(plugin / "venv" / "bin" / "python",
                               "the plugin's own runtime", ["-I"], fix, plugin)
    if os.access(venv / "bin" / "python", os.X_OK):
        return _runtime_python(venv / "bin" / "python", "private runtime", ["-I"], fix,
                               layout.data_dir())
    on_path = shutil.which("sparring")
    if on_path:
        return check("runtime", True, f"no private runtime in {venv}; the launcher falls back "
                     f"to `sparring` on PATH ({on_path})")
    return check("runtime", False, f"no runtime: {venv} does not exist", f"create it: {fix}")


def _runtime_python(python: Path, label: str, flags: list[str], fix: str,
                    data: Path | None = None) -> Check:
    version = _imports(python, flags)
    where = f"{label} {python}"
    state = read_json(data / layout.RUNTIME_STATE) if data is not None else {}
    built = f", built from {state['source']}" if state.get("source") else ""
    if version is None:
        return check("runtime", False, f"{where} cannot import sparring", f"repair it: {fix}")
    if version != __version__:
        return check("runtime", False, f"{where} has sparring {version}, this is {__version__}",
                     f"update it: {fix}")
    return check("runtime", True, f"{where}: sparring {version}{built}")


def _imports(python: Path, flags: list[str]) -> str | None:
    """The sparring version `python` imports; ours when it is the Python running now."""
    if Path(sys.executable).absolute() == python.absolute():
        return __version__
    try:
        done = spawn.run([str(python), *flags, "-c",
                            "import sparring; print(sparring.__version__)"], timeout=60)
    except (OSError, spawn.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
