"""Locating the real Codex CLI and Claude Code binaries for integration tests.

Lookup order: the environment variable(s), then `<prefix>/node_modules/.bin/`
under the repository root (`.ci/node`, `.ci/node197` for Claude Code 2.1.197 and
`.ci/node131` for codex 0.131.0), where `.ci/run` installs the pins. Never PATH: a
user's machine may have any Claude Code or Codex installed globally, and a test drives
the pinned one or skips. With a version, only a binary whose `--version` reports it is
accepted (`claude --version` → `2.1.332 (Claude Code)`).
"""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

CODEX_VERSION = "0.171.0"
CODEX_OLD_VERSION = "0.131.0"  # the last release below the oldest sparring drives
CLAUDE_VERSION = "2.1.332"
CLAUDE_OLD_VERSION = "2.1.197"
VERSION_PROBE_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class BinarySpec:
    """Where to look for one binary, and what to tell the user when it is missing."""

    label: str
    executable: str
    env_vars: tuple[str, ...]
    npm_package: str
    ci_prefixes: tuple[str, ...]  # npm prefixes relative to the repository root
    version: str | None = None  # required `--version`, or None for any

    def candidates(self) -> list[Path]:
        paths = [Path(v) for v in (os.environ.get(e, "").strip() for e in self.env_vars) if v]
        bin_dirs = (REPO_ROOT / p / "node_modules" / ".bin" for p in self.ci_prefixes)
        paths.extend(d / self.executable for d in bin_dirs)
        return paths

    def find(self) -> Path | None:
        for path in self.candidates():
            if _is_executable(path) and self.version in (None, binary_version(path)):
                return path
        return None

    def missing_reason(self) -> str:
        return (
            f"real {self.label} CLI not found; run .ci/run or "
            f"npm install --prefix {self.ci_prefixes[0]} {self.npm_package}; "
            f"set {self.env_vars[0]}"
        )


CODEX = BinarySpec(
    "codex", "codex", ("SPARRING_TEST_CODEX",), f"@openai/codex@{CODEX_VERSION}", (".ci/node",)
)
CODEX_OLD = BinarySpec(
    f"codex {CODEX_OLD_VERSION}", "codex", ("SPARRING_TEST_CODEX_131",),
    f"@openai/codex@{CODEX_OLD_VERSION}", (".ci/node131",), version=CODEX_OLD_VERSION,
)
CLAUDE = BinarySpec(
    "claude",
    "claude",
    ("SPARRING_TEST_CLAUDE",),
    f"@anthropic-ai/claude-code@{CLAUDE_VERSION}",
    (".ci/node",),
)
CLAUDE_OLD = BinarySpec(
    f"claude {CLAUDE_OLD_VERSION}",
    "claude",
    ("SPARRING_TEST_CLAUDE_197", "SPARRING_TEST_CLAUDE"),
    f"@anthropic-ai/claude-code@{CLAUDE_OLD_VERSION}",
    (".ci/node197", ".ci/node"),
    version=CLAUDE_OLD_VERSION,
)
SPECS: dict[str, BinarySpec] = {spec.label: spec
                                 for spec in (CODEX, CODEX_OLD, CLAUDE, CLAUDE_OLD)}


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


@functools.cache
def binary_version(path: Path) -> str | None:
    """`0.169.0` from `codex-cli 0.169.0`, `2.1.330` from `2.1.332 (Claude Code)`; else None."""
    try:
        proc = subprocess.run(
            [str(path), "--version"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=VERSION_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = proc.stdout.replace("codex-cli", "").split()
    return words[0] if proc.returncode == 0 and words else None


def find_codex(version: str | None = None) -> Path | None:
    """The real `codex` (SPARRING_TEST_CODEX, .ci/node), or None; with CODEX_OLD_VERSION,
    codex 0.131.0 (SPARRING_TEST_CODEX_131, .ci/node131)."""
    return CODEX_OLD.find() if version == CODEX_OLD_VERSION else CODEX.find()


def find_claude(version: str | None = None) -> Path | None:
    """The real `claude`, or None; with `version`, only a binary reporting that version.

    2.1.197 is looked up via SPARRING_TEST_CLAUDE_197 and `.ci/node197` first.
    """
    if version == CLAUDE_OLD_VERSION:
        return CLAUDE_OLD.find()
    if version is None:
        return CLAUDE.find()
    return BinarySpec(
        f"claude {version}",
        "claude",
        CLAUDE.env_vars,
        f"@anthropic-ai/claude-code@{version}",
        CLAUDE.ci_prefixes,
        version=version,
    ).find()


def missing_reason(name: str) -> str:
    spec = SPECS.get(name)
    if spec is None:
        return f"real {name} CLI not found on PATH"
    return spec.missing_reason()


def require_binary(name: str, path: Path | None, *, required_in_ci: bool = True) -> Path:
    """Return `path`; if it is None skip the test, or fail it when CI=true.

    `name` is a label of SPECS (`codex`, `codex 0.131.0`, `claude`, `claude 2.1.197`), used for the
    reason. `required_in_ci=False` keeps an optional binary a skip even on CI.
    """
    if path is not None:
        return path
    missing(missing_reason(name), required_in_ci=required_in_ci)


def missing(reason: str, *, required_in_ci: bool = True) -> NoReturn:
    """Skip the test for what the machine lacks, or fail it when CI=true (where `.ci/run`
    installed everything the suite needs)."""
    if required_in_ci and os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)
