"""What `--uninstall` leaves behind, said out loud: the debates' records and working state are
the user's, not install.py's, so it never removes them; it names each one and how to remove it.
"""

from __future__ import annotations

import json
from pathlib import Path

from sparring.installer import layout
from sparring.installer.core import Context
from sparring.quoting import shell_word
from sparring.store import locate, shapes, witness

# (path in a project, what it is, whether removing the folder whole is safe to suggest)
IN_A_PROJECT = (
    (".sparring", "the runner's working state: its sessions and the inbox (the runner moves "
     "each inbox file into its session once it has read it); nothing there is a record", True),
    ("debate", "arch-debate's debate folders: your decision records", False),
    (".kkachi", "deep-discussion's reports: your decision records", False),
    (f".claude/{layout.BACKUP_DIR}", "what install.py --force replaced", True),
)
REPORTS = "docs/decisions"  # think-about's and dual-model's reports (their report_path)


def leftovers(ctx: Context) -> None:
    """Name what sparring made that install.py does not remove, and how to remove it."""
    project = ctx.options.project
    if project is None:
        ctx.note("left behind", Path("<each project you debated in>"),
                 "its .sparring/ folder (working state) and its reports; uninstalling "
                 "that project (--project DIR --uninstall) lists them")
    else:
        for rel, what, whole in IN_A_PROJECT:
            _name(ctx, project / rel, what, whole)
        _reports(ctx, project / REPORTS)
    _witness(ctx, project)
    _outputs(ctx, project)


def _name(ctx: Context, path: Path, what: str, whole: bool) -> None:
    if not path.exists():
        return
    how = f"remove it with `rm -rf {shell_word(str(path))}` when no debate runs" if whole else \
        "keep them, or delete the ones you no longer want"
    ctx.note("left behind", path, f"{what}; {how}")


def _reports(ctx: Context, folder: Path) -> None:
    """Reports sit among the user's own documents: counted, never suggested for removal
    whole (a sparring.yaml's report_path may have put them elsewhere too)."""
    found = [p for p in folder.glob("*.md")
             if "-think-about-" in p.name or "-dual-model-" in p.name] \
        if folder.is_dir() else []
    if found:
        ctx.note("left behind", folder, f"{len(found)} think-about and dual-model report(s) "
                 "(each .md with a .json beside it): your decision records; delete the ones "
                 "you no longer want")


def _witness(ctx: Context, project: Path | None) -> None:
    """sparring's own copies of its records, out of Codex's reach (store/witness.py)."""
    folder = Path(witness.home() if project is None else witness.folder(project))
    if folder.exists():
        ctx.note("left behind", folder, "sparring's copies of the runner's records (kept out "
                 f"of Codex's reach); remove it with `rm -rf {shell_word(str(folder))}` when no "
                 "debate runs")


def _outputs(ctx: Context, project: Path | None) -> None:
    """What each turn's codex printed, kept out of the project (store/locate.outputs_folder)."""
    top = Path(locate.state_home()) / "codex"
    if project is None:
        if top.exists():
            ctx.note("left behind", top, "what Codex printed in each turn of every project's "
                     f"sessions; remove it with `rm -rf {shell_word(str(top))}` when no debate "
                     "runs")
        return
    sessions = project / ".sparring" / "sessions"
    found = [folder for s in (sorted(sessions.glob("*")) if sessions.is_dir() else [])
             if (folder := _outputs_of(s)) is not None and folder.exists()]
    if found:
        ctx.note("left behind", top, f"what Codex printed in each turn of this project's "
                 f"{len(found)} session(s), a folder each (named `<session id>-<key>`); remove "
                 "them when no debate runs")


def _outputs_of(session: Path) -> Path | None:
    """A session's folder of what its turns' codex printed, out of the project (None for a
    session that keeps them in its own folder, or one whose file cannot be read)."""
    try:
        data = json.loads((session / locate.SESSION_FILE).read_text(encoding="utf-8"))
        token = data["outputs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(token, str) or shapes.placement_problem({**data, "outputs": token},
                                                               str(session)):
        return None
    return Path(locate.outputs_folder(str(session), token))
