"""The runtime's sparring as a wheel, made here: no build step, no build backend to fetch.

sparring is pure Python. `pip install SOURCE` would first build it in an isolated
environment, which downloads setuptools (on a fresh machine, most of a first install's
time); a wheel is only a zip of the package's files and a few lines of metadata, so
install.py makes one from the clone, and pip installs it and the dependencies. What goes in
is what pyproject.toml says a build puts in (`packages`, `package-dir`, `package-data`,
`dependencies`, `requires-python`, `scripts`); tests/test_install.py holds the two together.
Standard library only (Python 3.10 has no TOML reader: the few keys are read as written).
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import re
import zipfile
from pathlib import Path

from sparring.installer.core import InstallError

NAME = "sparring"
TAG = "py3-none-any"


def build(root: Path, version: str, folder: Path) -> Path:
    """sparring-VERSION-py3-none-any.whl in `folder`, from the clone at `root`."""
    project = (root / "pyproject.toml").read_text(encoding="utf-8")
    files = package_files(root, project)
    info = f"{NAME}-{version}.dist-info"
    meta = {f"{info}/METADATA": metadata(project, version),
            f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: sparring install.py\n"
                             f"Root-Is-Purelib: true\nTag: {TAG}\n",
            f"{info}/entry_points.txt": entry_points(project),
            f"{info}/top_level.txt": f"{NAME}\n"}
    path = folder / f"{NAME}-{version}-{TAG}.whl"
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, source in sorted(files.items()):
            data = source.read_bytes()
            wheel.writestr(name, data)
            record.append(_record_line(name, data))
        for name, text in meta.items():
            wheel.writestr(name, text)
            record.append(_record_line(name, text.encode()))
        record.append(f"{info}/RECORD,,")
        wheel.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def package_files(root: Path, project: str) -> dict[str, Path]:
    """Each file a build installs, by its path in site-packages."""
    dirs = dict(re.findall(r'"([\w.]+)"\s*=\s*"([^"]+)"', _block(project, "package-dir", "{}")))
    data = {name: re.findall(r'"([^"]+)"', patterns) for name, patterns in re.findall(
        r'^"([\w.]+)" = \[(.*?)\]', _section(project, "tool.setuptools.package-data"), re.M)}
    found: dict[str, Path] = {}
    for package in re.findall(r'"([\w.]+)"', _block(project, "packages", "[]")):
        folder = _folder(root, dirs, package)
        target = package.replace(".", "/")
        for path in sorted(folder.iterdir()):
            if path.is_file() and path.suffix == ".py":
                found[f"{target}/{path.name}"] = path
        for pattern in data.get(package, []):
            for path in sorted(folder.glob(pattern)):
                if path.is_file() and fnmatch.fnmatch(path.relative_to(folder).as_posix(),
                                                      pattern):
                    found[f"{target}/{path.relative_to(folder).as_posix()}"] = path
    return found


def metadata(project: str, version: str) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}"]
    python = re.search(r'^requires-python = "([^"]+)"', project, re.M)
    if python:
        lines.append(f"Requires-Python: {python.group(1)}")
    lines += [f"Requires-Dist: {d}" for d in re.findall(r'"([^"]+)"',
                                                         _block(project, "dependencies", "[]"))]
    return "\n".join(lines) + "\n"


def entry_points(project: str) -> str:
    scripts = re.findall(r'^([\w-]+) = "([\w.:]+)"', _section(project, "project.scripts"), re.M)
    return "[console_scripts]\n" + "".join(f"{n} = {t}\n" for n, t in scripts)


def _folder(root: Path, dirs: dict[str, str], package: str) -> Path:
    """A package's folder: its own package-dir, else its parent's folder and its name."""
    if package in dirs:
        return root / dirs[package]
    parent, _, name = package.rpartition(".")
    if not parent:
        raise InstallError(f"pyproject.toml: no folder for package {package}", "fix the clone")
    return _folder(root, dirs, parent) / name


def _block(project: str, key: str, brackets: str) -> str:
    opened, closed = brackets[0], brackets[1]
    match = re.search(rf"^{re.escape(key)} = {re.escape(opened)}(.*?){re.escape(closed)}",
                      project, re.S | re.M)
    if match is None:
        raise InstallError(f"pyproject.toml has no {key}", "fix the clone")
    return match.group(1)


def _section(project: str, name: str) -> str:
    match = re.search(rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[|\Z)", project, re.S | re.M)
    return match.group(1) if match else ""


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"
