"""Claude Code's permission rules for the skills, in its settings, in every turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sparring.installer import layout
from sparring.installer.core import Context, Source
from sparring.installer.files import present, read_json, remove_path, write_atomic

# -- Claude Code's permission rules ------------------------------------------------------


def read_settings(path: Path) -> dict[str, Any] | None:
    """A Claude Code settings object ({} when the file does not exist), or None when it is
    not one we can safely add a rule to: such a file is never rewritten."""
    if not present(path):
        return {}
    data = read_json(path)
    permissions = data.get("permissions", {}) if data is not None else None
    if not isinstance(permissions, dict) or not isinstance(permissions.get("allow", []), list):
        return None
    return data


def write_settings(path: Path, data: dict[str, Any]) -> None:
    """Atomically, into the file a link points to (dotfiles often link settings.json),
    keeping its mode and the order of its keys."""
    real = path.resolve()
    real.parent.mkdir(parents=True, exist_ok=True)
    mode = real.stat().st_mode & 0o777 if real.exists() else 0o644
    write_atomic(real, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(), mode)


def with_rules(data: dict[str, Any], add: list[str], drop: list[str]) -> dict[str, Any]:
    new: dict[str, Any] = json.loads(json.dumps(data))
    permissions = new.setdefault("permissions", {})
    allow = [r for r in permissions.get("allow", []) if r not in drop]
    permissions["allow"] = allow + [r for r in add if r not in allow]
    return new


def grant_permissions(ctx: Context, target: Path, source: Source,
                      recorded: dict[str, Any]) -> dict[str, Any] | None:
    """Allow the skills' launchers, their folders and the inbox in every turn, not only
    the turn a skill was invoked in. Returns the record of the rules this target added
    (uninstall removes exactly those), or None."""
    path = layout.settings_file(ctx.options.project, Path.home())
    ours = list(recorded.get("added", [])) if recorded.get("file") == str(path) else []
    if not ctx.options.permissions:
        if ours:
            revoke_permissions(ctx, recorded)
        else:
            ctx.note("left alone", path, "--no-permissions: Claude Code asks before runner "
                     "calls after a skill's first turn")
        return None
    wanted = layout.rules(target / s.name for s in source.skills)
    data = read_settings(path)
    if data is None:
        missing = [r for r in wanted if r not in ours]
        if missing:
            ctx.warn(f"{path} is not a JSON object with a permissions.allow list, so it was "
                     "left alone; Claude Code will ask before each runner call after a "
                     f"skill's first turn. Add to permissions.allow: {', '.join(missing)}")
        return dict(recorded) if ours else None
    have = layout.allowed(data)
    add = [r for r in wanted if r not in have]
    drop = [r for r in ours if r not in wanted and r in have]
    record = {"file": str(path), "added": [r for r in ours if r not in drop] + add,
              "created": recorded.get("created", not present(path)) if ours
              else not present(path)}
    if add or drop:
        detail = ", ".join(filter(None, [
            f"allow {len(add)} rule(s) for the skills' runner, folders and inbox" if add else "",
            f"remove {len(drop)} rule(s) sparring added before" if drop else ""]))
        ctx.do("update settings", path, detail,
               lambda: write_settings(path, with_rules(data, add, drop)))
    else:
        ctx.note("unchanged", path, "permission rules in place")
    return record if record["added"] else None


def revoke_permissions(ctx: Context, recorded: dict[str, Any]) -> None:
    """Remove the rules install.py added for a target, and the settings file when it
    made it and nothing else is left in it."""
    if not recorded.get("added") or not isinstance(recorded.get("file"), str):
        return
    path = Path(recorded["file"])
    data = read_settings(path)
    drop = [r for r in recorded["added"] if r in layout.allowed(data)]
    if data is None or not drop:
        return
    new = with_rules(data, [], drop)
    empty = bool(recorded.get("created")) and new == {"permissions": {"allow": []}}
    ctx.do("remove" if empty else "update settings", path,
           f"remove {len(drop)} permission rule(s) sparring added",
           (lambda: remove_path(path)) if empty else (lambda: write_settings(path, new)))

