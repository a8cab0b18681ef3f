"""Where a project's sparring state lives: `<root>/.sparring/`, self-ignoring.

The root is found by store/locate.py: the git work tree that holds the working directory,
else the working directory itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sparring import disk, paths
from sparring.disk import PRIVATE_DIR
from sparring.errors import SparringError
from sparring.store import locate
from sparring.store.locate import STATE_DIR as STATE_DIR


def find_root(start: str | Path) -> Path:
    return Path(locate.project_root(str(start)))


def is_git_checkout(root: Path) -> bool:
    return locate.holds_repository(str(root))


def state_dir(root: Path, create: bool = False) -> Path:
    """`<root>/.sparring`, made on demand with a `.gitignore` of `*` so git never sees it."""
    path = root / STATE_DIR
    if create:
        _make_self_ignoring(path)
    return path


def sessions_dir(root: Path, create: bool = False) -> Path:
    path = state_dir(root, create) / "sessions"
    if create:
        path.mkdir(mode=PRIVATE_DIR, exist_ok=True)
        _require_real_folder(path)
    return path


def inbox_dir(cwd: Path, create: bool = False) -> Path:
    """`<cwd>/.sparring/inbox`: where Claude's Write tool drops files for the runner.

    It sits in the directory Claude Code runs in (the Bash tool's working directory), not
    necessarily the root: Claude Code lets a skill write only below its working directory.
    """
    path = state_dir(cwd.resolve(), create) / "inbox"
    if create:
        try:
            path.mkdir(mode=PRIVATE_DIR, exist_ok=True)
        except OSError as exc:
            raise SparringError("not_writable", f"cannot create {path}: {exc.strerror}",
                                "run sparring from a directory you can write to") from exc
        _require_real_folder(path)
    return path


def session_inbox(data: Mapping[str, Any]) -> str:
    """The inbox of the directory a session was begun in (for a session older than inboxes,
    the current directory's). In a command, quote each path in it whole: quoting.shell_word."""
    if data.get("inbox"):
        return str(data["inbox"])
    return str(inbox_dir(Path.cwd()))


def _require_real_folder(path: Path) -> None:
    """sparring's own folders are folders of the project: a `.sparring` (or its sessions or
    inbox) that is a symbolic link, committed in a cloned repository or planted during a turn,
    would put the runner's state, and whatever it writes there, somewhere else."""
    if path.is_symlink():
        raise SparringError(
            "path_is_link", f"{path} is a symbolic link; sparring keeps its state only in a "
            "real folder of the project", f"remove the link {path} (sparring makes the folder "
            "itself) and run the command again", path=str(path))


def _make_self_ignoring(path: Path) -> None:
    _require_real_folder(path)
    try:
        path.mkdir(mode=PRIVATE_DIR, exist_ok=True)
        _make_private(path)
        ignore = path / ".gitignore"
        if not ignore.exists():
            # Made new: twenty concurrent `init`s write it once.
            try:
                disk.create(ignore, b"# written by sparring: keep session state out of git\n*\n")
            except FileExistsError:
                return
    except OSError as exc:
        raise SparringError(
            "not_writable",
            f"cannot create {path}: {exc.strerror}",
            "run sparring from a directory you can write to, or pass --cwd",
        ) from exc


def _make_private(path: Path) -> None:
    """A `.sparring/` an older sparring made 0755 becomes the user's alone."""
    st = path.lstat()
    if stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) & 0o077 and st.st_uid == os.getuid():
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077)


def branch(root: Path) -> str:
    """The checked-out branch for file names: `feature-x` for `feature/x`, `detached-<sha>`
    for a detached HEAD, `no-git` outside a repository. Read from .git/HEAD, not git."""
    head = _git_dir(root) / "HEAD" if is_git_checkout(root) else None
    # No link, FIFO or device: a HEAD (or a `.git` file naming where it is) that is not a
    # small plain file reads as no branch, never as a wait.
    text = (paths.read_own(head, 4096) or b"").decode("utf-8", "replace").strip() if head \
        else ""
    if not text:
        return "no-git"
    if text.startswith("ref: refs/heads/"):
        return text[len("ref: refs/heads/"):].replace("/", "-")
    return f"detached-{text[:7]}"


def _git_dir(root: Path) -> Path:
    dot_git = root / ".git"
    if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
        text = (paths.read_own(dot_git, 4096) or b"").decode("utf-8", "replace")
        return (root / text.partition("gitdir:")[2].strip()).resolve()
    return dot_git
