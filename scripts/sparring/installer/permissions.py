"""Claude Code's permission rules for the skills, in its settings, in every turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sparring import disk
from sparring.installer import layout
from sparring.installer.core import Context, Source
from sparring.installer.files import present, read_json, remove_path
from sparring.process import spawn

# -- Claude Code's permission rules ------------------------------------------------------


KINDS = ("allow", "ask")  # permissions.allow, permissions.ask
RECORDED = {"allow": "added", "ask": "asked"}  # where a target's record keeps each kind


def read_settings(path: Path) -> dict[str, Any] | None:
    """A Claude Code settings object ({} when the file does not exist), or None when it is
    not one we can safely add a rule to: such a file is never rewritten."""
    if not present(path):
        return {}
    data = read_json(path)
    permissions = data.get("permissions", {}) if data is not None else None
    if not isinstance(permissions, dict) or not all(
            isinstance(permissions.get(kind, []), list) for kind in KINDS):
        return None
    return data


def write_settings(path: Path, data: dict[str, Any]) -> None:
    """Atomically, into the file a link points to (dotfiles often link settings.json),
    keeping its mode and the order of its keys."""
    real = path.resolve()
    real.parent.mkdir(parents=True, exist_ok=True)
    mode = real.stat().st_mode & 0o777 if real.exists() else 0o644
    disk.write(real, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(),
               mode=mode)


Changes = dict[str, tuple[list[str], list[str]]]  # kind -> (rules to add, rules to drop)


def with_rules(data: dict[str, Any], changes: Changes) -> dict[str, Any]:
    new: dict[str, Any] = json.loads(json.dumps(data))
    permissions = new.setdefault("permissions", {})
    for kind, (add, drop) in changes.items():
        if not add and kind not in permissions:
            continue  # no empty `ask` list in a file that had none
        kept = [r for r in permissions.get(kind, []) if r not in drop]
        permissions[kind] = kept + [r for r in add if r not in kept]
    return new


def recorded_rules(recorded: dict[str, Any], kind: str) -> list[str]:
    found = recorded.get(RECORDED[kind], [])
    return [r for r in found if isinstance(r, str)] if isinstance(found, list) else []


def grant_permissions(ctx: Context, target: Path, source: Source,
                      recorded: dict[str, Any]) -> dict[str, Any] | None:
    """Allow the skills' launchers with the verbs they run, their folders and the inbox in
    every turn, not only the turn a skill was invoked in, and make a launcher call naming
    --sandbox ask. Returns the record of the rules this target added (uninstall removes
    exactly those, the broad ones of earlier versions included), or None."""
    path = layout.settings_file(ctx.options.project, Path.home())
    same_file = recorded.get("file") == str(path)
    ours = {kind: recorded_rules(recorded, kind) if same_file else [] for kind in KINDS}
    if not ctx.options.permissions:
        if any(ours.values()):
            revoke_permissions(ctx, recorded)
        else:
            ctx.note("left alone", path, "--no-permissions: Claude Code asks before runner "
                     "calls after a skill's first turn")
        return None
    folders = [target / s.name for s in source.skills]
    wanted = {"allow": layout.rules(folders), "ask": layout.ask_rules(folders)}
    data = read_settings(path)
    if data is None:
        _cannot_write(ctx, path, wanted, ours)
        return dict(recorded) if any(ours.values()) else None
    changes: Changes = {}
    permissions = data.get("permissions", {})
    record: dict[str, Any] = {"file": str(path), "lists": sorted(
        {*(recorded.get("lists", []) if same_file else []),
         *(kind for kind in KINDS if kind not in permissions)})}
    for kind in KINDS:
        have = layout.allowed(data, kind)
        add = [r for r in wanted[kind] if r not in have]
        drop = [r for r in ours[kind] if r not in wanted[kind] and r in have]
        changes[kind] = (add, drop)
        record[RECORDED[kind]] = [r for r in ours[kind] if r not in drop] + add
    record["created"] = (recorded.get("created", not present(path)) if any(ours.values())
                         else not present(path))
    _apply(ctx, path, data, changes)
    if ctx.options.project is not None:
        _out_of_git(ctx, ctx.options.project, path)
    return record if record["added"] or record["asked"] else None


def _out_of_git(ctx: Context, project: Path, path: Path) -> None:
    """The project's personal settings hold this machine's paths: say so when git would
    commit them. Only git's ignore rules are read (fsmonitor off: nothing of the tree runs)."""
    if not (project / ".git").exists():
        return
    rel = path.relative_to(project).as_posix()
    try:
        done = spawn.run(["git", "-c", "core.fsmonitor=false", "-C", str(project),
                          "check-ignore", "-q", "--", rel], timeout=30)
    except (OSError, spawn.TimeoutExpired):
        return
    if done.returncode == 1:  # 0: ignored; 128: git could not tell
        ctx.note("note", path, f"git does not ignore it: it holds this machine's paths, so "
                 f"keep it out of git (add `{rel}` to .gitignore)")


def _apply(ctx: Context, path: Path, data: dict[str, Any], changes: Changes) -> None:
    added = sum(len(add) for add, _ in changes.values())
    dropped = sum(len(drop) for _, drop in changes.values())
    if not added and not dropped:
        ctx.note("unchanged", path, "permission rules in place")
        return
    detail = ", ".join(filter(None, [
        f"allow {len(changes['allow'][0])} rule(s) for the skills' runner verbs, folders, "
        "the skills themselves and the inbox" if changes["allow"][0] else "",
        f"ask before any runner call naming --sandbox ({len(changes['ask'][0])} rule(s))"
        if changes["ask"][0] else "",
        f"remove {dropped} rule(s) sparring added before" if dropped else ""]))
    ctx.do("update settings", path, detail, lambda: write_settings(path, with_rules(data, changes)))


def _cannot_write(ctx: Context, path: Path, wanted: dict[str, list[str]],
                  ours: dict[str, list[str]]) -> None:
    missing = {kind: [r for r in wanted[kind] if r not in ours[kind]] for kind in KINDS}
    if any(missing.values()):
        ctx.warn(f"{path} is not a JSON object with permissions.allow and permissions.ask "
                 "lists, so it was left alone; Claude Code will ask before each runner call "
                 "after a skill's first turn. Add to permissions.allow: "
                 f"{', '.join(missing['allow'])}; to permissions.ask: {', '.join(missing['ask'])}")


def revoke_permissions(ctx: Context, recorded: dict[str, Any]) -> None:
    """Remove the rules install.py added for a target (the broad ones of earlier versions
    too: they were recorded the same way), and the settings file when it made it and
    nothing else is left in it."""
    if not isinstance(recorded.get("file"), str):
        return
    path = Path(recorded["file"])
    data = read_settings(path)
    if data is None:
        return
    changes: Changes = {kind: ([], [r for r in recorded_rules(recorded, kind)
                                    if r in layout.allowed(data, kind)]) for kind in KINDS}
    dropped = sum(len(drop) for _, drop in changes.values())
    if not dropped:
        return
    new = with_rules(data, changes)
    for kind in recorded.get("lists", []):  # a list install.py began, left empty: gone too
        if kind in KINDS and new.get("permissions", {}).get(kind) == []:
            del new["permissions"][kind]
    empty = bool(recorded.get("created")) and _is_empty(new)
    ctx.do("remove" if empty else "update settings", path,
           f"remove {dropped} permission rule(s) sparring added",
           (lambda: remove_path(path)) if empty else (lambda: write_settings(path, new)))


def _is_empty(settings: dict[str, Any]) -> bool:
    permissions = settings.get("permissions")
    return set(settings) == {"permissions"} and isinstance(permissions, dict) and not any(
        permissions.values()) and set(permissions) <= set(KINDS)
