"""Where a project's sessions are: its root, a session's folder named by id or path, and
the name and format version of the session file in it.

Every verb finds the session with these (workspace.find_root, session.resolve).

The root is the work tree of the git repository that holds the working directory, found as
git finds its own: the nearest folder, from the working directory up, whose `.git` is a file
(a worktree's or a submodule's `gitdir:` line; git stops at any such file) or a folder git
takes for a repository (a HEAD, and `objects/` and `refs/` in it or in the folder its
`commondir` names). Outside any repository it is the working directory itself: a
`.sparring/` above it (another project's, or one left in /tmp or the home folder) never
makes a root. No git process is needed (scripts/launcher.sh spells the same rule).
"""

from __future__ import annotations

import hashlib
import os

from sparring import paths

STATE_DIR = ".sparring"
SESSION_FILE = "session.json"
SESSION_FORMAT = 1  # the version of session.json this sparring writes and reads
PROMPT_FILE = "prompt.txt"  # the prompt a turn's Codex was sent, in its folder turns/N/
EVENTS_FILE = "events.jsonl"  # what it printed: its events, in its outputs folder (below)
STDERR_FILE = "stderr.log"  # and its stderr
BASELINE_FILE = "guard-baseline.json"  # the tree before it, in the turn's own folder
CHANGES_FILE = "guard-changes.json"  # and what its guard check saw changed, beside it


def project_root(cwd: str) -> str:
    """The project root of `cwd` (a real path): the git work tree that holds it, else `cwd`."""
    start = candidate = os.path.realpath(cwd)
    while not holds_repository(candidate):
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent
    return candidate


def holds_repository(folder: str) -> bool:
    """Whether git takes `folder` for a work tree's top: its `.git` is a file (git reads
    its `gitdir:` line, and fails there rather than look further up when the line is bad)
    or a git folder."""
    dot_git = os.path.join(folder, ".git")
    return os.path.isfile(dot_git) or _is_git_folder(dot_git)


def _is_git_folder(path: str) -> bool:
    """git's own test (setup.c, is_git_directory): a HEAD, and `objects/` and `refs/` in
    the folder its `commondir` names (a worktree's), else in it. `commondir` is read as
    sparring reads a file a planted folder may hold (paths.read_own: no link followed, no
    wait on a FIFO)."""
    if not os.path.isfile(os.path.join(path, "HEAD")):
        return False
    named = paths.read_own(os.path.join(path, "commondir"), _COMMONDIR_LIMIT) or b""
    common = os.path.join(path, named.decode("utf-8", "replace").strip() or os.curdir)
    return all(os.path.isdir(os.path.join(common, name)) for name in ("objects", "refs"))


_COMMONDIR_LIMIT = 4096  # a path, on one line


def state_home() -> str:
    """sparring's folder in the user's state (XDG_STATE_HOME, as the user's shell sets it):
    out of the project, so out of the reach of a sandbox that lets Codex write the project.
    The witness copies of sparring's records and the runners' own records live there."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "sparring")


def run_record(session_dir: str) -> str:
    """Where the runner of a session keeps its own record (store/runs.py)."""
    key = hashlib.sha256(session_dir.encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(state_home(), "runs", f"{key[:32]}.json")


def outputs_folder(session_dir: str, token: str | None) -> str:
    """Where each turn's codex of the session writes what it prints (`<n>/events.jsonl`,
    `<n>/stderr.log`): in sparring's state folder, out of the project. Out of reach of a
    sandbox that lets Codex write the project, so no turn's output can be swapped or
    rewritten; and out of Claude's reach (Claude Code asks before Claude reads outside the
    project), so nothing of Codex's answer lies where Claude reads before the runner shows
    it. Named by the session's id and the random `token` its session.json holds (`outputs`,
    checked by store/shapes.py: sixteen hex digits), so the folder follows the project when
    it moves. A session made before (no token) keeps them where they were then: in its own
    folder, `turns/<n>/`."""
    if token is None:
        return os.path.join(session_dir, "turns")
    return os.path.join(state_home(), "codex", f"{os.path.basename(session_dir)}-{token}")


def within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies below it (as spelled: pass real paths to compare
    where things are)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def in_project(folder: str, root: str) -> bool:
    """Whether the real path `folder` is a session folder of the project at `root`
    (`.sparring/sessions/<id>` at its root, never below): no other session.json is acted
    on. A session planted in a subfolder would call the subfolder its root, and git would
    run there with whatever git folder a `.git` file in it names."""
    return os.path.dirname(folder) == _sessions_folder(root)


def _sessions_folder(root: str) -> str:
    return os.path.join(root, STATE_DIR, "sessions")


def session_folder(ref: str, cwd: str) -> str | None:
    """The real path of the session `ref` names, by its id (in the project of `cwd`) or by
    its folder (`~` expanded; relative to `cwd`); None when there is no such session."""
    path = os.path.expanduser(ref) or os.curdir  # as pathlib reads an empty path
    if os.sep in ref or os.path.isdir(path):
        candidate = os.path.join(cwd, path)  # an absolute `path` stays as it is
    else:
        candidate = os.path.join(_sessions_folder(project_root(cwd)), ref)
    if not os.path.isfile(os.path.join(candidate, SESSION_FILE)):
        return None
    return os.path.realpath(candidate)
