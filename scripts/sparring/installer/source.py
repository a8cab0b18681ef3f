"""This clone: the skills it installs and what the runtime is built from."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

from sparring.installer.core import FileSpec, InstallError, Skill, Source

# -- hashing and the source ----------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _walk_files(top: Path) -> Iterator[Path]:
    """Every file under `top`, following links (the repo links references and the launcher
    into each skill), sorted; a broken link is an error, not a silent gap."""
    seen: set[Path] = set()
    stack = [top]
    while stack:
        folder = stack.pop()
        if folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        for entry in sorted(folder.iterdir(), reverse=True):
            if entry.name == "__pycache__" or entry.suffix == ".pyc":
                continue
            if entry.is_dir():
                stack.append(entry)
            elif entry.is_file():
                yield entry
            else:
                raise InstallError(f"broken link in the source: {entry}",
                                   "fix the clone (`git status`, `git checkout -- .`)")


def load_skill(folder: Path) -> Skill:
    files = {}
    for path in _walk_files(folder):
        real = path.resolve()
        files[path.relative_to(folder).as_posix()] = FileSpec(
            real, sha256_of(real), bool(real.stat().st_mode & 0o111))
    return Skill(folder.name, dict(sorted(files.items())))


def read_version(root: Path) -> str:
    text = (root / "scripts" / "sparring" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if not match:
        raise InstallError("no __version__ in scripts/sparring/__init__.py", "fix the clone")
    return match.group(1)


def runtime_inputs(root: Path) -> list[Path]:
    """What the runtime's wheel is made from (installer/wheel.py). Not this installer: it
    does not change what the runtime does."""
    installer = root / "scripts" / "sparring" / "installer"
    files = [root / "pyproject.toml"]
    for top in (root / "scripts" / "sparring", root / "templates"):
        files.extend(f for f in _walk_files(top) if installer not in f.parents)
    return files


def digest_of(root: Path, files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_of(path)}\n".encode())
    return digest.hexdigest()


def load_source(root: Path) -> Source:
    if not (root / "pyproject.toml").is_file() or not (root / "skills").is_dir():
        raise InstallError(f"{root} is not a sparring clone",
                           "run install.py from the root of a clone of sparring")
    # A folder without SKILL.md is not a skill (yet): Claude Code would ignore it.
    skills = [load_skill(d) for d in sorted((root / "skills").iterdir())
              if (d / "SKILL.md").is_file()]
    return Source(root, read_version(root), skills, digest_of(root, runtime_inputs(root)))

