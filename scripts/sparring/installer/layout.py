"""What an installation looks like on disk: one source for install.py, `sparring doctor`
and the tests (the launcher, a shell script, follows the same rules; a test checks it).

install.py runs before any runtime exists, so this module uses the standard library only
and install.py loads it straight from the clone.

Claude Code pre-approves a skill's `allowed-tools` only during the turn the skill was
invoked in. A debate often goes on in later turns (the user answers think-about's clarifying
questions, asks for a deeper dive, decides after a guard violation), so the installer also
writes the same three permissions into Claude Code's settings, where every turn sees them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sparring.output import shell_word

MARKER = ".sparring-install.json"  # in every skill folder install.py installed
RUNTIME_STATE = "runtime.json"  # beside the runtime's virtual environment
LAUNCHER = "sparring"  # in every skill folder
INBOX_RULE = "Edit(.sparring/inbox/**)"  # the working directory's inbox (workspace.py)


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """${XDG_DATA_HOME:-$HOME/.local/share}/sparring, exactly the launcher's rule."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sparring"


def settings_file(project: Path | None, home: Path) -> Path:
    """Where install.py writes its permission rules: the project's personal settings (the
    paths in them are this machine's), or the user's settings for a --user install."""
    if project is not None:
        return project / ".claude" / "settings.local.json"
    return home / ".claude" / "settings.json"


def settings_files(project: Path | None, home: Path) -> list[Path]:
    """Every settings file whose rules apply in `project` (the shared project file too)."""
    found = [home / ".claude" / "settings.json"]
    if project is not None:
        found += [project / ".claude" / "settings.json",
                  project / ".claude" / "settings.local.json"]
    return found


def skill_rules(skill_folder: Path) -> list[str]:
    """Run this skill's launcher by its full path (in double quotes when it has a space, as
    the runner spells it: output.shell_word); read its folder (its references), which may
    lie outside the directory Claude Code runs in. `//` makes the path absolute."""
    return [f"Bash({shell_word(str(skill_folder / LAUNCHER))} *)", f"Read(/{skill_folder}/**)"]


def rules(skill_folders: Iterable[Path]) -> list[str]:
    """The allow rules a debate needs in every turn, for these installed skill folders."""
    found = [rule for folder in skill_folders for rule in skill_rules(folder)]
    return [*found, INBOX_RULE]


def allowed(settings: Any) -> list[str]:
    """The `permissions.allow` rules of a settings object, [] when it has none."""
    permissions = settings.get("permissions") if isinstance(settings, dict) else None
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    return [r for r in allow if isinstance(r, str)] if isinstance(allow, list) else []
