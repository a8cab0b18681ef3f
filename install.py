#!/usr/bin/env python3
"""Install sparring's Claude Code skills, and the private runtime they call.

    python3 install.py --project DIR    the skills into DIR/.claude/skills/
    python3 install.py --user           the skills into ~/.claude/skills/
    python3 install.py --runtime-only   only the runtime (for the Claude Code plugin)

Options: --dry-run (say what would happen, write nothing), --check (change nothing; exit 1
when the install there is older than this clone), --uninstall (remove what it installed, and
name what it leaves behind: .sparring/, reports, debate folders, the witness copies), --force
(replace a skill folder sparring did not install, and files of its own folders that you
edited, after a backup in .claude/sparring-backup/<time>/), --no-permissions (no rules and no
session-start hook in Claude Code's settings), --json (a machine-readable summary).

Like pre-commit's installer it marks what it installs (`.sparring-install.json` in each
skill folder: version, source, the hash of every file), never overwrites a folder it does
not own nor a file you edited (the new version of an edited file is written beside it, as
<file>.sparring-new), changes nothing when run twice, and uninstalls cleanly. The runtime is
a virtual environment in ${XDG_DATA_HOME:-~/.local/share}/sparring/venv, where the skills'
launcher looks; `runtime.json` beside it records the sources it was built from, the targets
that use it (uninstalling the last one removes it, and the `sparring` command linked into
~/.local/bin with it) and the permission rules each target added to Claude Code's settings
(uninstall removes exactly those). The rules approve each skill's launcher only with the
runner verbs that skill runs, and make a call naming --sandbox ask; the broad rules of
earlier versions are replaced. It ends with `sparring doctor` and one line: ready, or the
next thing to do (install Codex, log it in). Standard library only; Python 3.10+.
"""

# Only modules that exist in old Pythons are imported before the version check, and the
# file avoids syntax newer than 3.6, so an old python3 gets a sentence, not a traceback.
import sys
from pathlib import Path

MIN_PYTHON = (3, 10)

if sys.version_info < MIN_PYTHON:
    sys.stderr.write(
        "error: sparring needs Python {}.{} or newer; this is Python {} ({}).\n"
        "  hint: run install.py with a newer interpreter, e.g. `python3.12 install.py ...`\n"
        .format(MIN_PYTHON[0], MIN_PYTHON[1], ".".join(map(str, sys.version_info[:3])),
                sys.executable))
    sys.exit(1)

ROOT = Path(__file__).resolve().parent
# The installer's modules live in the package (scripts/sparring/installer/, standard library
# only), beside the layout `sparring doctor` shares with them.
sys.path.insert(0, str(ROOT / "scripts"))

from sparring import host  # noqa: E402  (standard library only, loads nothing else)

if host.native_windows():
    sys.stderr.write(f"error: {host.NATIVE_WINDOWS}\n")
    sys.exit(1)

from sparring.installer.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(ROOT))
