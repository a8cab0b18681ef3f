"""The private runtime: a virtual environment the skills' launcher finds, and the
record of the targets that use it."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from sparring import disk
from sparring.installer import layout, wheel
from sparring.installer.core import (
    RUNTIME_ONLY,
    STATE_FORMAT,
    TOOL,
    Context,
    InstallError,
    Options,
    Source,
)
from sparring.installer.files import PUBLIC, dump_json, present, read_json, remove_path
from sparring.installer.skills import owned_skills
from sparring.process import spawn
from sparring.quoting import shell_word

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
    def command(self) -> Path:
        """The `sparring` command pip installs into the runtime."""
        return self.venv / "bin" / layout.COMMAND

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
            disk.write(self.state_file, dump_json(state), mode=PUBLIC)


@contextlib.contextmanager
def locked(runtime: Runtime, dry_run: bool, create: bool) -> Iterator[None]:
    """One installer at a time per data dir: the state is read-modify-written. Uninstall
    does not create the data dir just to lock it."""
    if dry_run or not (create or runtime.data.is_dir()):
        yield
        return
    runtime.data.mkdir(parents=True, exist_ok=True)
    with disk.locked(runtime.lock):
        yield


def probe(python: Path) -> str | None:
    """The sparring version that `python` imports, or None. `-I`: nothing in the working
    directory or the environment may stand in for the installed package."""
    if not os.access(python, os.X_OK):
        return None
    try:
        done = spawn.run(
            [str(python), "-I", "-c", "import sparring; print(sparring.__version__)"],
            timeout=60)
    except (OSError, spawn.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def python_starts(python: Path) -> bool:
    if not os.access(python, os.X_OK):
        return False
    try:
        done = spawn.run([str(python), "-I", "-c", "pass"], timeout=60)
    except (OSError, spawn.TimeoutExpired):
        return False
    return done.returncode == 0


def create_venv(runtime: Runtime) -> None:
    if runtime.venv.exists():
        shutil.rmtree(runtime.venv)  # ours, and broken: its python does not start
    done = spawn.run([sys.executable, "-m", "venv", str(runtime.venv)], timeout=None,
                     own_session=False)
    if done.returncode != 0:
        shutil.rmtree(runtime.venv, ignore_errors=True)
        raise InstallError(
            f"`{shell_word(sys.executable)} -m venv` failed: "
            f"{(done.stderr or done.stdout).strip()[-600:]}",
            "install Python's venv module (on Debian/Ubuntu: apt install python3-venv), "
            "then run install.py again")


def pip_install(runtime: Runtime, root: Path, version: str, fresh: bool = True) -> None:
    """sparring into the runtime from a wheel made from the clone (installer/wheel.py): pip
    builds nothing, and only downloads the dependencies (once; its cache keeps them). The
    clone is only read (it may even be read-only). An update installs the wheel again even
    though its version is the one installed (the sources changed, not the version)."""
    pip = [str(runtime.python), "-m", "pip", "install", "--disable-pip-version-check",
           "--no-input"]
    with tempfile.TemporaryDirectory(prefix="sparring-wheel-") as tmp:
        # Not editable (the clone may move); an absolute path, or pip reads a package name.
        made = str(wheel.build(root, version, Path(tmp)).resolve())
        steps = [[*pip, made]] + ([] if fresh else [[*pip, "--force-reinstall", "--no-deps",
                                                     made]])
        disk.write(runtime.log, b"", mode=PUBLIC)  # this run's log, which pip appends to
        for argv in steps:
            done = spawn.run(argv, timeout=None, output=runtime.log, own_session=False)
            if done.returncode != 0:
                break
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
        pip_install(runtime, source.root, source.version, fresh)
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


# -- the `sparring` command ----------------------------------------------------------------


def command_link() -> Path:
    return layout.bin_dir() / layout.COMMAND


def is_our_command(link: Path, runtime: Runtime) -> bool:
    """A link install.py made: it points at this runtime's own `sparring` (pip's script)."""
    return link.is_symlink() and os.readlink(link) == str(runtime.command)


def on_path(folder: Path) -> bool:
    return any(Path(p or ".").absolute() == folder
               for p in os.environ.get("PATH", "").split(os.pathsep))


def ensure_command(ctx: Context, runtime: Runtime) -> None:
    """`sparring` for a person to type (`sparring doctor`): a link in ~/.local/bin to the
    runtime's own command. Never over a file that is not ours."""
    link = command_link()
    where = "" if on_path(link.parent) else \
        f"; {link.parent} is not on your PATH: add it, or type {link}"
    if is_our_command(link, runtime):
        ctx.note("unchanged", link, f"the sparring command{where}")
    elif present(link):
        ctx.note("left alone", link, "not made by install.py; the skills do not need it")
    else:
        ctx.do("link", link, f"the sparring command, for you to type{where}",
               lambda: make_link(link, runtime.command))


def make_link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def remove_command(ctx: Context, runtime: Runtime) -> None:
    link = command_link()
    if is_our_command(link, runtime):
        ctx.do("remove", link, "the sparring command, with the runtime", link.unlink)


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
        remove_command(ctx, runtime)
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

