"""What one run of install.py carries: its options, the actions it took, its one error."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from sparring.installer import layout

TOOL = "sparring"
MARKER = layout.MARKER  # also read by `sparring doctor` and the launcher
MARKER_FORMAT = 1
STATE_FORMAT = 1
RUNTIME_ONLY = "runtime-only"  # the user key of `--runtime-only` (plugin users)
DOCTOR_TIMEOUT_S = 120
# Failing doctor checks that mean the install itself is unusable; the rest (codex, the
# project's config) are warnings the user fixes outside this installer.
INSTALL_CHECKS = ("python", "skills", "runtime")
# Actions that only say something: nothing was (or would be) changed.
INFORMATION = ("unchanged", "left alone", "left behind", "note")


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
    check: bool = False  # --check: say whether the install is older than this clone


class Context:
    """Carries the options and records every action; in a dry run nothing is executed."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.actions: list[Action] = []
        self.warnings: list[str] = []
        self.started = time.strftime("%Y%m%d-%H%M%S")  # names this run's backup folder

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
        return any(a.verb not in INFORMATION for a in self.actions)

