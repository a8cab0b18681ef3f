"""What a verb reads: a file, or stdin (`-` or no file), exactly as given.

The skills hand text over through the *inbox*: Claude writes a file with its Write tool into
`.sparring/inbox/` of the directory Claude Code runs in (the one place the skills' `allowed-tools`
let it write), then names it with `--file`. No text ever passes through a shell command line,
so nothing in it (braces with quotes, `$(…)`, backticks, apostrophes) can trip Claude Code's
command checks. Every file is read through paths.py: inside the project, no
link, a regular file of bounded size, UTF-8. A file read from an inbox is *taken*: once the
verb has done its job, the bytes it read are kept in the session's `inputs/` folder and the
file leaves the inbox, so the inbox holds only what is still to be handed in and the next file
of the same name is a new one. A verb that fails leaves it in place.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from sparring import paths, yamltext
from sparring.answers import MAX_DEPTH, NOT_UNICODE, lone_surrogate, parse_bounded, too_deep
from sparring.errors import SparringError
from sparring.store import locate
from sparring.store.statefile import write_private
from sparring.store.workspace import find_root

INBOX_PARTS = paths.INBOX
INPUTS_DIR = "inputs"

# Inbox files read by the running verb, archived once it succeeds (one verb per process).
_taken: list[paths.Taken] = []


def is_stdin(path: str | Path | None) -> bool:
    return path is None or str(path) == "-"


def project_folder(given: str | Path) -> Path:
    """--cwd: a folder inside the project the command runs in, reached without a link (a
    session made for a folder elsewhere would let Codex work, and sparring write, there)."""
    return paths.folder(given, locate.project_root(os.getcwd()), "--cwd").path


def project_root() -> Path:
    """The project a file argument must lie in: the one Claude Code (or the user) runs in."""
    return find_root(Path.cwd())


def read_input(path: str | Path | None, option: str, stdin: BinaryIO | None = None,
               limit: int = paths.MAX_INPUT_BYTES) -> bytes:
    """Bytes from `path`, or from stdin when it is None or `-` (never from a terminal): a
    regular file inside the project, read through paths.py, or stdin; at
    most `limit` bytes, and UTF-8 text either way (everything handed in is text)."""
    if not is_stdin(path):
        assert path is not None
        taken = paths.read(path, project_root(), option, limit)
        paths.text_of(taken.data, str(path))
        if taken.place.in_inbox:
            _taken.append(taken)
        return taken.data
    stream = stdin if stdin is not None else sys.stdin.buffer
    if stream.isatty():
        raise SparringError("input_empty", "nothing to read: stdin is a terminal",
                            f"write the text to a file and pass {option} FILE")
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise SparringError("file_too_large", f"stdin ({option}) holds more than {limit:,} "
                            "bytes, the most sparring reads", "hand in a shorter text; "
                            "nothing was done", limit=limit)
    paths.text_of(data, f"stdin ({option})")
    return data


def took_any() -> bool:
    """Whether this verb read an inbox file (archive_taken has something to keep)."""
    return bool(_taken)


def archive_taken(session_dir: str | Path | None) -> list[str]:
    """Keep the inbox files this verb read in `session_dir/inputs/` (left in place when
    there is no session): the bytes the verb read, whatever happened to the file since; the
    inbox file goes only if it is still the file that was read. Returns where they went."""
    kept = []
    while _taken:
        taken = _taken.pop(0)
        if session_dir is None:
            continue
        try:
            dest = _keep(Path(session_dir, INPUTS_DIR), taken)
        except OSError:
            continue  # the file stays in the inbox: nothing is lost
        paths.remove_taken(taken)
        kept.append(str(dest))
    return kept


def _keep(folder: Path, taken: paths.Taken) -> Path:
    """A new file in `folder` with `taken`'s bytes, the user's alone like the rest; an
    earlier hand-in of the same name in the same second is kept too (-2, -3, ...)."""
    folder.mkdir(mode=0o700, exist_ok=True)
    stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    name = taken.place.parts[-1]
    for n in range(1, 1000):
        dest = folder / (f"{stem}-{name}" if n == 1 else f"{stem}-{n}-{name}")
        try:
            write_private(dest, taken.data, exclusive=True)
        except FileExistsError:
            continue
        return dest
    raise FileExistsError(f"no free name for {name} in {folder}")


def forget_taken() -> None:
    """The verb failed: what it read stays in the inbox, to be fixed and handed in again."""
    _taken.clear()


def mapping(raw: bytes, what: str, required: Iterable[str],
            known: Iterable[str] | None = None) -> dict[str, str]:
    """A YAML (or JSON) mapping of text fields with the `required` keys non-empty; with
    `known`, any other key is refused (a typo must not drop a field silently)."""
    required = tuple(required)
    want = f"give a YAML mapping with {', '.join(required)}"
    try:
        data = yamltext.load(paths.text_of(raw, f"the {what}"))
    except ValueError as exc:
        raise SparringError("usage_error", f"the {what} is not valid YAML: {exc}", want) from exc
    except RecursionError:  # nested too deep for the parser itself
        raise _nested(what, MAX_DEPTH, want) from None
    if too_deep(data):
        raise _nested(what, MAX_DEPTH, want)
    if lone_surrogate(data):
        raise SparringError("usage_error", f"the {what} {NOT_UNICODE}", want)
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
    pairs: Iterable[str], file_pairs: Iterable[str], vars_file: str | Path | None
) -> dict[str, Any]:
    """A template's variables as a verb was given them: from --vars-file, then --var-file
    KEY=PATH, then --var KEY=VALUE (last wins)."""
    found: dict[str, Any] = _load_vars_file(vars_file) if vars_file else {}
    for key, path in (_split(p, "--var-file") for p in file_pairs):
        found[key] = _read_text(Path(path), "--var-file")
    for key, value in (_split(p, "--var") for p in pairs):
        found[key] = value
    return found


def _split(pair: str, option: str) -> tuple[str, str]:
    key, sep, value = pair.partition("=")
    if not sep or not key.strip():
        raise SparringError("usage_error", f"{option} expects KEY=VALUE, got {pair!r}",
                            f"write {option} QUESTION=… (no spaces around =)")
    return key.strip(), value


def _read_text(path: Path, option: str) -> str:
    return read_input(path, option).decode("utf-8")  # read_input let only UTF-8 through


def _load_vars_file(given: str | Path) -> dict[str, Any]:
    """A JSON (`.json`) or YAML mapping; `-` reads it from stdin (YAML, which JSON also is)."""
    path = Path(given)
    text = _read_text(path, "--vars-file")
    try:
        data = parse_bounded(text) if path.suffix == ".json" else _yaml(text)
        if too_deep(data):
            raise ValueError("nested too deep")
        if lone_surrogate(data):
            raise ValueError(NOT_UNICODE)
    except ValueError as exc:
        raise SparringError("usage_error", f"{path} is not valid {path.suffix[1:] or 'YAML'}: "
                            f"{exc}", "give a JSON or YAML mapping of NAME: value") from exc
    if not isinstance(data, dict):
        raise SparringError("usage_error", f"{path} must hold a mapping of NAME: value",
                            "give a JSON or YAML mapping of NAME: value")
    return {str(k): v for k, v in data.items()}


def _yaml(text: str) -> Any:
    try:
        return yamltext.load(text)
    except RecursionError:
        raise ValueError("nested too deep") from None
