"""`sparring doctor`: is everything sparring needs in place? A verdict with hints."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from sparring import __version__, codex, config, workspace
from sparring.errors import SparringError

TESTED_CODEX = "0.169.0"


def doctor(cwd: Path) -> dict[str, Any]:
    checks = [_python()]
    checks += _codex()
    checks.append(_project(cwd))
    checks.append(_config(cwd))
    problems = [c for c in checks if not c["ok"]]
    return {
        "ready": not problems,
        "verdict": "ready" if not problems else
        f"not ready: {len(problems)} problem(s); fix them in the order listed",
        "sparring": __version__,
        "checks": checks,
        "hints": [c["hint"] for c in problems],
    }


def _check(name: str, ok: bool, detail: str, hint: str = "") -> dict[str, Any]:
    return {"name": name, "ok": ok, "detail": detail, "hint": "" if ok else hint}


def _python() -> dict[str, Any]:
    ok = sys.version_info >= (3, 10)
    return _check("python", ok, f"{sys.executable} {sys.version.split()[0]}",
                  "sparring needs Python 3.10 or newer")


def _codex() -> list[dict[str, Any]]:
    try:
        executable = codex.find_executable()
    except SparringError as exc:
        return [_check("codex", False, exc.message, exc.hint)]
    found = [_check("codex", True, executable)]
    version = codex.version(executable)
    found.append(_check(
        "codex_version", version is not None,
        f"codex-cli {version} (sparring is tested with {TESTED_CODEX})" if version else
        "`codex --version` gave no version", "reinstall codex: npm install -g @openai/codex"))
    missing = codex.missing_flags(executable)
    detail = "accepts every flag sparring passes" if not missing else "; ".join(
        f"`codex {sub}` lacks {', '.join(flags)}" for sub, flags in missing.items())
    found.append(_check("codex_flags", not missing, detail,
                        f"upgrade codex (sparring is tested with {TESTED_CODEX}): "
                        "npm install -g @openai/codex"))
    return found


def _project(cwd: Path) -> dict[str, Any]:
    root = workspace.find_root(cwd)
    kind = "git repository" if workspace.is_git_checkout(root) else "folder (not git)"
    writable = os.access(root, os.W_OK)
    return _check("project", writable, f"{root} ({kind}); sessions in {root}/.sparring",
                  f"sparring writes its state to {root}/.sparring: make {root} writable")


def _config(cwd: Path) -> dict[str, Any]:
    root = workspace.find_root(cwd)
    try:
        settings = config.load(root)
    except SparringError as exc:
        return _check("config", False, exc.message, exc.hint)
    where = root / config.CONFIG_FILE
    detail = f"{where}: {settings}" if settings else f"no {config.CONFIG_FILE}; defaults apply"
    return _check("config", True, detail)
