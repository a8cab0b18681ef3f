"""How we call the real `codex` CLI (facts from the Codex CLI reference).

- `codex exec` has no approval flag; it always runs with approval `never`.
- The prompt goes on stdin from a file (`-`), which always reaches end-of-file.
- Resume is by explicit thread id only, never `--last`; `-s` must come
  before `resume` and `-C` has no resume form, so the process cwd is set.

Light at import (what it needs is imported where it is needed): every round's poll
(cli/entry.py) reads Codex's events with codex/events.py, which loads this package first.
"""

from __future__ import annotations

import os
import re

from sparring.errors import TURN_HINTS, SparringError
from sparring.store import locate

TYPE_CHECKING = False  # typing costs every round's call 4 ms of a 10-20 ms Python start
if TYPE_CHECKING:
    from pathlib import Path

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
    import shutil
    from pathlib import Path

    from sparring.codex import sandbox

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


def exec_argv(executable: str, *, cwd: Path, effort: str, sandbox: str, model: str | None,
              thread_id: str | None, output_schema: Path | None) -> list[str]:
    """argv for one turn (`thread_id` set: resume it); the prompt is read from stdin (`-`)."""
    common = ["--json", "--skip-git-repo-check", "-c", f"model_reasoning_effort={effort}"]
    if model:
        common += ["-m", model]
    if output_schema:
        common += ["--output-schema", str(output_schema)]
    if thread_id:
        return [executable, "exec", "-s", sandbox, "resume", thread_id, *common, "-"]
    return [executable, "exec", *common, "-s", sandbox, "-C", str(cwd), "-"]


# Flags `exec_argv` passes, per subcommand, as `codex exec --help` spells them.
EXEC_FLAGS = ("--json", "--skip-git-repo-check", "--config", "--model", "--output-schema",
              "--sandbox", "--cd")
RESUME_FLAGS = ("--json", "--skip-git-repo-check", "--config", "--model", "--output-schema")


def version(executable: str) -> str | None:
    """`0.169.0` from `codex-cli 0.169.0`, or None when codex cannot say."""
    from sparring.process import spawn

    try:
        done = spawn.run([executable, "--version"], timeout=20)
    except (OSError, spawn.TimeoutExpired):
        return None
    match = re.search(r"(\d+\.\d+\.\d+\S*)", done.stdout)
    return match.group(1) if match else None


def missing_flags(executable: str) -> dict[str, list[str]]:
    """Flags we pass that this codex's help does not list, per subcommand."""
    from sparring.process import spawn

    missing: dict[str, list[str]] = {}
    for name, argv, flags in (
        ("exec", [executable, "exec", "--help"], EXEC_FLAGS),
        ("exec resume", [executable, "exec", "resume", "--help"], RESUME_FLAGS),
    ):
        try:
            text = spawn.run(argv, timeout=20).stdout
        except (OSError, spawn.TimeoutExpired):
            text = ""
        absent = [flag for flag in flags if not re.search(rf"(^|[\s,]){flag}\b", text, re.M)]
        if absent:
            missing[name] = absent
    return missing


def home() -> Path:
    """Codex's own folder: CODEX_HOME, else ~/.codex."""
    from pathlib import Path

    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def configured_provider() -> str | None:
    """The top-level `model_provider` of Codex's config.toml, when it sets one (a custom
    provider authenticates with its own `env_key`, not with `codex login`)."""
    try:
        text = (home() / "config.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    top = re.split(r"^\s*\[", text, maxsplit=1, flags=re.M)[0]  # before the first table
    match = re.search(r"""^\s*model_provider\s*=\s*["']([^"']+)["']""", top, re.M)
    return match.group(1) if match else None


def login_status(executable: str) -> tuple[bool, str]:
    """`codex login status`: whether Codex has credentials, and what it says (it prints on
    stderr; it reads only CODEX_HOME, no network)."""
    from sparring.process import spawn

    try:
        done = spawn.run([executable, "login", "status"], timeout=20)
    except (OSError, spawn.TimeoutExpired) as exc:
        return False, f"`codex login status` did not answer: {exc}"
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines()
             if line.strip() and not line.startswith("WARNING:")]
    said = lines[0] if lines else f"`codex login status` exited with {done.returncode}"
    return done.returncode == 0, said
