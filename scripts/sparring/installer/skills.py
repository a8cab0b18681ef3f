"""Skill folders: marked when installed, updated file by file, the user's edits kept."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from sparring import disk
from sparring.installer import layout
from sparring.installer.core import (
    MARKER,
    MARKER_FORMAT,
    TOOL,
    Context,
    FileSpec,
    InstallError,
    Skill,
    Source,
)
from sparring.installer.files import (
    PUBLIC,
    dump_json,
    present,
    read_json,
    remove_empty_dirs,
)
from sparring.installer.source import sha256_of

# -- skill folders ------------------------------------------------------------------


def mode_of(spec: FileSpec) -> int:
    return 0o755 if spec.executable else 0o644


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

    write: list[str]  # files to (re)write from the source, new copies beside edits included
    remove: list[str]  # files this version no longer ships, and copies no longer needed
    kept: list[str]  # files the user edited (or added where we would write): left as they are
    beside: list[str]  # of those, the ones whose new version is written beside them
    blocked: list[str]  # and those whose new version is not: a file of the user's has its name
    backup: list[str]  # with --force: edited files whose user version is saved first
    marker: dict[str, Any]  # the marker to write: kept files keep their old entry


def beside(rel: str) -> str:
    """Where the new version of a file the user edited goes: beside it, under a name Claude
    Code never loads (it reads SKILL.md and the files SKILL.md names, exactly)."""
    return rel + layout.NEW_SUFFIX


def plan_update(folder: Path, source: Source, skill: Skill, old: dict[str, Any],
                force: bool) -> Plan:
    """Each file the source ships: up to date (or the user took this version), written
    (missing, or ours and unedited), or the user's and kept, its new version written beside
    it when it has one they have not seen. --force writes over an edit, after a backup."""
    edited = set(edited_files(folder, old))
    marker = marker_for(source, skill)
    write, kept, news, backup = [], [], [], []
    for rel, spec in skill.files.items():
        state = file_state(folder / rel)
        if state == (spec.sha256, f"{mode_of(spec):o}"):
            continue
        ours = rel in old["files"] and rel not in edited
        if state is None or ours or force:
            write.append(rel)
            backup += [rel] if state is not None and not ours else []
            continue
        kept.append(rel)
        if old["files"].get(rel) != marker["files"][rel]:  # a version they have not seen
            news.append(rel)
        if rel in old["files"]:
            marker["files"][rel] = old["files"][rel]
        else:  # the user's own file where this version ships one: ours once they let go
            marker["files"].pop(rel, None)
    remove = _retire(skill, old, edited, news)
    blocked = []
    for rel in news:  # beside the user's file, never over something of theirs
        new, spec = beside(rel), skill.files[rel]
        if new not in old["files"] and present(folder / new):
            blocked.append(rel)
            continue
        marker["files"][new] = {"sha256": spec.sha256, "mode": f"{mode_of(spec):o}"}
        if file_state(folder / new) != (spec.sha256, f"{mode_of(spec):o}"):
            write.append(new)
    for rel in old["files"]:  # what the user edited and this version no longer ships
        if rel in edited and rel not in skill.files and rel not in marker["files"] \
                and rel not in remove:
            marker["files"][rel] = old["files"][rel]
            kept.append(rel)
    return Plan(write, remove, sorted(kept), sorted(set(news) - set(blocked)), sorted(blocked),
                backup, marker)


def _retire(skill: Skill, old: dict[str, Any], edited: set[str], news: list[str]) -> list[str]:
    """Files we installed that this version no longer ships, and new copies beside a file
    that no longer needs one: removed unless the user edited them."""
    needed = {beside(rel) for rel in news}
    gone = [rel for rel in old["files"] if rel not in skill.files and rel not in needed]
    return sorted(rel for rel in gone if rel not in edited)


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
    disk.write(folder / rel, spec.source.read_bytes(), mode=mode_of(spec))


def spec_of(skill: Skill, rel: str) -> FileSpec:
    """The source of a file to write: the skill's own, or (beside an edit) its new version."""
    return skill.files.get(rel) or skill.files[rel.removesuffix(layout.NEW_SUFFIX)]


def build_skill(target: Path, source: Source, skill: Skill) -> Path:
    """The complete folder built beside its final place, so a skill appears whole."""
    tmp = Path(tempfile.mkdtemp(dir=target, prefix=".sparring-tmp-"))
    try:
        os.chmod(tmp, 0o755)
        for rel, spec in skill.files.items():
            write_skill_file(tmp, rel, spec)
        disk.write(tmp / MARKER, dump_json(marker_for(source, skill)), mode=PUBLIC)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def backup_folder(ctx: Context, target: Path) -> Path:
    """Where --force puts what it replaces: `.claude/sparring-backup/<time>/`, one folder per
    run, out of the skills folder (Claude Code would load a copied SKILL.md as a skill)."""
    return target.parent / layout.BACKUP_DIR / ctx.started


def move_aside(path: Path, dest: Path) -> None:
    """Move a file, a link (not what it points to) or a folder to `dest`, never over
    anything already there."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if present(dest):
        raise InstallError(f"{dest} already exists", "move it away, then run install.py again")
    os.rename(path, dest)


def create_skill(target: Path, source: Source, skill: Skill, backup: Path | None) -> None:
    built = build_skill(target, source, skill)
    if backup is not None:  # a folder of the same name sparring did not install (--force)
        move_aside(target / skill.name, backup)
    os.rename(built, target / skill.name)


def update_skill(folder: Path, skill: Skill, plan: Plan, backup: Path) -> None:
    for rel in plan.backup:  # the user's version, copied before --force writes over it
        check_inside(folder, rel)
        (backup / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(folder / rel, backup / rel, follow_symlinks=False)
    for rel in plan.write:
        write_skill_file(folder, rel, spec_of(skill, rel))
    for rel in plan.remove:
        check_inside(folder, rel)
        with contextlib.suppress(FileNotFoundError):
            (folder / rel).unlink()
    disk.write(folder / MARKER, dump_json(plan.marker), mode=PUBLIC)


def install_skill(ctx: Context, target: Path, source: Source, skill: Skill) -> None:
    folder = target / skill.name
    old = read_marker(folder)
    if old is None:
        exists = present(folder)
        backup = backup_folder(ctx, target) / skill.name if exists else None
        detail = (f"{len(skill.files)} files; the folder sparring did not install moved to "
                  f"{backup}" if exists else f"{len(skill.files)} files, version {source.version}")
        ctx.do("replace" if exists else "install", folder, detail,
               lambda: create_skill(target, source, skill, backup))
        return
    plan = plan_update(folder, source, skill, old, ctx.options.force)
    backup = backup_folder(ctx, target) / skill.name
    if plan.backup:
        ctx.do("backup", backup, f"your version of {', '.join(plan.backup)}, before --force "
               "replaced it", lambda: None)  # copied by update_skill, just before it writes
    if plan.write or plan.remove or read_json(folder / MARKER) != plan.marker:
        changed = len([r for r in plan.write if not r.endswith(layout.NEW_SUFFIX)])
        detail = f"{changed} changed, {len(plan.remove)} removed, version {source.version}"
        ctx.do("update", folder, detail + kept_note(plan),
               lambda: update_skill(folder, skill, plan, backup))
    else:
        ctx.note("unchanged", folder, f"version {source.version}{kept_note(plan)}")
    warn_beside(ctx, folder, plan)


def warn_beside(ctx: Context, folder: Path, plan: Plan) -> None:
    """Say where this version of each file the user edited is: beside it (already, or
    written now), to be written there (a dry run, --check), or nowhere (its name is taken)."""
    later = [rel for rel in plan.beside if ctx.dry_run and beside(rel) in plan.write]
    there = [rel for rel in plan.beside if rel not in later]
    said = ([f"is beside it ({_copies(there)})"] if there else []) + \
        ([f"would be written beside it ({_copies(later)})"] if later else [])
    if said:
        ctx.warn(f"{folder}: you edited {', '.join(plan.beside)}; this version's "
                 f"{' and '.join(said)}: compare, keep what you want, then delete the copy (or "
                 "run install.py with --force, which backs up your version and takes the new "
                 "one)")
    if plan.blocked:
        ctx.warn(f"{folder}: you edited {', '.join(plan.blocked)}; this version's is not beside "
                 f"it: {_copies(plan.blocked)} is a file of yours, left as it is (move it away "
                 "and run install.py again to get the new version beside yours)")


def _copies(rels: list[str]) -> str:
    return ", ".join(beside(rel) for rel in rels)


def kept_note(plan: Plan) -> str:
    if not plan.kept:
        return ""
    return f"; kept your edits: {', '.join(plan.kept)} (--force replaces them, after a backup)"


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
            "move it away (it may be your own skill of the same name), or rerun with --force "
            f"to replace it (yours is moved to {target.parent / layout.BACKUP_DIR}/)")

