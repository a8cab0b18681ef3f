"""What an installation looks like on disk: one source for install.py, `sparring doctor`
and the tests (the launcher, a shell script, follows the same rules; a test checks it).

install.py runs before any runtime exists, so this module uses the standard library only
and install.py loads it straight from the clone.

Claude Code pre-approves a skill's `allowed-tools` only during the turn the skill was
invoked in. A debate often goes on in later turns (the user answers think-about's clarifying
questions, asks for a deeper dive, decides after a guard violation), so the installer also
writes the same rules into Claude Code's settings, where every turn sees them.

Least privilege: the rules approve the launcher only with the verbs its skill runs (its
SKILL.md, its references and the commands the runner prints for it to run), one rule per
verb; anything else still asks the user: `render`, `guard revert` (undoing files is the
user's decision), `guard check`/`snapshot`, and any launcher call that names `--sandbox`
(an `ask` rule, which wins over every allow rule). Claude Code matches `Bash(prefix *)` on
the command as written, so `Bash(<launcher> wait *)` approves `<launcher> wait S` and never
`<launcher> render …`. This is defence in depth: the runner confines its own arguments.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sparring.quoting import shell_word

MARKER = ".sparring-install.json"  # in every skill folder install.py installed
RUNTIME_STATE = "runtime.json"  # beside the runtime's virtual environment
# The Claude Code plugin's own runtime (installer/plugin.py): the variable its SessionStart
# hook sets for every Bash call (Claude Code's CLAUDE_PLUGIN_DATA reaches hooks only), and the
# seal written once the runtime there is whole, naming the plugin root it was built from.
PLUGIN_DATA = "SPARRING_PLUGIN_DATA"
PLUGIN_READY = "runtime.ready"
LAUNCHER = "sparring"  # in every skill folder
INBOX = ".sparring/inbox"  # of the directory Claude Code runs in (workspace.py)
INBOX_RULE = f"Edit({INBOX}/**)"
COMMAND = "sparring"  # the command a person runs, linked into bin_dir() to the runtime's
NEW_SUFFIX = ".sparring-new"  # the new version of a file the user edited, written beside it
BACKUP_DIR = "sparring-backup"  # in the `.claude` folder: what --force replaced, by time
# What the launcher runs, as `python -I -c ENTRY ARGS`: the entry of `python -m sparring`
# without runpy, which `-m` would load on every call (a few milliseconds, several calls a
# round). The launcher spells it again; tests/test_layout.py holds the two together.
ENTRY = "import sys; from sparring.__main__ import main; sys.exit(main())"


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """${XDG_DATA_HOME:-$HOME/.local/share}/sparring, exactly the launcher's rule."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sparring"


def bin_dir(home: Path | None = None) -> Path:
    """Where install.py links the `sparring` command: ~/.local/bin, the user's own folder of
    commands (the XDG base directory spec's, and pipx's), on PATH in most shells."""
    return (Path.home() if home is None else home) / ".local" / "bin"


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


# The runner's verbs each skill runs: every skill's, then its own. Generated from the
# workflows' declarations (their `runs` and their own verbs: workflows/workflow.py) by
# docs/generate.py, which writes each SKILL.md's `allowed-tools` from the same; edit those,
# never these lines (tests/test_skills.py fails until they are regenerated).
# generated: skill verbs
COMMON_VERBS = ("doctor", "wait", "poll", "status", "resume", "stop", "finalize", "guard accept")
SKILL_VERBS = {
    "think-about": ("init", "start", "seal", "verdict", "report"),
    "dual-model": ("init", "start", "seal", "verdict", "report"),
    "arch-debate": ("debate new", "debate round", "debate status"),
    "deep-discussion": ("discuss new", "discuss frame", "discuss round", "discuss status",
                        "discuss synthesis", "discuss report"),
}
# end: skill verbs
ASKED = "*--sandbox*"  # a launcher call naming it asks, whatever its verb


def verbs(skill: str) -> tuple[str, ...]:
    """The verbs the skill of that name runs (a folder of another name: every skill's)."""
    return (*COMMON_VERBS, *SKILL_VERBS.get(skill, ()))


def verb_rules(launcher: str, skill: str) -> list[str]:
    """One Bash rule per verb, for the launcher as it is written in a command."""
    return [f"Bash({launcher} {verb} *)" for verb in verbs(skill)]


def skill_rules(skill_folder: Path) -> list[str]:
    """Run this skill's launcher by its full path with its verbs (in double quotes when the
    path has a space, as the runner spells it: quoting.shell_word); read its folder (its
    references), which may lie outside the directory Claude Code runs in (`//` makes the
    path absolute); and let Claude invoke the skill itself (`Skill(name)`), as it does when
    the user asks in plain words, "go on with the debate", without the slash command."""
    launcher = shell_word(str(skill_folder / LAUNCHER))
    return [*verb_rules(launcher, skill_folder.name), f"Read(/{skill_folder}/**)",
            f"Skill({skill_folder.name})"]


def rules(skill_folders: Iterable[Path]) -> list[str]:
    """The allow rules a debate needs in every turn, for these installed skill folders."""
    found = [rule for folder in skill_folders for rule in skill_rules(folder)]
    return [*found, INBOX_RULE]


def ask_rules(skill_folders: Iterable[Path]) -> list[str]:
    """The ask rules: a launcher call that names --sandbox asks the user, whatever allows it."""
    return [f"Bash({shell_word(str(folder / LAUNCHER))} {ASKED})" for folder in skill_folders]


def broad_rules(skill_folders: Iterable[Path]) -> list[str]:
    """The rules earlier versions wrote, approving the launcher with any arguments: install
    and uninstall take them back, doctor names them."""
    return [f"Bash({word} *)" for folder in skill_folders
            for word in dict.fromkeys([shell_word(str(folder / LAUNCHER)),
                                       str(folder / LAUNCHER)])]


def skill_allowed_tools(skill: str, runs: Iterable[str] | None = None) -> list[str]:
    """A SKILL.md's `allowed-tools`: the verbs it runs (`runs`, else `verbs(skill)`), for its
    launcher written plain and in double quotes (Claude Code substitutes
    ${CLAUDE_SKILL_DIR}; a path with a space is quoted)."""
    plain = "${CLAUDE_SKILL_DIR}/" + LAUNCHER
    return [rule for verb in (verbs(skill) if runs is None else runs) for rule in (
        f"Bash({plain} {verb} *)", f'Bash("{plain}" {verb} *)')] + [
        INBOX_RULE, "Read(/${CLAUDE_SKILL_DIR}/**)"]


def allowed(settings: Any, kind: str = "allow") -> list[str]:
    """The `permissions.allow` (or `ask`) rules of a settings object, [] when it has none."""
    permissions = settings.get("permissions") if isinstance(settings, dict) else None
    found = permissions.get(kind) if isinstance(permissions, dict) else None
    return [r for r in found if isinstance(r, str)] if isinstance(found, list) else []
