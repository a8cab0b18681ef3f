"""What a verb reads: a file, or stdin (`-` or no file), exactly as given.

The skills hand text over through the *inbox*: Claude writes a file with its Write tool into
`.sparring/inbox/` of the directory Claude Code runs in (the one place the skills' `allowed-tools`
let it write), then names it with `--file`. No text ever passes through a shell command line,
so nothing in it (braces with quotes, `$(…)`, backticks, apostrophes) can trip Claude Code's
command checks. A file read from an inbox is *taken*: once the verb has done its job, the file
moves into the session's `inputs/` folder, so the inbox holds only what is still to be handed
in and the next file of the same name is a new one. A verb that fails leaves it in place.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from sparring.errors import SparringError

INBOX_PARTS = (".sparring", "inbox")
INPUTS_DIR = "inputs"

# Inbox files read by the running verb, archived once it succeeds (one verb per process).
_taken: list[Path] = []


def is_stdin(path: Path | None) -> bool:
    return path is None or str(path) == "-"


def read_input(path: Path | None, option: str, stdin: BinaryIO | None = None) -> bytes:
    """Bytes from `path`, or from stdin when it is None or `-` (never from a terminal)."""
    if not is_stdin(path):
        assert path is not None
        data = _read_file(path, option)
        if in_inbox(path):
            _taken.append(path.resolve())
        return data
    stream = stdin if stdin is not None else sys.stdin.buffer
    if stream.isatty():
        raise SparringError("input_empty", "nothing to read: stdin is a terminal",
                            f"write the text to a file and pass {option} FILE")
    return stream.read()


def _read_file(path: Path, option: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise SparringError("file_not_found", f"{path} does not exist",
                            f"check the path given to {option}; a file the runner already "
                            "took from the inbox is in the session's inputs/ folder") from exc
    except OSError as exc:
        raise SparringError("file_not_found", f"cannot read {path}: {exc.strerror}",
                            f"check the path given to {option} and its permissions") from exc


def in_inbox(path: Path) -> bool:
    """True for a file directly inside a `.sparring/inbox/` folder."""
    parent = path.resolve().parent
    return (parent.parent.name, parent.name) == INBOX_PARTS


def archive_taken(session_dir: Path | None) -> list[str]:
    """Move the inbox files this verb read into `session_dir/inputs/` (left in place when
    there is no session). Returns where they went."""
    moved = []
    while _taken:
        source = _taken.pop(0)
        if session_dir is None or not source.is_file():
            continue
        dest_dir = session_dir / INPUTS_DIR
        dest = dest_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{source.name}"
        try:
            dest_dir.mkdir(mode=0o700, exist_ok=True)
            os.replace(source, dest)
            os.chmod(dest, 0o600)  # the session's record, the user's alone like the rest
        except OSError:
            continue  # e.g. another file system: the file stays in the inbox, nothing is lost
        moved.append(str(dest))
    return moved


def forget_taken() -> None:
    """The verb failed: what it read stays in the inbox, to be fixed and handed in again."""
    _taken.clear()


def mapping(raw: bytes, what: str, required: Iterable[str],
            known: Iterable[str] | None = None) -> dict[str, str]:
    """A YAML (or JSON) mapping of text fields with the `required` keys non-empty; with
    `known`, any other key is refused (a typo must not drop a field silently)."""
    import yaml

    required = tuple(required)
    want = f"give a YAML mapping with {', '.join(required)}"
    from sparring.answers import MAX_DEPTH, too_deep

    try:
        data = yaml.safe_load(raw.decode("utf-8", errors="replace"))
    except yaml.YAMLError as exc:
        raise SparringError("usage_error", f"the {what} is not valid YAML: {exc}", want) from exc
    except RecursionError:  # nested too deep for the parser itself
        raise _nested(what, MAX_DEPTH, want) from None
    if too_deep(data):
        raise _nested(what, MAX_DEPTH, want)
    if not isinstance(data, dict):
        raise SparringError("input_empty" if data is None else "usage_error",
                            f"the {what} must be a YAML mapping", want)
    if known is not None:
        unknown = sorted(str(k) for k in data if k not in set(known))
        if unknown:
            raise SparringError("usage_error", f"the {what} has unknown keys: "
                                f"{', '.join(unknown)}", f"known keys: {', '.join(known)}")
    missing = [k for k in required if not _text(data.get(k)).strip()]
    if missing:
        raise SparringError("usage_error", f"the {what} lacks {', '.join(missing)}", want)
    return {str(k): _text(v) for k, v in data.items() if v is not None}


def _nested(what: str, depth: int, want: str) -> SparringError:
    return SparringError("usage_error", f"the {what} is nested more than {depth} levels deep",
                         want)


def _text(value: Any) -> str:
    """A field as text: lists (a common way to write points) become one line each."""
    if isinstance(value, list):
        return "\n".join(f"- {item}" for item in value)
    return "" if value is None else str(value)


def template_variables(
    pairs: Iterable[str], file_pairs: Iterable[str], vars_file: Path | None
) -> dict[str, Any]:
    """A template's variables as a verb was given them: from --vars-file, then --var-file
    KEY=PATH, then --var KEY=VALUE (last wins)."""
    found: dict[str, Any] = _load_vars_file(vars_file) if vars_file else {}
    for key, path in (_split(p, "--var-file") for p in file_pairs):
        found[key] = _read_text(Path(path))
    for key, value in (_split(p, "--var") for p in pairs):
        found[key] = value
    return found


def _split(pair: str, option: str) -> tuple[str, str]:
    key, sep, value = pair.partition("=")
    if not sep or not key.strip():
        raise SparringError("usage_error", f"{option} expects KEY=VALUE, got {pair!r}",
                            f"write {option} QUESTION=… (no spaces around =)")
    return key.strip(), value


def _read_text(path: Path) -> str:
    raw = read_input(path, "--var-file / --vars-file")
    return raw.decode("utf-8", errors="replace")


def _load_vars_file(path: Path) -> dict[str, Any]:
    """A JSON (`.json`) or YAML mapping; `-` reads it from stdin (YAML, which JSON also is)."""
    text = _read_text(path)
    from sparring.answers import parse_bounded, too_deep

    try:
        data = parse_bounded(text) if path.suffix == ".json" else _yaml(text)
        if too_deep(data):
            raise ValueError("nested too deep")
    except ValueError as exc:
        raise SparringError("usage_error", f"{path} is not valid {path.suffix[1:] or 'YAML'}: "
                            f"{exc}", "give a JSON or YAML mapping of NAME: value") from exc
    if not isinstance(data, dict):
        raise SparringError("usage_error", f"{path} must hold a mapping of NAME: value",
                            "give a JSON or YAML mapping of NAME: value")
    return {str(k): v for k, v in data.items()}


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from exc
    except RecursionError:
        raise ValueError("nested too deep") from None
