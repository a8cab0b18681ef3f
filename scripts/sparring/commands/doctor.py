"""`sparring doctor`: is everything sparring needs in place? A verdict with hints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from sparring import __version__, codex, config, process
from sparring.errors import Hint, SparringError
from sparring.installer import claude_code, layout
from sparring.store import witness, workspace

TESTED_CODEX = "0.169.0"
# Written by install.py: a marker in each skill folder it installed, and the runtime's
# state beside the private virtual environment the launcher runs.
MARKER = layout.MARKER
RUNTIME_STATE = layout.RUNTIME_STATE


def doctor(cwd: Path) -> dict[str, Any]:
    checks = [_python(), _processes()]
    checks += _codex()
    checks.append(_project(cwd))
    checks.append(_records(cwd))
    checks.append(_config(cwd))
    places = _skill_places(cwd)
    checks.append(_skills(places))
    checks.append(_permissions(places))
    checks.append(_runtime(places))
    checks.append(_claude_code())
    problems = [c for c in checks if not c["ok"]]
    return {
        "ready": not problems,
        "verdict": "ready" if not problems else
        f"not ready: {len(problems)} problem(s); fix them in the order listed",
        "sparring": __version__,
        "checks": checks,
        "hints": [c["hint"] for c in problems],
        "inbox": _inbox(),
    }


def _inbox() -> str:
    """Where the skills write files for the runner, made ready (self-ignoring) when we can;
    an unwritable folder shows up in the `project` check, not as a failed doctor."""
    try:
        return str(workspace.inbox_dir(Path.cwd(), create=True))
    except SparringError:
        return str(workspace.inbox_dir(Path.cwd()))


def _check(name: str, ok: bool, detail: str, hint: str = "") -> dict[str, Any]:
    # The detail may quote what codex or a file said (data); the hint is sparring's own.
    return {"name": name, "ok": ok, "detail": detail, "hint": Hint("" if ok else hint)}


def _python() -> dict[str, Any]:
    ok = sys.version_info >= (3, 10)
    return _check("python", ok, f"{sys.executable} {sys.version.split()[0]}",
                  "sparring needs Python 3.10 or newer")


def _processes() -> dict[str, Any]:
    try:
        name, how = process.mechanism()
    except SparringError as exc:
        return _check("processes", False, exc.message, exc.hint)
    return _check("processes", True, f"{name} backend: {how}")


def _codex() -> list[dict[str, Any]]:
    try:
        executable = codex.find_executable()
    except SparringError as exc:
        return [_check("codex", False, exc.message, exc.hint)]
    found = [_check("codex", True, executable)]
    version = codex.version(executable)
    found.append(_check(
        "codex_version", version is not None,
        f"codex-cli {version} (sparring is tested with {TESTED_CODEX})" if version else
        "`codex --version` gave no version", "reinstall codex: npm install -g @openai/codex"))
    missing = codex.missing_flags(executable)
    detail = "accepts every flag sparring passes" if not missing else "; ".join(
        f"`codex {sub}` lacks {', '.join(flags)}" for sub, flags in missing.items())
    found.append(_check("codex_flags", not missing, detail,
                        f"upgrade codex (sparring is tested with {TESTED_CODEX}): "
                        "npm install -g @openai/codex"))
    found.append(_login(executable))
    return found


def _login(executable: str) -> dict[str, Any]:
    """Has Codex credentials? Without them every turn fails (or retries) at its first
    request; `codex login status` tells without the network."""
    provider = codex.configured_provider()
    if provider is not None and provider != "openai":
        return _check("codex_login", True, f"model provider {provider!r} from "
                      f"{codex.home() / 'config.toml'}: it uses its own key, not `codex login`")
    if os.environ.get("CODEX_API_KEY"):
        return _check("codex_login", True, "CODEX_API_KEY is set; codex uses it")
    ok, said = codex.login_status(executable)
    return _check("codex_login", ok, f"{said} (`codex login status`, CODEX_HOME "
                  f"{codex.home()})", codex.LOGIN_HINT)


def _project(cwd: Path) -> dict[str, Any]:
    root = workspace.find_root(cwd)
    kind = "git repository" if workspace.is_git_checkout(root) else "folder (not git)"
    writable = os.access(root, os.W_OK)
    return _check("project", writable, f"{root} ({kind}); sessions in {root}/.sparring",
                  f"sparring writes its state to {root}/.sparring: make {root} writable")


def _records(cwd: Path) -> dict[str, Any]:
    """Where sparring keeps its own copy of its records (store/witness.py): it must be out of
    the reach of a sandbox that lets Codex write the project."""
    root = workspace.find_root(cwd)
    place = witness.folder(root)
    return _check("records", not witness.within(root),
                  f"sparring's copy of its records: {place} (outside the project)"
                  if not witness.within(root) else f"{place} is inside the project {root}",
                  f"a sandbox that lets Codex write the project could write {place} too: set "
                  "XDG_STATE_HOME (in your shell's profile) to a folder outside the project")


def _config(cwd: Path) -> dict[str, Any]:
    """sparring.yaml, and the sandbox a turn would run in (what the user allows, narrowed by
    the file): a file asking for more than the user allows fails every start, so says so."""
    from sparring.codex import sandbox

    root = workspace.find_root(cwd)
    where = root / config.CONFIG_FILE
    try:
        settings = config.load(root)
        chosen = sandbox.decide(sandbox.allowance(root, cwd.resolve()), None,
                                settings.get("sandbox"), None, where)
    except SparringError as exc:
        return _check("config", False, exc.message, exc.hint)
    detail = f"{where}: {settings}" if settings else f"no {config.CONFIG_FILE}; defaults apply"
    by = sandbox.SOURCES[chosen.allowed.source] + (
        f" {chosen.allowed.where}" if chosen.allowed.source == "user_config" else "")
    return _check("config", True, f"{detail}; Codex's sandbox: {chosen.mode} (from "
                  f"{sandbox.SOURCES[chosen.source]}; the user allows at most "
                  f"{chosen.allowed.mode}, by {by})")


def _claude_code() -> dict[str, Any]:
    found = claude_code.find()
    proven = " and ".join(claude_code.PROVEN)
    if found.path is None:
        return _check("claude_code", True, "Claude Code not found on PATH (the skills run in "
                      f"it; sparring is proven with {proven})")
    where = f"{found.path} ({found.how})"
    if found.version is None:
        return _check("claude_code", True, f"{where}: no version from `claude --version`")
    old = claude_code.older_than_proven(found.version)
    return _check("claude_code", not old, f"{where}: {found.version}; sparring is proven with "
                  f"{proven}", f"Claude Code {found.version} is older than "
                  f"{claude_code.OLDEST_PROVEN}, the oldest release the skills are proven to "
                  f"run in without permission prompts: upgrade it ({claude_code.UPGRADE})")


# -- the installation: skills and runtime (install.py) ---------------------------------


def _data_dir() -> Path:
    return layout.data_dir()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _installed(skills_dir: Path) -> dict[str, str]:
    """Skill name -> version, for the folders install.py installed (they hold its marker)."""
    if not skills_dir.is_dir():
        return {}
    found = {}
    for folder in sorted(skills_dir.iterdir()):
        marker = _read_json(folder / MARKER)
        if marker.get("tool") == "sparring":
            found[folder.name] = str(marker.get("version", "?"))
    return found


def _launcher() -> Path | None:
    """The skill launcher that started us, when one did (it exports its path)."""
    value = os.environ.get("SPARRING_LAUNCHER", "")
    return Path(value).absolute() if value else None


def _skill_places(cwd: Path) -> dict[str, Path]:
    """Where Claude Code looks for skills: the project's root, and the user's home."""
    root = workspace.find_root(cwd)
    return {"project": root / ".claude" / "skills", "user": Path.home() / ".claude" / "skills"}


def _clone(places: dict[str, Path]) -> Path | None:
    """A sparring clone to run install.py from: the launcher's own (a clone or the plugin),
    else the one the runtime or an installed skill was made from."""
    launcher = _launcher()
    candidates = [launcher.resolve().parents[1]] if launcher and launcher.exists() else []
    sources = [_read_json(_data_dir() / RUNTIME_STATE).get("source")]
    for skills_dir in places.values():
        sources += [_read_json(d / MARKER).get("source") for d in sorted(skills_dir.glob("*"))]
    candidates += [Path(s) for s in sources if isinstance(s, str) and s]
    return next((c for c in candidates if (c / "install.py").is_file()), None)


def _install_command(args: str, places: dict[str, Path]) -> str:
    clone = _clone(places)
    if clone is None:
        return f"from a clone of sparring run `python3 install.py {args}`"
    return f"run `python3 {clone / 'install.py'} {args}`"


def _skills(places: dict[str, Path]) -> dict[str, Any]:
    installed = {label: _installed(where) for label, where in places.items()}
    parts = [f"{label} {places[label]}: " + (", ".join(
        f"{name} {version}" for name, version in found.items()) or "none")
        for label, found in installed.items()]
    launcher = _launcher()
    in_use = launcher.parent if launcher and (launcher.parent / "SKILL.md").is_file() else None
    if in_use is not None and in_use.parent not in places.values():
        parts.append(f"in use from {in_use.parent} (the plugin, or a clone)")
    detail = "; ".join(parts)
    project = places["project"].parents[1]
    install = _install_command(f"--project {project}", places)
    other = sorted({v for found in installed.values() for v in found.values()} - {__version__})
    if other:
        return _check("skills", False, detail,
                      f"the installed skills are version {', '.join(other)} but the runtime "
                      f"is {__version__}: reinstall them, {install} (or --user)")
    ok = any(installed.values()) or in_use is not None
    return _check("skills", ok, detail,
                  f"install the skills: {install} (or --user, for every project)")


def _permissions(places: dict[str, Path]) -> dict[str, Any]:
    """Are the skills allowed in every turn, and no more? allowed-tools covers only the turn
    a skill was invoked in; install.py writes the same rules into Claude Code's settings: the
    launcher with its skill's verbs, and an ask rule for --sandbox."""
    launcher = _launcher()
    in_use = launcher.parent if launcher and (launcher.parent / "SKILL.md").is_file() else None
    installed = [where / name for where in places.values() for name in _installed(where)]
    folders = [in_use] if in_use is not None else installed
    if not folders:
        return _check("permissions", True, "no installed skills to check")
    project = places["project"].parents[1]
    files = [_read_json(f) for f in layout.settings_files(project, Path.home())]
    have = {kind: {r for f in files for r in layout.allowed(f, kind)} for kind in ("allow", "ask")}
    broad = [r for r in layout.broad_rules(folders) if r in have["allow"]]
    if broad:
        return _check("permissions", False, f"{len(broad)} rule(s) in Claude Code's settings "
                      "approve the launcher with any arguments (every verb, `render`, `guard "
                      f"revert`, `--sandbox`): {', '.join(broad)}", "remove them: run install.py "
                      "again (it takes back the rules it wrote), or delete them from "
                      "permissions.allow by hand")
    missing = {"allow": [r for r in layout.rules(folders) if r not in have["allow"]],
               "ask": [r for r in layout.ask_rules(folders) if r not in have["ask"]]}
    if not any(missing.values()):
        return _check("permissions", True, "Claude Code may run the skills' runner verbs and "
                      "write the inbox in every turn, and asks before anything else (rules in "
                      "its settings)")
    detail = (f"{len(missing['allow']) + len(missing['ask'])} rule(s) missing from Claude "
              "Code's settings: after a skill's first turn (an answer to its question, a "
              "deeper dive) Claude Code asks before each runner call, or does not ask before "
              "one naming --sandbox")
    if in_use is not None and in_use not in installed:  # the plugin, or a clone's skills
        return _check("permissions", False, detail, "add them to ~/.claude/settings.json: to "
                      f"permissions.allow {', '.join(missing['allow']) or 'nothing'}; to "
                      f"permissions.ask {', '.join(missing['ask']) or 'nothing'}")
    where = "--user" if in_use is not None and in_use.parent == places["user"] else \
        f"--project {project}"
    return _check("permissions", False, detail, "add them: "
                  + _install_command(where, places) + " (without --no-permissions)")


def _runtime(places: dict[str, Path]) -> dict[str, Any]:
    """The Python the launcher will run, found in the launcher's own order."""
    chosen = os.environ.get("SPARRING_PYTHON", "")
    venv = _data_dir() / "venv"
    fix = _install_command("--runtime-only", places)
    if chosen and os.access(chosen, os.X_OK):
        return _runtime_python(Path(chosen), "SPARRING_PYTHON", [], fix)
    if os.access(venv / "bin" / "python", os.X_OK):
        return _runtime_python(venv / "bin" / "python", "private runtime", ["-I"], fix)
    on_path = shutil.which("sparring")
    if on_path:
        return _check("runtime", True, f"no private runtime in {venv}; the launcher falls back "
                      f"to `sparring` on PATH ({on_path})")
    return _check("runtime", False, f"no runtime: {venv} does not exist",
                  f"create it: {fix}")


def _runtime_python(python: Path, label: str, flags: list[str], fix: str) -> dict[str, Any]:
    version = _imports(python, flags)
    where = f"{label} {python}"
    state = _read_json(_data_dir() / RUNTIME_STATE) if label == "private runtime" else {}
    built = f", built from {state['source']}" if state.get("source") else ""
    if version is None:
        return _check("runtime", False, f"{where} cannot import sparring", f"repair it: {fix}")
    if version != __version__:
        return _check("runtime", False, f"{where} has sparring {version}, this is {__version__}",
                      f"update it: {fix}")
    return _check("runtime", True, f"{where}: sparring {version}{built}")


def _imports(python: Path, flags: list[str]) -> str | None:
    """The sparring version `python` imports; ours when it is the Python running now."""
    if Path(sys.executable).absolute() == python.absolute():
        return __version__
    try:
        done = process.run([str(python), *flags, "-c",
                            "import sparring; print(sparring.__version__)"], timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
