"""install.py's command line: install, uninstall, the doctor's verdict, one last line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sparring.installer.core import (
    DOCTOR_TIMEOUT_S,
    INSTALL_CHECKS,
    Context,
    InstallError,
    Options,
    Source,
)
from sparring.installer.files import present
from sparring.installer.leftovers import leftovers
from sparring.installer.permissions import grant_permissions, revoke_permissions
from sparring.installer.runtime import (
    Runtime,
    data_dir,
    ensure_command,
    ensure_runtime,
    locked,
    register,
    registered,
    unregister,
    user_key,
)
from sparring.installer.skills import (
    check_conflicts,
    install_skill,
    owned_skills,
    read_marker,
    uninstall_skill,
)
from sparring.installer.source import load_source
from sparring.process import spawn
from sparring.quoting import shell_word

# -- install, uninstall, doctor -----------------------------------------------------------


def make_target(ctx: Context, target: Path) -> list[str]:
    """Create `.claude/skills` as needed; returns what was created (uninstall removes
    those again when they are empty)."""
    missing = [p for p in (target.parent, target) if not p.exists()]
    for path in missing:
        ctx.do("create", path, "", path.mkdir)
    return [str(p) for p in missing]


def install(ctx: Context, source: Source, runtime: Runtime) -> None:
    target = ctx.options.target
    if target is not None:
        check_conflicts(target, source, ctx.options.force)
    with locked(runtime, ctx.dry_run, create=True):
        ensure_runtime(ctx, runtime, source)
        ensure_command(ctx, runtime)
        created: list[str] = []
        grant = None
        if target is not None:
            created = make_target(ctx, target)
            for skill in source.skills:
                install_skill(ctx, target, source, skill)
            retired = set(owned_skills(target)) - {s.name for s in source.skills}
            for name in sorted(retired):  # a skill this version no longer ships
                uninstall_skill(ctx, target / name, owned_skills(target)[name])
            recorded = registered(runtime, user_key(ctx.options)).get("permissions", {})
            grant = grant_permissions(ctx, target, source, recorded)
        register(ctx, runtime, user_key(ctx.options), created, grant)


def uninstall_skills(ctx: Context, target: Path, source: Source) -> None:
    foreign = [target / s.name for s in source.skills
               if present(target / s.name) and read_marker(target / s.name) is None]
    for name, marker in owned_skills(target).items():
        uninstall_skill(ctx, target / name, marker)
    for folder in foreign:
        ctx.note("left alone", folder, "not installed by sparring")


def uninstall(ctx: Context, source: Source, runtime: Runtime) -> None:
    target = ctx.options.target
    with locked(runtime, ctx.dry_run, create=False):
        if target is not None:
            uninstall_skills(ctx, target, source)
        entry = unregister(ctx, runtime, user_key(ctx.options))
        revoke_permissions(ctx, entry.get("permissions") or {})
        for path in sorted(entry.get("created", []), key=len, reverse=True):
            folder = Path(path)
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                ctx.do("remove", folder, "empty, created by install.py", folder.rmdir)


def launcher_for(ctx: Context, source: Source) -> Path | None:
    """The launcher the doctor runs through: an installed skill's, else the clone's (the
    one the plugin's skills use)."""
    if not source.skills:
        return None
    name = source.skills[0].name
    base = ctx.options.target or (source.root / "skills")
    return base / name / "sparring"


def run_doctor(launcher: Path, cwd: Path) -> dict[str, Any]:
    """The runtime's own doctor, as JSON; it creates nothing (no inbox: no debate runs)."""
    doctor = f"{shell_word(str(launcher))} doctor"
    try:
        done = spawn.run([str(launcher), "doctor", "--json"], cwd=cwd,
                         timeout=DOCTOR_TIMEOUT_S)
        result = json.loads(done.stdout)
    except (OSError, spawn.TimeoutExpired, ValueError) as exc:
        raise InstallError(f"`{doctor}` did not answer: {exc}",
                           f"run `{doctor}` yourself to see why") from exc
    if not isinstance(result, dict):
        raise InstallError(f"`{doctor}` printed no JSON object",
                           f"run `{doctor}` yourself to see why")
    return result


Checks = list[dict[str, Any]]


def doctor_failures(report: dict[str, Any]) -> tuple[Checks, Checks, Checks]:
    """(problems that make the install unusable, problems the user fixes outside this
    installer (codex, its login), warnings)."""
    if "checks" not in report:  # an error envelope, e.g. runtime_missing
        error = report.get("error") or {}
        return [{"name": error.get("code", "doctor"), "detail": error.get("message", ""),
                 "hint": error.get("hint", "")}], [], []
    problems = [c for c in report["checks"] if c.get("level") == "problem"]
    fatal = [c for c in problems if c.get("name") in INSTALL_CHECKS]
    warnings = [c for c in report["checks"] if c.get("level") == "warning"]
    return fatal, [c for c in problems if c not in fatal], warnings


def print_doctor(report: dict[str, Any]) -> None:
    fatal, problems, warnings = doctor_failures(report)
    labelled = [(c, "problem") for c in fatal + problems] + [(c, "warning") for c in warnings]
    for check, label in labelled:
        hint = f" — {check['hint']}" if check.get("hint") else ""
        print(f"doctor {label}: {check['name']}: {check.get('detail', '')}{hint}")


def final_line(ctx: Context, version: str, report: dict[str, Any] | None, root: Path) -> str:
    """The one line that says how it ended and what to do next (an error goes to stderr)."""
    options = ctx.options
    where = str(options.target) if options.target else \
        f"the runtime only ({Runtime(data_dir()).venv})"
    if options.check:
        return check_line(ctx, version, where, root)
    if options.dry_run:
        return "dry run: nothing was changed"
    if options.uninstall:
        return f"sparring removed from {where}" if ctx.changed() else \
            f"nothing changed: sparring is not installed in {where}"
    fatal, problems, warnings = doctor_failures(report) if report else ([], [], [])
    head = f"sparring {version} installed in {where}" if ctx.changed() else \
        f"nothing changed: sparring {version} is already installed in {where}"
    if fatal:
        return f"{head}, but it cannot run yet: fix the {len(fatal)} problem(s) above"
    if problems:  # Codex missing or not logged in: the install is done, a debate is not yet
        more = f" (then the {len(problems) - 1} other problem(s) above)" \
            if len(problems) > 1 else ""
        return f"{head}; next: {problems[0].get('hint') or problems[0]['detail']}{more}"
    count = len(warnings) + len(ctx.warnings)
    if count:
        return f"{head}; doctor: ready, with {count} warning(s) above"
    if options.project is not None:
        return f"{head}; doctor: ready. Next: `cd {shell_word(str(options.project))} && " \
            "claude`, then type /think-about <your question>"
    return f"{head}; doctor: ready"


def check_line(ctx: Context, version: str, where: str, root: Path) -> str:
    """--check: is what is installed older than this clone (at `root`)?"""
    changes = [a for a in ctx.actions if a.verb.startswith("would ")]
    if any(a.verb == "would install" for a in changes):
        return f"not installed: sparring {version} is not in {where}"
    if changes:
        return f"older than this clone: installing would make the {len(changes)} change(s) " \
            f"above; to update, run `python3 {shell_word(str(root / 'install.py'))} " \
            f"{where_option(ctx)}`"
    return f"up to date: {where} has what this clone installs (sparring {version})"


def where_option(ctx: Context) -> str:
    if ctx.options.project is not None:
        return f"--project {shell_word(str(ctx.options.project))}"
    return "--user" if ctx.options.target is not None else "--runtime-only"


# -- command line ---------------------------------------------------------------------------


def parse_options(argv: list[str]) -> Options:
    parser = argparse.ArgumentParser(
        prog="install.py", description="Install sparring's Claude Code skills and runtime.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--project", metavar="DIR", type=Path,
                       help="install into DIR/.claude/skills")
    where.add_argument("--user", action="store_true", help="install into ~/.claude/skills")
    where.add_argument("--runtime-only", action="store_true",
                       help="only create or update the runtime and the sparring command "
                       "(for the Claude Code plugin)")
    parser.add_argument("--uninstall", action="store_true",
                        help="remove what install.py installed there, and name what it "
                        "leaves behind (.sparring/, reports, debate folders)")
    parser.add_argument("--dry-run", action="store_true", help="say what would happen")
    parser.add_argument("--force", action="store_true",
                        help="replace a skill folder of the same name sparring did not "
                        "install, and files of its own folders that you edited, after a "
                        "backup in .claude/sparring-backup/")
    parser.add_argument("--no-permissions", action="store_true",
                        help="do not add permission rules for the skills to Claude Code's "
                        "settings (they allow each skill's runner verbs, and ask before a "
                        "call naming --sandbox), nor the SessionStart hook that names "
                        "Claude's model to the runner, and remove those an earlier install "
                        "added: Claude Code then asks before each runner call after a "
                        "skill's first turn, and reports do not name Claude's model")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; say whether what is installed there is older "
                        "than this clone (exit status 1 when installing would change "
                        "something)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    args = parser.parse_args(argv)
    if args.check and args.uninstall:
        parser.error("--check and --uninstall do not go together")
    project = args.project.resolve() if args.project else None
    if project is not None and not project.is_dir():
        parser.error(f"--project {args.project}: not a directory")
    target = (project / ".claude" / "skills" if project else
              Path.home() / ".claude" / "skills" if args.user else None)
    return Options(target, project, args.uninstall, args.dry_run or args.check, args.force,
                   args.json, permissions=not args.no_permissions, check=args.check)


def run(ctx: Context, source: Source) -> dict[str, Any] | None:
    runtime = Runtime(data_dir())
    if ctx.options.uninstall:
        uninstall(ctx, source, runtime)
        leftovers(ctx)
        return None
    install(ctx, source, runtime)
    launcher = launcher_for(ctx, source)
    if ctx.dry_run or launcher is None:
        return None
    report = run_doctor(launcher, ctx.options.project or Path.cwd())
    if not ctx.options.as_json:
        print_doctor(report)
    return report


def summary(ctx: Context, report: dict[str, Any] | None, error: InstallError | None,
            ok: bool) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "ok": ok,
        "changed": ctx.changed(),
        "dry_run": ctx.dry_run,
        "target": str(ctx.options.target) if ctx.options.target else None,
        "runtime": str(Runtime(data_dir()).venv),
        "actions": [a._asdict() for a in ctx.actions],
        "doctor": report,
        "warnings": ctx.warnings,
        "up_to_date": not any(a.verb.startswith("would ") for a in ctx.actions)
        if ctx.options.check else None,
        "error": {"message": error.message, "hint": error.hint} if error else None,
    }


def main(root: Path, argv: list[str] | None = None) -> int:
    """Install from the clone at `root`; the exit status."""
    ctx = Context(parse_options(sys.argv[1:] if argv is None else argv))
    report, error, version = None, None, "?"
    try:
        source = load_source(root)
        version = source.version
        report = run(ctx, source)
    except InstallError as exc:
        error = exc
    ok = error is None and (report is None or not doctor_failures(report)[0])
    if ctx.options.check:
        ok = ok and not any(a.verb.startswith("would ") for a in ctx.actions)
    if ctx.options.as_json:
        print(json.dumps(summary(ctx, report, error, ok), indent=2))
    elif error is not None:
        print(f"error: {error.message}\n  hint: {error.hint}", file=sys.stderr)
    else:
        print(final_line(ctx, version, report, root))
    return 0 if ok else 1

