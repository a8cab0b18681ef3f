"""How we call the real `codex` CLI (facts from the Codex CLI reference).

- `codex exec` has no approval flag; it always runs with approval `never`.
- The prompt goes on stdin from a file (`-`), which always reaches end-of-file.
- Resume is by explicit thread id only, never `--last`; `-s` must come
  before `resume` and `-C` has no resume form, so the process cwd is set.
- Every setting a turn passes codex is a row of config.TURN_SETTINGS.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sparring import config
from sparring.codex import sandbox
from sparring.errors import TURN_HINTS, SparringError
from sparring.process import spawn
from sparring.store import locate

INSTALL_HINT = TURN_HINTS["codex_not_found"]
LOGIN_HINT = ("log Codex in: run `codex login` (a ChatGPT account) or "
              "`printenv OPENAI_API_KEY | codex login --with-api-key` (an API key)")


# `codex exec` 0.169.0 refuses a prompt longer than this many characters (Unicode scalar
# values, not bytes) after opening the thread, and records no rollout for it.
MAX_PROMPT_CHARS = 1_048_576
PROMPT_TOO_LARGE = "input_too_large"  # the `input_error_code` codex prints when it refuses


def check_prompt(prompt: bytes, what: str = "the prompt") -> None:
    """Refuse, before codex starts, a prompt codex would refuse: `prompt_too_large` names the
    limit and the size, and nothing has been recorded or started."""
    size = len(prompt.decode("utf-8", errors="replace"))
    if size > MAX_PROMPT_CHARS:
        raise SparringError(
            "prompt_too_large",
            f"{what} has {size:,} characters; codex accepts at most {MAX_PROMPT_CHARS:,}",
            "shorten what goes into it (the round, the response, the search results or the "
            "file handed in) and run the command again; nothing was started and the session "
            "is as it was", size=size, limit=MAX_PROMPT_CHARS)


def find_executable() -> str:
    """The codex the user chose (SPARRING_CODEX, else PATH); never one the project's Claude
    Code settings chose, which would run here at once (`--version`), nor one that lies in
    the project (sandbox.codex_in_project)."""
    cwd = os.getcwd()
    root = Path(locate.project_root(cwd))
    chosen = sandbox.codex_chosen_by_project(root, Path(cwd))
    if chosen is not None:
        raise chosen
    configured = os.environ.get("SPARRING_CODEX")
    if configured:
        path = shutil.which(configured)
        if path is None:
            raise SparringError(
                "codex_not_found",
                f"SPARRING_CODEX is set to {configured!r}, which is not an executable",
                "point SPARRING_CODEX at the codex executable, or unset it to use PATH",
            )
    else:
        path = shutil.which("codex")
        if path is None:
            raise SparringError("codex_not_found", "codex was not found on PATH", INSTALL_HINT)
    inside = sandbox.codex_in_project(path, root, Path(cwd))
    if inside is not None:
        raise inside
    return path


# Words of codex's command line that are no setting's: sparring's own, in every turn (the
# settings' come from config.TURN_SETTINGS). Bare flags, then flags with a value, and how
# `codex exec --help` spells the latter.
BARE = ("--json", "--skip-git-repo-check")
SCHEMA, CWD = "--output-schema", "-C"
_LONG = {SCHEMA: SCHEMA, CWD: "--cd"}


def exec_argv(executable: str, *, cwd: Path, settings: Mapping[str, Any],
              thread_id: str | None, output_schema: Path | None) -> list[str]:
    """argv for one turn (`thread_id` set: resume it); the prompt is read from stdin (`-`).
    Each setting with a codex argument adds its words (none when its value is None: codex's
    own configuration); one of `codex exec` itself goes before `resume`."""
    common, before = [*BARE], list[str]()
    for row in config.TURN_SETTINGS:
        if row.codex is not None and settings[row.name] is not None:
            (before if row.codex.exec_only else common).extend(
                row.codex.words(settings[row.name]))
    if output_schema:
        common += [SCHEMA, str(output_schema)]
    if thread_id:
        return [executable, "exec", *before, "resume", thread_id, *common, "-"]
    return [executable, "exec", *common, *before, CWD, str(cwd), "-"]


def flags(resume: bool) -> tuple[str, ...]:
    """The flags exec_argv passes to `codex exec` (or to its `resume`), as its help spells
    them: doctor checks this codex lists each."""
    rows = [r.codex for r in config.TURN_SETTINGS if r.codex is not None
            and not (resume and r.codex.exec_only)]
    return tuple(dict.fromkeys((*BARE, *(r.long for r in rows), _LONG[SCHEMA],
                                *(() if resume else (_LONG[CWD],)))))


# The oldest codex sparring drives: every command line it builds is accepted, and its events
# are tagged with `type` (measured against each release's binary and the loopback mock:
# 0.131.0 rejects `--output-schema` after `exec resume`, 0.132.0 takes sparring's `exec` and
# `exec resume` command lines whole; 0.42.0 and older print `{"id", "msg"}` lines).
MINIMUM_VERSION = "0.132.0"
UPGRADE = "npm install -g @openai/codex@latest"
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-(?:alpha|beta|rc)(?:\.\d+)*)?")


def version(executable: str) -> str | None:
    """`0.169.0`, or None when codex cannot say. From the npm package codex was installed
    from when it lies beside it (its package.json; reading it takes a fraction of a
    millisecond where `codex --version` through npm's Node launcher takes about 90 ms, and
    `start` asks before every first round), else from `codex --version`."""
    return _packaged(executable) or _asked(executable)


def _packaged(executable: str) -> str | None:
    """The version of the `@openai/codex` package (or its platform package) the real
    executable lies in: npm's `.bin/codex` leads to `@openai/codex/bin/codex.js`, the native
    binary lies in `@openai/codex-<platform>/vendor/…` (`0.171.0-linux-x64`)."""
    folder = os.path.dirname(os.path.realpath(executable))
    for _ in range(6):
        try:
            with open(os.path.join(folder, "package.json"), "rb") as f:
                found = json.loads(f.read(1 << 20))
        except (OSError, ValueError):
            found = None
        if isinstance(found, dict) and found.get("name") == "@openai/codex":
            match = _VERSION.match(str(found.get("version", "")))
            return match.group(0) if match else None
        folder = os.path.dirname(folder)
    return None


def _asked(executable: str) -> str | None:
    """`0.169.0` from `codex-cli 0.169.0`."""
    try:
        done = spawn.run([executable, "--version"], timeout=20)
    except (OSError, spawn.TimeoutExpired):
        return None
    match = _VERSION.search(done.stdout)
    return match.group(0) if match else None


def too_old(found: str | None) -> bool:
    """Whether `found` is older than MINIMUM_VERSION (a pre-release counts as its release;
    a version codex cannot say is not judged here)."""
    if found is None or not _VERSION.match(found):
        return False
    def numbers(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("-")[0].split("."))
    return numbers(found) < numbers(MINIMUM_VERSION)


def require_supported(executable: str, found: str | None) -> None:
    """Refuse, before anything starts, a codex older than sparring drives."""
    if too_old(found):
        raise SparringError(
            "codex_too_old", f"codex {found} ({executable}) is older than {MINIMUM_VERSION}, "
            "the oldest release sparring drives", TURN_HINTS["codex_too_old"],
            version=found, minimum=MINIMUM_VERSION)


def efforts(executable: str) -> dict[str, list[str]] | None:
    """The reasoning efforts each model of this codex's own catalog accepts (`codex debug
    models --bundled`: what ships with the binary, no network), or None when it cannot
    say."""


    try:
        done = spawn.run([executable, "debug", "models", "--bundled"], timeout=30)
        models = json.loads(done.stdout).get("models")
    except (OSError, spawn.TimeoutExpired, ValueError, AttributeError):
        return None
    if not isinstance(models, list):
        return None
    return {str(m.get("slug")): [str(level.get("effort")) for level in
                                 m.get("supported_reasoning_levels") or []
                                 if isinstance(level, dict)]
            for m in models if isinstance(m, dict) and m.get("slug")}


def configured_model() -> str | None:
    """The top-level `model` of Codex's config.toml, when it sets one."""
    return _top_level("model")


def missing_flags(executable: str) -> dict[str, list[str]]:
    """Flags we pass that this codex's help does not list, per subcommand."""
    missing: dict[str, list[str]] = {}
    for name, argv, wanted in (
        ("exec", [executable, "exec", "--help"], flags(resume=False)),
        ("exec resume", [executable, "exec", "resume", "--help"], flags(resume=True)),
    ):
        try:
            text = spawn.run(argv, timeout=20).stdout
        except (OSError, spawn.TimeoutExpired):
            text = ""
        absent = [flag for flag in wanted if not re.search(rf"(^|[\s,]){flag}\b", text, re.M)]
        if absent:
            missing[name] = absent
    return missing


def home() -> Path:
    """Codex's own folder: CODEX_HOME, else ~/.codex."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def configured_provider() -> str | None:
    """The top-level `model_provider` of Codex's config.toml, when it sets one (a custom
    provider authenticates with its own `env_key`, not with `codex login`)."""
    return _top_level("model_provider")


def _top_level(key: str) -> str | None:
    """A top-level string setting of Codex's config.toml, before its first table."""
    try:
        text = (home() / "config.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    top = re.split(r"^\s*\[", text, maxsplit=1, flags=re.M)[0]  # before the first table
    match = re.search(rf"""^\s*{key}\s*=\s*["']([^"']+)["']""", top, re.M)
    return match.group(1) if match else None


def login_status(executable: str) -> tuple[bool, str]:
    """`codex login status`: whether Codex has credentials, and what it says (it prints on
    stderr; it reads only CODEX_HOME, no network)."""
    try:
        done = spawn.run([executable, "login", "status"], timeout=20)
    except (OSError, spawn.TimeoutExpired) as exc:
        return False, f"`codex login status` did not answer: {exc}"
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines()
             if line.strip() and not line.startswith("WARNING:")]
    said = lines[0] if lines else f"`codex login status` exited with {done.returncode}"
    return done.returncode == 0, said
