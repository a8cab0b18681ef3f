"""The guard's one way to git: every git command it runs, with nothing the tree can switch on.

A repository's own config can make a plain `git status` run programs: `core.fsmonitor`
(a hook, or a daemon), filter drivers (`filter.<name>.clean`, `.smudge`, `.process`, picked
by .gitattributes), hooks, a transport (`core.sshCommand`, a remote helper) when a partial
clone fetches a missing object. Codex with a widened sandbox can write `.git/config`, so the
guard must never run what it finds there. Every command here runs with `core.fsmonitor`
off, ctime and the full stat data compared (whatever `core.trustctime` and `core.checkStat`
say), case told apart where the filesystem does (whatever `core.ignoreCase` says), hooks
pointed nowhere, every transport refused (`protocol.allow=never`), replace refs
ignored, optional locks off (the index is never rewritten under a concurrent git command of
the user), no terminal prompt, and every filter driver that was not configured when the
snapshot was taken (the user's own, such as git-lfs) switched off.

The git folder is pinned: every command names the one found at snapshot (`--git-dir`,
`--work-tree`), so a `.git` file repointed during a turn (a worktree's, or the root's) does
not send git to a folder someone else wrote.

Submodules: git status never looks into a submodule's worktree (`--ignore-submodules=dirty`
in gitlist.STATUS), since that runs git in the submodule with the configuration of whatever
folder its `.git` file names, and a sandbox that lets Codex write reaches that file. It
still compares the commit a submodule has checked out. The guard walks a submodule's files
itself, and watches `.git/modules/` (see snapshot.py).

What a check trusts: the configuration as it was at snapshot. It reads the configuration
again (one `git config` process) when `.git/config` or `config.worktree` moved since, or when
the configuration has include directives (which may point anywhere); configuration outside
the repository (the user's `~/.gitconfig`, the system's) is the user's own, outside what a
sandboxed turn can write.

Repository paths (the git dir, the common dir of a worktree) are read from the files git
itself reads, without running git. git is started through `spawn.piped`, the one
door to child processes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from sparring.errors import SparringError
from sparring.process import spawn

# The repository's word on what stat data proves is not taken either: with `core.trustctime`
# off, or `core.checkStat=minimal`, git status takes a same-size rewrite whose mtime was put
# back for the file it was (ctime, which no program can set back, is what gives it away).
SAFE_CONFIG = ("core.fsmonitor=false", f"core.hooksPath={os.devnull}", "protocol.allow=never",
               "core.trustctime=true", "core.checkStat=default")
_FILTER_COMMANDS = (".clean", ".smudge", ".process")


class Git:
    """git in `root`, with the config the tree cannot extend (see the module docstring)."""

    def __init__(self, root: Path, gitdir: Path | None = None,
                 trusted_filters: Mapping[str, str] | None = None) -> None:
        """`gitdir`: the git folder found at snapshot (default: the one `root/.git` names
        now). `trusted_filters`: the config recorded at snapshot; anything configured since
        is switched off (this reads the config once, before any other command)."""
        self.root = root
        self.gitdir = gitdir or git_dir(root)
        self.overrides: list[str] = [*SAFE_CONFIG, *_case_config(root)]
        if trusted_filters is not None:
            self.overrides += neutralized(self.filters(), trusted_filters)

    def _argv(self, overrides: Sequence[str], *args: str) -> list[str]:
        argv = ["git", f"--git-dir={self.gitdir}", f"--work-tree={self.root}"]
        for item in overrides:
            argv += ["-c", item]
        return [*argv, *args]

    def start(self, *args: str) -> Callable[[], bytes]:
        """Start `git ARGS` now; the call returned waits for it and gives its stdout."""
        try:
            finished = spawn.piped(self._argv(self.overrides, *args), cwd=self.root,
                                           env=_environment())
        except OSError as exc:
            raise failed(self.root, exc) from exc

        def finish() -> bytes:
            code, out, err = finished()
            if code != 0:
                raise failed(self.root, f"`git {args[0]}` said: "
                             f"{err.decode('utf-8', 'replace').strip()}")
            return out

        return finish

    def run(self, *args: str) -> bytes:
        return self.start(*args)()

    def filters(self) -> dict[str, str]:
        """The filter drivers configured now (every scope git reads), as key -> value, and
        the include directives (keys `include.*`, `includeif.*`), which can bring in more."""
        return self.start_filters()()

    def start_filters(self) -> Callable[[], dict[str, str]]:
        """filters(), started now; the call returned waits for git and gives them."""
        argv = self._argv(SAFE_CONFIG, "config", "-z", "--get-regexp",
                          r"^(filter|include|includeif)\.")
        try:
            finished = spawn.piped(argv, cwd=self.root, env=_environment())
        except OSError as exc:
            raise failed(self.root, exc) from exc

        def finish() -> dict[str, str]:
            code, out, err = finished()
            if code not in (0, 1):  # 1: no such key
                raise failed(self.root, err.decode("utf-8", "replace").strip())
            found = {}
            for record in out.decode("utf-8", "surrogateescape").split("\0"):
                key, _, value = record.partition("\n")
                if key:
                    found[key] = value
            return found

        return finish


def _case_config(root: Path) -> list[str]:
    """`core.ignoreCase=false` where the tree's filesystem tells case apart. A repository that
    says otherwise (one copied from macOS, say) makes git status hide a new file that differs
    from a tracked one only in case (`makefile` beside `Makefile`). Where the filesystem
    does not tell case apart (`.GIT` is `.git`), the repository's word stands."""
    try:
        lower = os.lstat(root / ".git")
    except OSError:
        return []
    try:
        upper = os.lstat(root / ".GIT")
    except FileNotFoundError:
        return ["core.ignoreCase=false"]
    except OSError:
        return []
    return [] if (upper.st_dev, upper.st_ino) == (lower.st_dev, lower.st_ino) else [
        "core.ignoreCase=false"]


def has_includes(config: Mapping[str, str]) -> bool:
    return any(key.lower().startswith(("include.", "includeif.")) for key in config)


def neutralized(current: Mapping[str, str], trusted: Mapping[str, str]) -> list[str]:
    """`-c` settings that switch off every filter command not in `trusted` (new or changed
    since the snapshot), and its `required` flag, which would otherwise make git fail."""
    found = []
    for key, value in sorted(current.items()):
        if trusted.get(key) == value:
            continue
        if key.endswith(_FILTER_COMMANDS):
            found.append(f"{key}=")
        elif key.endswith(".required"):
            found.append(f"{key}=false")
    return found


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    # A replace ref (refs/replace/<blob>) would make `cat-file` print other bytes than the
    # blob it names; a lazy fetch would start a transport.
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C",
               GIT_NO_REPLACE_OBJECTS="1", GIT_NO_LAZY_FETCH="1")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_EXTERNAL_DIFF",
                 "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"):
        env.pop(name, None)
    return env


def git_dir(root: Path) -> Path:
    """`<root>/.git`, or where a worktree's or submodule's `.git` file points."""
    dot_git = root / ".git"
    if dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8", errors="replace")
        return (root / text.partition("gitdir:")[2].strip()).resolve()
    return dot_git


def common_dir(gitdir: Path) -> Path:
    """The folder holding config, hooks and info: a worktree's git dir names it."""
    try:
        text = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return gitdir
    return (gitdir / text).resolve() if text else gitdir


def failed(root: Path, exc: object) -> SparringError:
    return SparringError(
        "git_failed", f"git could not report the state of {root}: {exc}",
        "check that `git status` works in that directory (git installed, repository intact)",
        root=str(root),
    )
