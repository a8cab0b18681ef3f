"""The Claude Code plugin's own runtime, made on its first use in the folder Claude Code keeps
for the plugin's data (`${CLAUDE_PLUGIN_DATA}`, which survives the plugin's updates).

A plugin user has no clone to run install.py from: the plugin's SessionStart hook
(scripts/session-start.sh) tells every Bash call of the session where that folder is
(SPARRING_PLUGIN_DATA), and the launcher, finding no runtime, runs this module once with the
system's `python3` (scripts/plugin_runtime.py). It builds the runtime as install.py does
(installer/runtime.py: a virtual environment, and sparring from a wheel made from the
plugin's own files), then writes the seal (layout.PLUGIN_READY, naming the plugin root it
was built from) last. The launcher runs a plugin runtime only once sealed, for the root it
runs from: a build that failed or was killed leaves no seal, and the next call builds again;
a plugin update (a new root) builds anew. One build at a time, under the runtime's lock: a
second call waits, then finds the seal and builds nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sparring import disk
from sparring.errors import SparringError
from sparring.installer import layout
from sparring.installer.core import InstallError
from sparring.installer.files import PUBLIC
from sparring.installer.runtime import Runtime, build_runtime, probe
from sparring.installer.source import load_source
from sparring.output import failure

VERB = "launcher"  # the envelope the launcher's own errors print


def sealed(data: Path, root: str) -> bool:
    """Whole, for this plugin root: the launcher's test, spelled again (tests/test_plugin_runtime.py
    holds the two together)."""
    seal = data / layout.PLUGIN_READY
    try:
        built = seal.read_text(encoding="utf-8").rstrip("\n")
    except (OSError, UnicodeDecodeError):
        return False
    return built == root and Runtime(data).python.is_file()


def build(root: str, data: Path) -> None:
    """The runtime in `data`, for the plugin at `root` (as the launcher spells it), sealed
    once whole; nothing when another call sealed it meanwhile."""
    runtime = Runtime(data)
    data.mkdir(parents=True, exist_ok=True)
    with disk.locked(runtime.lock):
        if sealed(data, root):
            return
        (data / layout.PLUGIN_READY).unlink(missing_ok=True)  # an older root's: not whole now
        source = load_source(Path(root))
        build_runtime(runtime, source, fresh=True)
        found = probe(runtime.python)
        if found != source.version:
            raise InstallError(f"the runtime built in {runtime.venv} imports sparring "
                               f"{found or '(nothing)'}, not {source.version}",
                               f"read {runtime.log}, then run the skill again")
        disk.write(data / layout.PLUGIN_READY, f"{root}\n".encode(), mode=PUBLIC)


def error(exc: InstallError, data: Path) -> dict[str, object]:
    hint = (f"{exc.hint}; a later call builds it again (nothing half-built is used); or set "
            "SPARRING_PYTHON to a Python that has sparring installed")
    return failure(VERB, SparringError(
        "runtime_build_failed", f"the plugin could not make its runtime in {data}: "
        f"{exc.message}", hint))


def main(argv: list[str]) -> int:
    """`plugin_runtime.py ROOT DATA`: 0 once the runtime is sealed; else one JSON error on
    stdout and 1. pip's own output goes to its log, so the verb's JSON stays alone."""
    root, data = argv[0], Path(argv[1])
    try:
        build(root, data)
    except InstallError as exc:
        sys.stdout.write(json.dumps(error(exc, data)) + "\n")
        return 1
    except OSError as exc:
        sys.stdout.write(json.dumps(error(InstallError(
            str(exc), f"check that {data} is yours and writable"), data)) + "\n")
        return 1
    return 0
