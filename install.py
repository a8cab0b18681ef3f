#!/usr/bin/env python3
"""Install sparring's Claude Code skills, and the private runtime they call.

    python3 install.py --project DIR    the skills into DIR/.claude/skills/
    python3 install.py --user           the skills into ~/.claude/skills/
    python3 install.py --runtime-only   only the runtime (for the Claude Code plugin)

Options: --dry-run (say what would happen, write nothing), --uninstall, --force (replace a
skill folder sparring did not install, and files in its own folders that you edited),
--no-permissions (leave Claude Code's settings alone), --json (a machine-readable summary).

Like pre-commit's installer it marks what it installs (`.sparring-install.json` in each
skill folder: version, source, the hash of every file), never overwrites a folder it does
not own nor a file you edited, changes nothing when run twice, and uninstalls cleanly. The
runtime is a virtual environment in ${XDG_DATA_HOME:-~/.local/share}/sparring/venv, where the
skills' launcher looks; `runtime.json` beside it records the sources it was built from, the
targets that use it (uninstalling the last one removes it) and the permission rules each
target added to Claude Code's settings (uninstall removes exactly those). Standard library
only; Python 3.10+.
"""

# Only modules that exist in old Pythons are imported before the version check, and the
# file avoids syntax newer than 3.6, so an old python3 gets a sentence, not a traceback.
import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

MIN_PYTHON = (3, 10)

if sys.version_info < MIN_PYTHON:
    sys.stderr.write(
        "error: sparring needs Python {}.{} or newer; this is Python {} ({}).\n"
        "  hint: run install.py with a newer interpreter, e.g. `python3.12 install.py ...`\n"
        .format(MIN_PYTHON[0], MIN_PYTHON[1], ".".join(map(str, sys.version_info[:3])),
                sys.executable))
    sys.exit(1)

ROOT = Path(__file__).resolve().parent
# The installation's layout, shared with `sparring doctor`: standard library only.
sys.path.insert(0, str(ROOT / "scripts"))
from sparring import installation as layout  # noqa: E402

TOOL = "sparring"
MARKER = layout.MARKER  # also read by `sparring doctor` and the launcher
MARKER_FORMAT = 1
STATE_FORMAT = 1
RUNTIME_ONLY = "runtime-only"  # the user key of `--runtime-only` (plugin users)
DOCTOR_TIMEOUT_S = 120
# Failing doctor checks that mean the install itself is unusable; the rest (codex, the
# project's config) are warnings the user fixes outside this installer.
INSTALL_CHECKS = ("python", "skills", "runtime")


class InstallError(Exception):
    """The one user-facing error: what went wrong, and what to do next."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class FileSpec(NamedTuple):
    source: Path
    sha256: str
    executable: bool


class Skill(NamedTuple):
    name: str
    files: dict[str, FileSpec]  # path inside the skill folder -> its source


class Source(NamedTuple):
    """This clone: what it installs."""

    root: Path
    version: str
    skills: list[Skill]
    runtime_digest: str  # hash of what the runtime is built from


class Action(NamedTuple):
    verb: str
    path: str
    detail: str = ""


class Options(NamedTuple):
    target: Path | None  # a `.claude/skills` folder, or None for --runtime-only
    project: Path | None  # where the doctor runs from
    uninstall: bool
    dry_run: bool
    force: bool
    as_json: bool
    permissions: bool = True  # write Claude Code permission rules for the skills


class Context:
    """Carries the options and records every action; in a dry run nothing is executed."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.actions: list[Action] = []
        self.warnings: list[str] = []

    @property
    def dry_run(self) -> bool:
        return self.options.dry_run

    def do(self, verb: str, path: Path, detail: str, effect: Callable[[], object]) -> None:
        """Say it, then do it: a slow step (pip) shows what it is waiting for. An action
        joins the summary once it is done."""
        action = Action(f"would {verb}" if self.dry_run else verb, str(path), detail)
        self.show(action)
        if not self.dry_run:
            effect()
        self.actions.append(action)

    def note(self, verb: str, path: Path, detail: str = "") -> None:
        action = Action(verb, str(path), detail)
        self.show(action)
        self.actions.append(action)

    def show(self, action: Action) -> None:
        if not self.options.as_json:
            print(f"{action.verb:<16} {action.path}"
                  + (f"  ({action.detail})" if action.detail else ""), flush=True)

    def warn(self, text: str) -> None:
        self.warnings.append(text)
        if not self.options.as_json:
            print(f"warning: {text}", flush=True)

    def changed(self) -> bool:
        return any(a.verb not in ("unchanged", "left alone") for a in self.actions)


# -- hashing and the source ----------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _walk_files(top: Path) -> Iterator[Path]:
    """Every file under `top`, following links (the repo links references and the launcher
    into each skill), sorted; a broken link is an error, not a silent gap."""
    seen: set[Path] = set()
    stack = [top]
    while stack:
        folder = stack.pop()
        if folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        for entry in sorted(folder.iterdir(), reverse=True):
            if entry.name == "__pycache__" or entry.suffix == ".pyc":
                continue
            if entry.is_dir():
                stack.append(entry)
            elif entry.is_file():
                yield entry
            else:
                raise InstallError(f"broken link in the source: {entry}",
                                   "fix the clone (`git status`, `git checkout -- .`)")


def load_skill(folder: Path) -> Skill:
    files = {}
    for path in _walk_files(folder):
        real = path.resolve()
        files[path.relative_to(folder).as_posix()] = FileSpec(
            real, sha256_of(real), bool(real.stat().st_mode & 0o111))
    return Skill(folder.name, dict(sorted(files.items())))


def read_version(root: Path) -> str:
    text = (root / "scripts" / "sparring" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if not match:
        raise InstallError("no __version__ in scripts/sparring/__init__.py", "fix the clone")
    return match.group(1)


def runtime_inputs(root: Path) -> list[Path]:
    """What `pip install` builds the runtime from. The README is staged too (the build
    reads it) but not hashed: it does not change what the runtime does."""
    files = [root / "pyproject.toml"]
    for top in (root / "scripts" / "sparring", root / "templates"):
        files.extend(_walk_files(top))
    return files


def digest_of(root: Path, files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_of(path)}\n".encode())
    return digest.hexdigest()


def load_source(root: Path) -> Source:
    if not (root / "pyproject.toml").is_file() or not (root / "skills").is_dir():
        raise InstallError(f"{root} is not a sparring clone",
                           "run install.py from the root of a clone of sparring")
    # A folder without SKILL.md is not a skill (yet): Claude Code would ignore it.
    skills = [load_skill(d) for d in sorted((root / "skills").iterdir())
              if (d / "SKILL.md").is_file()]
    return Source(root, read_version(root), skills, digest_of(root, runtime_inputs(root)))


# -- small file operations --------------------------------------------------------------


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Temp file in the same folder, then replace: no torn file, and a link in the way
    is replaced rather than written through."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".sparring-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def dump_json(data: dict[str, Any]) -> bytes:
    # One key per line: the launcher reads "source" from a marker with sed.
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def present(path: Path) -> bool:
    """Something is there, even a link that points nowhere."""
    return path.exists() or path.is_symlink()


def remove_path(path: Path) -> None:
    """Remove a file, a link (never what it points to) or a folder."""
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def remove_empty_dirs(top: Path) -> None:
    """Remove empty folders below `top` and `top` itself, bottom up; never follow links."""
    for folder, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def mode_of(spec: FileSpec) -> int:
    return 0o755 if spec.executable else 0o644


# -- skill folders ------------------------------------------------------------------


def marker_for(source: Source, skill: Skill) -> dict[str, Any]:
    return {
        "format": MARKER_FORMAT,
        "tool": TOOL,
        "skill": skill.name,
        "version": source.version,
        "source": str(source.root),
        "files": {rel: {"sha256": spec.sha256, "mode": f"{mode_of(spec):o}"}
                  for rel, spec in skill.files.items()},
    }


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of a folder sparring installed, else None: a link, a file, a folder
    without a marker or with someone else's is not ours."""
    if folder.is_symlink() or not folder.is_dir():
        return None
    marker = read_json(folder / MARKER)
    if marker is None or marker.get("tool") != TOOL or not isinstance(marker.get("files"), dict):
        return None
    # A marker names the files uninstall deletes: one naming a path outside its folder
    # (a hostile or damaged marker in a cloned project) is not trusted.
    return marker if all(is_plain_relative(rel) for rel in marker["files"]) else None


def is_plain_relative(rel: object) -> bool:
    parts = Path(rel).parts if isinstance(rel, str) else ()
    return bool(parts) and not Path(str(rel)).is_absolute() and ".." not in parts


def owned_skills(target: Path) -> dict[str, dict[str, Any]]:
    if not target.is_dir():
        return {}
    found = {d.name: read_marker(d) for d in sorted(target.iterdir())}
    return {name: marker for name, marker in found.items() if marker is not None}


def file_state(path: Path) -> tuple[str, str] | None:
    """(sha256, octal mode) of a plain file; None for a missing file, a link or a folder."""
    if path.is_symlink() or not path.is_file():
        return None
    return sha256_of(path), f"{path.stat().st_mode & 0o777:o}"


def edited_files(folder: Path, marker: dict[str, Any]) -> list[str]:
    """Files we installed that are there but no longer as we wrote them: the user's edits."""
    edited = []
    for rel, entry in marker["files"].items():
        state = file_state(folder / rel)
        if state is not None and isinstance(entry, dict) and \
                state != (entry.get("sha256"), entry.get("mode")):
            edited.append(rel)
    return sorted(edited)


class Plan(NamedTuple):
    """What updating one installed skill folder takes."""

    write: list[str]  # files to (re)write from the source
    remove: list[str]  # files this version no longer ships
    kept: list[str]  # files the user edited (or added where we would write): left as they are
    marker: dict[str, Any]  # the marker to write: kept files keep their old entry


def plan_update(folder: Path, source: Source, skill: Skill, old: dict[str, Any],
                force: bool) -> Plan:
    edited = set() if force else set(edited_files(folder, old))
    write, kept = [], []
    for rel, spec in skill.files.items():
        state = file_state(folder / rel)
        ours = rel in old["files"] or state is None
        if not force and (rel in edited or not ours):
            kept.append(rel)
        elif state != (spec.sha256, f"{mode_of(spec):o}"):
            write.append(rel)
    gone = sorted(set(old["files"]) - set(skill.files))
    remove = [rel for rel in gone if rel not in edited]
    kept += [rel for rel in gone if rel in edited]
    marker = marker_for(source, skill)
    for rel in kept:
        if rel in old["files"]:
            marker["files"][rel] = old["files"][rel]
        else:  # the user's own file where this version ships one: ours once they let go
            marker["files"].pop(rel, None)
    return Plan(write, remove, sorted(kept), marker)


def check_inside(folder: Path, rel: str) -> None:
    """Refuse to write through a link planted inside a folder we own."""
    for parent in (folder / rel).parents:
        if parent == folder:
            return
        if parent.is_symlink():
            raise InstallError(f"{parent} is a link inside a folder sparring installed",
                               "remove it, or rerun with --force to reinstall the folder")


def write_skill_file(folder: Path, rel: str, spec: FileSpec) -> None:
    check_inside(folder, rel)
    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / rel, spec.source.read_bytes(), mode_of(spec))


def build_skill(target: Path, source: Source, skill: Skill) -> Path:
    """The complete folder built beside its final place, so a skill appears whole."""
    tmp = Path(tempfile.mkdtemp(dir=target, prefix=".sparring-tmp-"))
    try:
        os.chmod(tmp, 0o755)
        for rel, spec in skill.files.items():
            write_skill_file(tmp, rel, spec)
        write_atomic(tmp / MARKER, dump_json(marker_for(source, skill)))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def create_skill(target: Path, source: Source, skill: Skill, replace: bool) -> None:
    built = build_skill(target, source, skill)
    if replace:
        remove_path(target / skill.name)
    os.rename(built, target / skill.name)


def update_skill(folder: Path, skill: Skill, plan: Plan) -> None:
    for rel in plan.write:
        write_skill_file(folder, rel, skill.files[rel])
    for rel in plan.remove:
        check_inside(folder, rel)
        with contextlib.suppress(FileNotFoundError):
            (folder / rel).unlink()
    write_atomic(folder / MARKER, dump_json(plan.marker))


def install_skill(ctx: Context, target: Path, source: Source, skill: Skill) -> None:
    folder = target / skill.name
    old = read_marker(folder)
    if old is None:
        exists = present(folder)
        detail = (f"replaced a folder sparring did not install ({len(skill.files)} files)"
                  if exists else f"{len(skill.files)} files, version {source.version}")
        ctx.do("replace" if exists else "install", folder, detail,
               lambda: create_skill(target, source, skill, replace=exists))
        return
    plan = plan_update(folder, source, skill, old, ctx.options.force)
    kept = f"; kept your edits: {', '.join(plan.kept)} (--force replaces them)" \
        if plan.kept else ""
    if plan.write or plan.remove or read_json(folder / MARKER) != plan.marker:
        detail = f"{len(plan.write)} changed, {len(plan.remove)} removed, " \
                 f"version {source.version}{kept}"
        ctx.do("update", folder, detail, lambda: update_skill(folder, skill, plan))
    else:
        ctx.note("unchanged", folder, f"version {source.version}{kept}")


def uninstall_skill(ctx: Context, folder: Path, marker: dict[str, Any]) -> None:
    edited = set(edited_files(folder, marker))
    ours = [folder / rel for rel in marker["files"] if rel not in edited] + [folder / MARKER]
    theirs = [p for p in folder.rglob("*") if not p.is_dir() and p not in ours]

    def remove() -> None:
        for rel in marker["files"]:
            check_inside(folder, rel)
        for path in ours:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        remove_empty_dirs(folder)

    detail = ""
    if theirs:
        detail = f"kept {len(theirs)} file(s) sparring did not install or you edited"
        if edited:
            detail += f": {', '.join(sorted(edited))}"
    ctx.do("remove", folder, detail, remove)


def check_conflicts(target: Path, source: Source, force: bool) -> None:
    """Before changing anything: a folder of one of our names that we do not own."""
    foreign = [target / s.name for s in source.skills
               if present(target / s.name) and read_marker(target / s.name) is None]
    if foreign and not force:
        names = ", ".join(str(p) for p in foreign)
        raise InstallError(
            f"{names} exists and was not installed by sparring; nothing was changed",
            "move it away (it may be your own skill of the same name), "
            "or rerun with --force to replace it")


# -- the runtime ----------------------------------------------------------------------


def data_dir() -> Path:
    return layout.data_dir()


class Runtime(NamedTuple):
    data: Path

    @property
    def venv(self) -> Path:
        return self.data / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def state_file(self) -> Path:
        return self.data / layout.RUNTIME_STATE

    @property
    def log(self) -> Path:
        return self.data / "pip.log"

    @property
    def lock(self) -> Path:
        return self.data / ".lock"

    def state(self) -> dict[str, Any]:
        if not self.state_file.exists():
            return {"format": STATE_FORMAT, "tool": TOOL, "users": {}}
        state = read_json(self.state_file)
        if state is None or not isinstance(state.get("users"), dict):
            raise InstallError(f"{self.state_file} is unreadable",
                               "move it aside and run install.py again for each target")
        if not isinstance(state.get("format"), int) or state["format"] > STATE_FORMAT:
            raise InstallError(f"{self.state_file} was written by a newer install.py",
                               "run install.py from the clone that made it: "
                               f"{state.get('source')}")
        return state

    def save(self, state: dict[str, Any]) -> None:
        # Written only when it changes, so a second run leaves every mtime alone.
        if read_json(self.state_file) != state:
            write_atomic(self.state_file, dump_json(state))


@contextlib.contextmanager
def locked(runtime: Runtime, dry_run: bool, create: bool) -> Iterator[None]:
    """One installer at a time per data dir: the state is read-modify-written. Uninstall
    does not create the data dir just to lock it."""
    if dry_run or not (create or runtime.data.is_dir()):
        yield
        return
    runtime.data.mkdir(parents=True, exist_ok=True)
    with runtime.lock.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def probe(python: Path) -> str | None:
    """The sparring version that `python` imports, or None. `-I`: nothing in the working
    directory or the environment may stand in for the installed package."""
    if not os.access(python, os.X_OK):
        return None
    try:
        done = subprocess.run(
            [str(python), "-I", "-c", "import sparring; print(sparring.__version__)"],
            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def python_starts(python: Path) -> bool:
    if not os.access(python, os.X_OK):
        return False
    try:
        done = subprocess.run([str(python), "-I", "-c", "pass"], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def create_venv(runtime: Runtime) -> None:
    if runtime.venv.exists():
        shutil.rmtree(runtime.venv)  # ours, and broken: its python does not start
    done = subprocess.run([sys.executable, "-m", "venv", str(runtime.venv)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        shutil.rmtree(runtime.venv, ignore_errors=True)
        raise InstallError(
            f"`{sys.executable} -m venv` failed: {(done.stderr or done.stdout).strip()[-600:]}",
            "install Python's venv module (on Debian/Ubuntu: apt install python3-venv), "
            "then run install.py again")


def stage_sources(root: Path, stage: Path) -> None:
    """A copy of what the package is built from: pip builds in the source tree, so it
    builds here and the clone stays clean (it may even be read-only)."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, stage / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(root / "scripts" / "sparring", stage / "scripts" / "sparring", ignore=ignore)
    shutil.copytree(root / "templates", stage / "templates", ignore=ignore)


def pip_install(runtime: Runtime, root: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="sparring-stage-") as tmp:
        stage = Path(tmp) / "sparring"
        stage.mkdir()
        stage_sources(root, stage)
        # Not editable (the clone may move); an absolute path, or pip reads a package name.
        argv = [str(runtime.python), "-m", "pip", "install", "--disable-pip-version-check",
                "--no-input", str(stage.resolve())]
        with runtime.log.open("w") as log:
            done = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        raise InstallError("pip could not install sparring into the runtime: "
                           + pip_failure(runtime.log.read_text(errors="replace")),
                           f"read {runtime.log}; check your network or pip configuration, "
                           "then run install.py again")


def pip_failure(log: str) -> str:
    """pip's own ERROR lines say why (its last lines often only say "see above")."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    return " / ".join(errors[:3] or lines[-3:])


def build_runtime(runtime: Runtime, source: Source, fresh: bool) -> None:
    try:
        if fresh:
            create_venv(runtime)
        pip_install(runtime, source.root)
    except BaseException:
        if fresh:  # a venv without sparring would only confuse the launcher
            shutil.rmtree(runtime.venv, ignore_errors=True)
        raise
    state = runtime.state()
    state.update(format=STATE_FORMAT, tool=TOOL, version=source.version,
                 source=str(source.root), sources_sha256=source.runtime_digest,
                 python=f"{sys.executable} ({sys.version.split()[0]})")
    runtime.save(state)


def ensure_runtime(ctx: Context, runtime: Runtime, source: Source) -> None:
    fresh = not python_starts(runtime.python)
    state = runtime.state()
    if (not fresh and state.get("sources_sha256") == source.runtime_digest
            and probe(runtime.python) == source.version):
        ctx.note("unchanged", runtime.venv, f"runtime up to date, sparring {source.version}")
        return
    verb = "create runtime" if fresh else "update runtime"
    detail = f"python -m venv, then pip install sparring {source.version}" if fresh else \
        f"sources changed: pip install sparring {source.version}"
    ctx.do(verb, runtime.venv, detail, lambda: build_runtime(runtime, source, fresh))


def live_users(state: dict[str, Any]) -> dict[str, Any]:
    """Users still there: a target whose sparring skills were all deleted by hand (or
    whose project is gone) no longer holds the runtime."""
    return {key: value for key, value in state["users"].items()
            if key == RUNTIME_ONLY or owned_skills(Path(key))}


def user_key(options: Options) -> str:
    return str(options.target) if options.target else RUNTIME_ONLY


def registered(runtime: Runtime, key: str) -> dict[str, Any]:
    """What the runtime's state records for one target (empty when nothing)."""
    if not runtime.state_file.exists():
        return {}
    entry = runtime.state()["users"].get(key)
    return entry if isinstance(entry, dict) else {}


def register(ctx: Context, runtime: Runtime, key: str, created: list[str],
             grant: dict[str, Any] | None) -> None:
    """Record the target: the folders install.py created for it, and the permission rules
    it added to Claude Code's settings (`grant`; None when there are none)."""
    if ctx.dry_run:
        return
    state = runtime.state()
    users = live_users(state)
    entry: dict[str, Any] = {
        "created": sorted(set(users.get(key, {}).get("created", [])) | set(created))}
    if grant:
        entry["permissions"] = grant
    users[key] = entry
    state["users"] = users
    runtime.save(state)


def unregister(ctx: Context, runtime: Runtime, key: str) -> dict[str, Any]:
    """Drop `key`; remove the runtime when nobody uses it any more. Returns what was
    recorded for the target: the folders it created (to remove when empty) and the
    permission rules it added."""
    if not (runtime.venv.exists() or runtime.state_file.exists()):
        return {}
    state = runtime.state()
    users = live_users(state)
    entry = users.pop(key, None) or state["users"].get(key) or {}
    if users:
        if not ctx.dry_run:
            state["users"] = users
            runtime.save(state)
        ctx.note("left alone", runtime.venv,
                 f"runtime still used by {len(users)} other target(s)")
    else:
        ctx.do("remove runtime", runtime.venv, "no target uses it any more",
               lambda: remove_runtime(runtime))
    return entry if isinstance(entry, dict) else {}


def remove_runtime(runtime: Runtime) -> None:
    for path in (runtime.venv, runtime.state_file, runtime.log):
        if present(path):
            remove_path(path)
    with contextlib.suppress(FileNotFoundError):
        runtime.lock.unlink()  # held by us until exit; nothing else of ours is left
    with contextlib.suppress(OSError):
        runtime.data.rmdir()  # only when empty: what is not ours stays


# -- Claude Code's permission rules ------------------------------------------------------


def read_settings(path: Path) -> dict[str, Any] | None:
    """A Claude Code settings object ({} when the file does not exist), or None when it is
    not one we can safely add a rule to: such a file is never rewritten."""
    if not present(path):
        return {}
    data = read_json(path)
    permissions = data.get("permissions", {}) if data is not None else None
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow", []), list):
        return None
    return data


def write_settings(path: Path, data: dict[str, Any]) -> None:
    """Atomically, into the file a link points to (dotfiles often link settings.json),
    keeping its mode and the order of its keys."""
    real = path.resolve()
    real.parent.mkdir(parents=True, exist_ok=True)
    mode = real.stat().st_mode & 0o777 if real.exists() else 0o644
    write_atomic(real, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(), mode)


def with_rules(data: dict[str, Any], add: list[str], drop: list[str]) -> dict[str, Any]:
    new: dict[str, Any] = json.loads(json.dumps(data))
    permissions = new.setdefault("permissions", {})
    allow = [r for r in permissions.get("allow", []) if r not in drop]
    permissions["allow"] = allow + [r for r in add if r not in allow]
    return new


def grant_permissions(ctx: Context, target: Path, source: Source,
                      recorded: dict[str, Any]) -> dict[str, Any] | None:
    """Allow the skills' launchers, their folders and the inbox in every turn, not only
    the turn a skill was invoked in. Returns the record of the rules this target added
    (uninstall removes exactly those), or None."""
    path = layout.settings_file(ctx.options.project, Path.home())
    ours = list(recorded.get("added", [])) if recorded.get("file") == str(path) else []
    if not ctx.options.permissions:
        if ours:
            revoke_permissions(ctx, recorded)
        else:
            ctx.note("left alone", path, "--no-permissions: Claude Code asks before runner "
                     "calls after a skill's first turn")
        return None
    wanted = layout.rules(target / s.name for s in source.skills)
    data = read_settings(path)
    if data is None:
        missing = [r for r in wanted if r not in ours]
        if missing:
            ctx.warn(f"{path} is not a JSON object with a permissions.allow list, so it was "
                     "left alone; Claude Code will ask before each runner call after a "
                     f"skill's first turn. Add to permissions.allow: {', '.join(missing)}")
        return dict(recorded) if ours else None
    have = layout.allowed(data)
    add = [r for r in wanted if r not in have]
    drop = [r for r in ours if r not in wanted and r in have]
    record = {"file": str(path), "added": [r for r in ours if r not in drop] + add,
              "created": recorded.get("created", not present(path)) if ours
              else not present(path)}
    if add or drop:
        detail = ", ".join(filter(None, [
            f"allow {len(add)} rule(s) for the skills' runner, folders and inbox" if add else "",
            f"remove {len(drop)} rule(s) sparring added before" if drop else ""]))
        ctx.do("update settings", path, detail,
               lambda: write_settings(path, with_rules(data, add, drop)))
    else:
        ctx.note("unchanged", path, "permission rules in place")
    return record if record["added"] else None


def revoke_permissions(ctx: Context, recorded: dict[str, Any]) -> None:
    """Remove the rules install.py added for a target, and the settings file when it
    made it and nothing else is left in it."""
    if not recorded.get("added") or not isinstance(recorded.get("file"), str):
        return
    path = Path(recorded["file"])
    data = read_settings(path)
    drop = [r for r in recorded["added"] if r in layout.allowed(data)]
    if data is None or not drop:
        return
    new = with_rules(data, [], drop)
    empty = bool(recorded.get("created")) and new == {"permissions": {"allow": []}}
    ctx.do("remove" if empty else "update settings", path,
           f"remove {len(drop)} permission rule(s) sparring added",
           (lambda: remove_path(path)) if empty else (lambda: write_settings(path, new)))


# -- install, uninstall, doctor -----------------------------------------------------------


def make_target(ctx: Context, target: Path) -> list[str]:
    """Create `.claude/skills` as needed; returns what was created (uninstall removes
    those again when they are empty)."""
    missing = [p for p in (target.parent, target) if not p.exists()]
    for path in missing:
        ctx.do("create", path, "", path.mkdir)
    return [str(p) for p in missing]


def install(ctx: Context, source: Source, runtime: Runtime) -> None:
    target = ctx.options.target
    if target is not None:
        check_conflicts(target, source, ctx.options.force)
    with locked(runtime, ctx.dry_run, create=True):
        ensure_runtime(ctx, runtime, source)
        created: list[str] = []
        grant = None
        if target is not None:
            created = make_target(ctx, target)
            for skill in source.skills:
                install_skill(ctx, target, source, skill)
            retired = set(owned_skills(target)) - {s.name for s in source.skills}
            for name in sorted(retired):  # a skill this version no longer ships
                uninstall_skill(ctx, target / name, owned_skills(target)[name])
            recorded = registered(runtime, user_key(ctx.options)).get("permissions", {})
            grant = grant_permissions(ctx, target, source, recorded)
        register(ctx, runtime, user_key(ctx.options), created, grant)


def uninstall_skills(ctx: Context, target: Path, source: Source) -> None:
    foreign = [target / s.name for s in source.skills
               if present(target / s.name) and read_marker(target / s.name) is None]
    for name, marker in owned_skills(target).items():
        uninstall_skill(ctx, target / name, marker)
    for folder in foreign:
        ctx.note("left alone", folder, "not installed by sparring")


def uninstall(ctx: Context, source: Source, runtime: Runtime) -> None:
    target = ctx.options.target
    with locked(runtime, ctx.dry_run, create=False):
        if target is not None:
            uninstall_skills(ctx, target, source)
        entry = unregister(ctx, runtime, user_key(ctx.options))
        revoke_permissions(ctx, entry.get("permissions") or {})
        for path in sorted(entry.get("created", []), key=len, reverse=True):
            folder = Path(path)
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                ctx.do("remove", folder, "empty, created by install.py", folder.rmdir)


def launcher_for(ctx: Context, source: Source) -> Path | None:
    """The launcher the doctor runs through: an installed skill's, else the clone's (the
    one the plugin's skills use)."""
    if not source.skills:
        return None
    name = source.skills[0].name
    base = ctx.options.target or (source.root / "skills")
    return base / name / "sparring"


def run_doctor(launcher: Path, cwd: Path) -> dict[str, Any]:
    try:
        done = subprocess.run([str(launcher), "doctor"], cwd=cwd, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=DOCTOR_TIMEOUT_S,
                              check=False)
        result = json.loads(done.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        raise InstallError(f"`{launcher} doctor` did not answer: {exc}",
                           f"run `{launcher} doctor` yourself to see why") from exc
    if not isinstance(result, dict):
        raise InstallError(f"`{launcher} doctor` printed no JSON object",
                           f"run `{launcher} doctor` yourself to see why")
    return result


def doctor_failures(report: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(problems that make the install unusable, warnings)."""
    if "checks" not in report:  # an error envelope, e.g. runtime_missing
        error = report.get("error") or {}
        return [{"name": error.get("code", "doctor"), "detail": error.get("message", ""),
                 "hint": error.get("hint", "")}], []
    failing = [c for c in report["checks"] if not c.get("ok")]
    fatal = [c for c in failing if c.get("name") in INSTALL_CHECKS]
    return fatal, [c for c in failing if c not in fatal]


def print_doctor(report: dict[str, Any]) -> None:
    fatal, warnings = doctor_failures(report)
    for check, label in [(c, "problem") for c in fatal] + [(c, "warning") for c in warnings]:
        hint = f" — {check['hint']}" if check.get("hint") else ""
        print(f"doctor {label}: {check['name']}: {check.get('detail', '')}{hint}")


def final_line(ctx: Context, version: str, report: dict[str, Any] | None) -> str:
    """The one line that says how it ended (an error goes to stderr instead)."""
    options = ctx.options
    where = str(options.target) if options.target else \
        f"the runtime only ({Runtime(data_dir()).venv})"
    if options.dry_run:
        return "dry run: nothing was changed"
    if options.uninstall:
        return f"sparring removed from {where}" if ctx.changed() else \
            f"nothing changed: sparring is not installed in {where}"
    fatal, warnings = doctor_failures(report) if report else ([], [])
    head = f"sparring {version} installed in {where}" if ctx.changed() else \
        f"nothing changed: sparring {version} is already installed in {where}"
    if fatal:
        return f"{head}, but it cannot run yet: fix the {len(fatal)} problem(s) above"
    count = len(warnings) + len(ctx.warnings)
    return f"{head}; fix the {count} warning(s) above before a debate" if count else \
        f"{head}; doctor: ready"


# -- command line ---------------------------------------------------------------------------


def parse_options(argv: list[str]) -> Options:
    parser = argparse.ArgumentParser(
        prog="install.py", description="Install sparring's Claude Code skills and runtime.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--project", metavar="DIR", type=Path,
                       help="install into DIR/.claude/skills")
    where.add_argument("--user", action="store_true", help="install into ~/.claude/skills")
    where.add_argument("--runtime-only", action="store_true",
                       help="only create or update the runtime (for the Claude Code plugin)")
    parser.add_argument("--uninstall", action="store_true",
                        help="remove what install.py installed there")
    parser.add_argument("--dry-run", action="store_true", help="say what would happen")
    parser.add_argument("--force", action="store_true",
                        help="replace a skill folder of the same name sparring did not "
                        "install, and files of its own folders that you edited")
    parser.add_argument("--no-permissions", action="store_true",
                        help="do not add permission rules for the skills to Claude Code's "
                        "settings (and remove those an earlier install added): Claude Code "
                        "then asks before each runner call after a skill's first turn")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    args = parser.parse_args(argv)
    project = args.project.resolve() if args.project else None
    if project is not None and not project.is_dir():
        parser.error(f"--project {args.project}: not a directory")
    target = (project / ".claude" / "skills" if project else
              Path.home() / ".claude" / "skills" if args.user else None)
    return Options(target, project, args.uninstall, args.dry_run, args.force, args.json,
                   permissions=not args.no_permissions)


def run(ctx: Context, source: Source) -> dict[str, Any] | None:
    runtime = Runtime(data_dir())
    if ctx.options.uninstall:
        uninstall(ctx, source, runtime)
        return None
    install(ctx, source, runtime)
    launcher = launcher_for(ctx, source)
    if ctx.dry_run or launcher is None:
        return None
    report = run_doctor(launcher, ctx.options.project or Path.cwd())
    if not ctx.options.as_json:
        print_doctor(report)
    return report


def summary(ctx: Context, report: dict[str, Any] | None, error: InstallError | None,
            ok: bool) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "ok": ok,
        "changed": ctx.changed(),
        "dry_run": ctx.dry_run,
        "target": str(ctx.options.target) if ctx.options.target else None,
        "runtime": str(Runtime(data_dir()).venv),
        "actions": [a._asdict() for a in ctx.actions],
        "doctor": report,
        "warnings": ctx.warnings,
        "error": {"message": error.message, "hint": error.hint} if error else None,
    }


def main(argv: list[str] | None = None) -> int:
    ctx = Context(parse_options(sys.argv[1:] if argv is None else argv))
    report, error, version = None, None, "?"
    try:
        source = load_source(ROOT)
        version = source.version
        report = run(ctx, source)
    except InstallError as exc:
        error = exc
    ok = error is None and (report is None or not doctor_failures(report)[0])
    if ctx.options.as_json:
        print(json.dumps(summary(ctx, report, error, ok), indent=2))
    elif error is not None:
        print(f"error: {error.message}\n  hint: {error.hint}", file=sys.stderr)
    else:
        print(final_line(ctx, version, report))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
