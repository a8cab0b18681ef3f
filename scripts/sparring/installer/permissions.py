"""Claude Code's permission rules for the skills, in its settings, in every turn; and, in the
same settings, the SessionStart hook that names Claude's model to the runner (the launcher's
`--session-start`, as the plugin's hooks.json runs it: sparring/claude.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sparring import disk
from sparring.installer import layout
from sparring.installer.core import Context, Source
from sparring.installer.files import present, read_json, remove_path
from sparring.process import spawn
from sparring.quoting import shell_word

# -- Claude Code's permission rules ------------------------------------------------------


KINDS = ("allow", "ask")  # permissions.allow, permissions.ask
RECORDED = {"allow": "added", "ask": "asked"}  # where a target's record keeps each kind


HOOK_EVENT = "SessionStart"
HOOK_TIMEOUT = 10  # seconds: the hook is a few shell builtins


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


def hooks_readable(settings: dict[str, Any]) -> bool:
    """Whether the settings' hooks are an object whose SessionStart (if any) is a list: else
    the hook is neither added nor taken out (the rules still are)."""
    hooks = settings.get("hooks", {})
    return isinstance(hooks, dict) and isinstance(hooks.get(HOOK_EVENT, []), list)


def write_settings(path: Path, data: dict[str, Any]) -> None:
    """Atomically, into the file a link points to (dotfiles often link settings.json),
    keeping its mode and the order of its keys."""
    real = path.resolve()
    real.parent.mkdir(parents=True, exist_ok=True)
    mode = real.stat().st_mode & 0o777 if real.exists() else 0o644
    disk.write(real, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(),
               mode=mode)


Changes = dict[str, tuple[list[str], list[str]]]  # kind -> (rules to add, rules to drop)


def hook_command(skill_folders: list[Path]) -> str:
    """The SessionStart hook's command: the first skill's launcher, `--session-start`; once
    the skills are gone (deleted by hand, not uninstalled) it does nothing, rather than have
    Claude Code report a failed hook at every session's start."""
    launcher = shell_word(str(skill_folders[0] / layout.LAUNCHER))
    return f"[ ! -f {launcher} ] || sh {launcher} --session-start"


def hook_commands(settings: dict[str, Any]) -> list[str]:
    """The commands of the settings' SessionStart hooks ([] when hooks_readable is not)."""
    if not hooks_readable(settings):
        return []
    return [c for group in settings.get("hooks", {}).get(HOOK_EVENT, [])
            for c in _commands_of(group)]


def _commands_of(group: Any) -> list[str]:
    inner = group.get("hooks") if isinstance(group, dict) else None
    return [h["command"] for h in inner if isinstance(h, dict) and isinstance(
        h.get("command"), str)] if isinstance(inner, list) else []


def with_hook(data: dict[str, Any], add: str | None, drop: list[str]) -> dict[str, Any]:
    """`data` with the SessionStart hook `add` (a group of its own) and without the hooks
    whose command is one of `drop` (a group left with none goes too; a hook the user added
    beside ours stays)."""
    new: dict[str, Any] = json.loads(json.dumps(data))
    if not add and not drop:
        return new
    hooks = new.setdefault("hooks", {})
    kept = []
    for group in hooks.get(HOOK_EVENT, []):
        inner = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(inner, list) and set(_commands_of(group)) & set(drop):
            rest = [h for h in inner if not (isinstance(h, dict) and h.get("command") in drop)]
            if not rest:
                continue
            group = {**group, "hooks": rest}
        kept.append(group)
    if add:
        kept.append({"hooks": [{"type": "command", "command": add, "timeout": HOOK_TIMEOUT}]})
    hooks[HOOK_EVENT] = kept
    return new


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
    --sandbox ask; and run the first skill's launcher as a SessionStart hook, which names
    Claude's model to every runner call (sparring/claude.py). Returns the record of the rules
    and the hook this target added (uninstall removes exactly those, the broad rules of
    earlier versions included), or None."""
    path = layout.settings_file(ctx.options.project, Path.home())
    same_file = recorded.get("file") == str(path)
    ours = {kind: recorded_rules(recorded, kind) if same_file else [] for kind in KINDS}
    if not ctx.options.permissions:
        if any(ours.values()) or recorded_hooks(recorded):
            revoke_permissions(ctx, recorded)
        else:
            ctx.note("left alone", path, "--no-permissions: Claude Code asks before runner "
                     "calls after a skill's first turn")
        return None
    folders = [target / s.name for s in source.skills]
    wanted = {"allow": layout.rules(folders), "ask": layout.ask_rules(folders)}
    our_hooks = recorded_hooks(recorded) if same_file else []
    data = read_settings(path)
    if data is None:
        _cannot_write(ctx, path, wanted, ours)
        return dict(recorded) if any(ours.values()) or our_hooks else None
    changes: Changes = {}
    permissions = data.get("permissions", {})
    readable = hooks_readable(data)
    record: dict[str, Any] = {"file": str(path), "lists": sorted(
        {*(recorded.get("lists", []) if same_file else []),
         *(kind for kind in KINDS if kind not in permissions),
         *(["hooks"] if "hooks" not in data else []),
         *([HOOK_EVENT] if readable and HOOK_EVENT not in data.get("hooks", {}) else [])})}
    for kind in KINDS:
        have = layout.allowed(data, kind)
        add = [r for r in wanted[kind] if r not in have]
        drop = [r for r in ours[kind] if r not in wanted[kind] and r in have]
        changes[kind] = (add, drop)
        record[RECORDED[kind]] = [r for r in ours[kind] if r not in drop] + add
    hook, running = hook_command(folders), hook_commands(data)
    hook_change: tuple[str | None, list[str]] = (None, [])
    record["hooks"] = our_hooks
    if readable:
        hook_change = (hook if hook not in running else None,
                       [h for h in our_hooks if h != hook and h in running])
        record["hooks"] = [hook] if hook_change[0] or hook in our_hooks else []
    else:
        ctx.warn(f"{path}: its `hooks` is not an object whose SessionStart is a list, so it "
                 "was left as it is: no session-start hook, and reports will not name "
                 "Claude's model (the permission rules were written)")
    record["created"] = (recorded.get("created", not present(path))
                         if any(ours.values()) or our_hooks else not present(path))
    _apply(ctx, path, data, changes, hook_change)
    if ctx.options.project is not None:
        _out_of_git(ctx, ctx.options.project, path)
    return record if record["added"] or record["asked"] or record["hooks"] else None


def recorded_hooks(recorded: dict[str, Any]) -> list[str]:
    found = recorded.get("hooks", [])
    return [h for h in found if isinstance(h, str)] if isinstance(found, list) else []


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


def _apply(ctx: Context, path: Path, data: dict[str, Any], changes: Changes,
           hook: tuple[str | None, list[str]]) -> None:
    added = sum(len(add) for add, _ in changes.values())
    dropped = sum(len(drop) for _, drop in changes.values())
    if not added and not dropped and not hook[0] and not hook[1]:
        ctx.note("unchanged", path, "permission rules and the session-start hook in place")
        return
    detail = ", ".join(filter(None, [
        f"allow {len(changes['allow'][0])} rule(s) for the skills' runner verbs, folders, "
        "the skills themselves and the inbox" if changes["allow"][0] else "",
        f"ask before any runner call naming --sandbox ({len(changes['ask'][0])} rule(s))"
        if changes["ask"][0] else "",
        f"remove {dropped} rule(s) sparring added before" if dropped else "",
        "a SessionStart hook that names Claude's model to the runner (no Python)"
        if hook[0] else "",
        f"remove {len(hook[1])} hook(s) sparring added before" if hook[1] else ""]))
    ctx.do("update settings", path, detail,
           lambda: write_settings(path, with_hook(with_rules(data, changes), *hook)))


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
    hooks = [h for h in recorded_hooks(recorded) if h in hook_commands(data)]
    if not dropped and not hooks:
        return
    new = with_hook(with_rules(data, changes), None, hooks)
    lists = recorded.get("lists", [])
    for kind in lists:  # a list install.py began, left empty: gone too
        if kind in KINDS and new.get("permissions", {}).get(kind) == []:
            del new["permissions"][kind]
    if HOOK_EVENT in lists and hooks_readable(new) and new.get("hooks", {}).get(HOOK_EVENT) == []:
        del new["hooks"][HOOK_EVENT]
    if "hooks" in lists and new.get("hooks") == {}:
        del new["hooks"]
    empty = bool(recorded.get("created")) and _is_empty(new)
    said = ", ".join(filter(None, [f"{dropped} permission rule(s)" if dropped else "",
                                   "the session-start hook" if hooks else ""]))
    ctx.do("remove" if empty else "update settings", path, f"remove {said} sparring added",
           (lambda: remove_path(path)) if empty else (lambda: write_settings(path, new)))


def _is_empty(settings: dict[str, Any]) -> bool:
    permissions = settings.get("permissions", {})
    return set(settings) <= {"permissions", "hooks"} and isinstance(permissions, dict) and not any(
        permissions.values()) and set(permissions) <= set(KINDS) and not settings.get("hooks")
