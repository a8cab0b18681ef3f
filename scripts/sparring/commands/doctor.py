"""`sparring doctor`: is everything sparring needs in place? A verdict with hints.

Two kinds of check. A blocking one failing (`level` "problem") means a debate cannot run:
doctor says "not ready", and the skills stop and tell the user its hint. An advisory one
failing (`level` "warning") means it runs, less well: Claude Code will ask before runner
calls after a skill's first turn, the skills are installed twice, an update waits. Each check
says what it saw (`detail`) and what to do (`hint`).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

from sparring import __version__, claude, codex, config, process
from sparring.codex import sandbox
from sparring.errors import Hint, SparringError
from sparring.installer import claude_code, survey
from sparring.output import EXIT_FAILED, EXIT_OK, Answer, Text, with_status
from sparring.quoting import shell_word
from sparring.store import witness, workspace
from sparring.store.inputs import project_folder

TESTED_CODEX = "0.171.0"
# The checks a debate runs without: failing, they warn (the rest are blocking). A codex
# older than sparring drives is blocking all the same (`blocking`).
ADVISORY = frozenset({"codex_version", "codex_efforts", "duplicates", "updates",
                      "permissions", "claude_code"})


def doctor(here: str, cwd: str, as_json: bool | None, inbox: bool, full: bool
           ) -> Answer | Text:
    """`sparring doctor`: JSON, or text on a terminal (`as_json` None) or when asked; with
    `inbox` (the skills' call) only what they act on, unless `full`. It exits EXIT_FAILED
    when not ready, so that a script can test it."""
    result = checked(project_folder(cwd), inbox)
    if as_json is None:
        as_json = not sys.stdout.isatty()
    shown = brief(result, inbox and not full) if as_json else \
        Text(as_text(result, min(shutil.get_terminal_size().columns, 100)))
    return with_status(shown, EXIT_OK if result["ready"] else EXIT_FAILED)


def checked(cwd: Path, inbox: bool = False) -> dict[str, Any]:
    """Every check; with `inbox`, the inbox made ready for Claude to write (the skills ask
    for it; a person's doctor, or install.py's, creates nothing)."""
    checks = [_python(), _processes()]
    checks += _codex()
    checks.append(_project(cwd))
    checks.append(_records(cwd))
    checks.append(_config(cwd))
    checks.append(_containment(cwd))
    places = survey.places(workspace.find_root(cwd))
    checks.append(survey.skills(places))
    checks.append(survey.duplicates(places))
    checks.append(survey.updates(places))
    checks.append(survey.permissions(places))
    checks.append(survey.runtime(places))
    checks.append(_claude_code())
    checks.append(_claude_model())
    checks = [{**{k: v for k, v in found.items() if k != "blocking"}, "level": _level(found)}
              for found in checks]
    problems = [c for c in checks if c["level"] == "problem"]
    warnings = [c for c in checks if c["level"] == "warning"]
    return {
        "ready": not problems,
        "verdict": _verdict(problems, warnings),
        "sparring": __version__,
        "checks": checks,
        "hints": [c["hint"] for c in problems],
        "warnings": [c["hint"] for c in warnings],
        "inbox": _inbox(inbox),
    }


def brief(result: dict[str, Any], short: bool) -> dict[str, Any]:
    """What a skill acts on before a debate: ready or not, what to fix, the inbox (`--full`
    and the text form keep every check)."""
    if not short:
        return result
    return {key: value for key, value in result.items() if key not in ("checks", "sparring")}


def _level(found: dict[str, Any]) -> str:
    """ok; else problem (a debate cannot run) or warning (it runs, less well)."""
    if found["ok"]:
        return "ok"
    return "warning" if found["name"] in ADVISORY and not found.get("blocking") else "problem"


def _verdict(problems: list[dict[str, Any]], warnings: list[dict[str, Any]]) -> str:
    if problems:
        return f"not ready: {len(problems)} problem(s); fix them in the order listed"
    if warnings:
        return f"ready, with {len(warnings)} warning(s): a debate runs; see their hints"
    return "ready"


def _inbox(create: bool) -> str:
    """Where the skills write files for the runner; made ready (self-ignoring) when asked
    and we can: an unwritable folder shows up in the `project` check, not as a failed doctor."""
    if create:
        try:
            return str(workspace.inbox_dir(Path.cwd(), create=True))
        except SparringError:
            pass
    return str(workspace.inbox_dir(Path.cwd()))


# -- for a person: the same verdict, as text ---------------------------------------------------


def as_text(result: dict[str, Any], width: int = 100) -> str:
    """The verdict, one line per check (its hint below it when it failed), then what next."""
    label = {"ok": "ok", "warning": "warning", "problem": "PROBLEM"}
    lines = [*_wrapped(f"sparring {result['sparring']} doctor: {result['verdict']}", width,
                       "", "  "), ""]
    indent = " " * 25
    for found in result["checks"]:
        head = f"  {label[found['level']]:<8} {found['name']:<13} "
        lines += _wrapped(found["detail"] or "-", width, head, indent)
        if found["hint"]:
            lines += _wrapped(found["hint"], width, indent + "-> ", indent + "   ")
    first = result["hints"][:1] or result["warnings"][:1]
    if first:
        lines += ["", *_wrapped(f"Next: {first[0]}", width, "", "  ")]
    return "\n".join(lines) + "\n"


def _wrapped(text: str, width: int, first: str, rest: str) -> list[str]:
    """`text` wrapped at spaces only, and never inside a `command`: a path or a command
    longer than the line stays whole (to copy and paste), never cut mid-word or at a hyphen."""
    held = re.sub(r"`[^`]*`", lambda code: code[0].replace(" ", _HELD), text)
    return [line.replace(_HELD, " ") for line in textwrap.wrap(
        held, width, initial_indent=first, subsequent_indent=rest,
        break_long_words=False, break_on_hyphens=False)]


_HELD = "\xa0"  # a space textwrap does not break at (it breaks at ASCII whitespace only)


def _check(name: str, ok: bool, detail: str, hint: str = "") -> dict[str, Any]:
    # The detail may quote what codex or a file said (data); the hint is sparring's own.
    return {"name": name, "ok": ok, "detail": detail, "hint": Hint("" if ok else hint)}


def _python() -> dict[str, Any]:
    ok = sys.version_info >= (3, 10)
    return _check("python", ok, f"{sys.executable} {sys.version.split()[0]}",
                  "sparring needs Python 3.10 or newer")


def _processes() -> dict[str, Any]:
    try:
        name, how = process.mechanism()
    except SparringError as exc:
        return _check("processes", False, exc.message, exc.hint)
    return _check("processes", True, f"{name} backend: {how}")


def _codex() -> list[dict[str, Any]]:
    try:
        executable = codex.find_executable()
    except SparringError as exc:
        if os.environ.get("SPARRING_CODEX"):
            return [_check("codex", False, exc.message, exc.hint)]
        return [_check("codex", False, exc.message, "install Codex: `npm install -g "
                       "@openai/codex` (or set SPARRING_CODEX to it), then log it in: "
                       "`codex login`")]
    found = [_check("codex", True, executable), _version(executable)]
    missing = codex.missing_flags(executable)
    detail = "accepts every flag sparring passes" if not missing else "; ".join(
        f"`codex {sub}` lacks {', '.join(flags)}" for sub, flags in missing.items())
    found.append(_check("codex_flags", not missing, detail,
                        f"upgrade codex (sparring is tested with {TESTED_CODEX}): "
                        f"`{codex.UPGRADE}`"))
    found.append(_efforts(executable))
    found.append(_login(executable))
    return found


def _version(executable: str) -> dict[str, Any]:
    """Its version: older than sparring drives is a problem (start refuses it too), none
    given a warning."""
    version = codex.version(executable)
    if version is None:
        return _check("codex_version", False, "`codex --version` gave no version",
                      f"reinstall codex: `{codex.UPGRADE}`")
    if codex.too_old(version):
        return {**_check("codex_version", False, f"codex-cli {version} is older than "
                         f"{codex.MINIMUM_VERSION}, the oldest release sparring drives",
                         f"upgrade codex: `{codex.UPGRADE}`"), "blocking": True}
    return _check("codex_version", True, f"codex-cli {version} (sparring drives "
                  f"{codex.MINIMUM_VERSION} and newer, and is tested with {TESTED_CODEX})")


def _efforts(executable: str) -> dict[str, Any]:
    """The efforts sparring offers (--effort, sparring.yaml), against those this codex's
    catalog accepts for the model turns run (config.toml's `model`, else any it knows): an
    effort it does not know fails the turn (codex 0.132) or is sent as another."""
    catalog = codex.efforts(executable)
    if not catalog:
        return _check("codex_efforts", False, "`codex debug models --bundled` listed no "
                      "model", "check that codex runs: `codex debug models --bundled`")
    model = codex.configured_model()
    accepted = catalog.get(model or "") or list(dict.fromkeys(
        effort for levels in catalog.values() for effort in levels))
    which = f"{model} (Codex's config.toml)" if model in catalog else "the models it knows"
    lacking = [effort for effort in config.EFFORTS if effort not in accepted]
    return _check("codex_efforts", not lacking, f"codex accepts {', '.join(accepted)} for "
                  f"{which}; sparring offers {', '.join(config.EFFORTS)}",
                  f"a turn asked for {', '.join(lacking)} fails or runs at another effort: "
                  f"choose another --effort, or upgrade codex (`{codex.UPGRADE}`)")


def _login(executable: str) -> dict[str, Any]:
    """Has Codex credentials? Without them every turn fails (or retries) at its first
    request; `codex login status` tells without the network."""
    provider = codex.configured_provider()
    if provider is not None and provider != "openai":
        return _check("codex_login", True, f"model provider {provider!r} from "
                      f"{codex.home() / 'config.toml'}: it uses its own key, not `codex login`")
    if os.environ.get("CODEX_API_KEY"):
        return _check("codex_login", True, "CODEX_API_KEY is set; codex uses it")
    ok, said = codex.login_status(executable)
    return _check("codex_login", ok, f"{said} (`codex login status`, CODEX_HOME "
                  f"{codex.home()})", codex.LOGIN_HINT)


def _project(cwd: Path) -> dict[str, Any]:
    root = workspace.find_root(cwd)
    kind = "git repository" if workspace.is_git_checkout(root) else "folder (not git)"
    writable = os.access(root, os.W_OK)
    return _check("project", writable, f"{root} ({kind}); sessions in {root}/.sparring",
                  f"sparring writes its state to {root}/.sparring: make {root} writable")


def _records(cwd: Path) -> dict[str, Any]:
    """Where sparring keeps its own copy of its records (store/witness.py): out of the reach
    of a sandbox that lets Codex write the project. In a project that holds it (the home
    folder, `/`) a read-only Codex cannot write it: a problem only when the user allows
    more (a workspace-write turn would not start there: sandbox.gate)."""
    root = workspace.find_root(cwd)
    place = witness.folder(root)
    if not witness.within(root):
        return _check("records", True,
                      f"sparring's copy of its records: {place} (outside the project)")
    try:
        allowed = sandbox.allowance(root, cwd.resolve()).mode
    except SparringError as exc:
        return _check("records", False, exc.message, exc.hint)
    detail = f"{place} is inside the project {root}"
    if allowed == sandbox.DEFAULT:
        return _check("records", True, f"{detail}; Codex cannot write it: the user allows "
                      f"at most {allowed}")
    return _check("records", False, f"{detail}, and the user allows {allowed}",
                  f"a sandbox that lets Codex write the project could write {place} too: set "
                  "XDG_STATE_HOME (in your shell's profile) to a folder outside the project")


def _config(cwd: Path) -> dict[str, Any]:
    """sparring.yaml, and the sandbox a turn would run in (what the user allows, narrowed by
    the file): a file asking for more than the user allows fails every start, so says so."""
    root = workspace.find_root(cwd)
    where = root / config.CONFIG_FILE
    try:
        settings = config.load(root)
        chosen = sandbox.decide(sandbox.allowance(root, cwd.resolve()), None,
                                settings.get("sandbox"), None, where)
    except SparringError as exc:
        return _check("config", False, exc.message, exc.hint)
    detail = f"{where}: {settings}" if settings else f"no {config.CONFIG_FILE}; defaults apply"
    by = sandbox.SOURCES[chosen.allowed.source] + (
        f" {chosen.allowed.where}" if chosen.allowed.source == "user_config" else "")
    return _check("config", True, f"{detail}; Codex's sandbox: {chosen.mode} (from "
                  f"{sandbox.SOURCES[chosen.source]}; the user allows at most "
                  f"{chosen.allowed.mode}, by {by})")


def _containment(cwd: Path) -> dict[str, Any]:
    """What a debate turn runs Codex without (config.switches): each off, unless the user's
    own config file keeps it on."""
    root = workspace.find_root(cwd)
    try:
        allowed = sandbox.allowance(root, cwd.resolve())
    except SparringError as exc:
        return _check("containment", False, exc.message, exc.hint)
    where = sandbox.user_config()
    ran = sandbox.switches(allowed, [str(root)])
    shown = [f"{row.name} on (your {where})" if ran[row.name] else f"{row.name} off"
             for row in config.switches()]
    also = "; the project's own hooks never (its .codex/ is not loaded)" if ran["hooks"] else ""
    return _check("containment", True, "debate turns run Codex with " + ", ".join(shown) + also)


def _claude_model() -> dict[str, Any]:
    """The model Claude Code named to sparring's SessionStart hook (claude.py), which each
    round records; never a problem (a person's shell has none)."""
    named = claude.model()
    if named:
        return _check("claude_model", True, f"Claude Code named its model {named} when this "
                      "session began: each round records it, and the report names it")
    return _check("claude_model", True, "no Claude model named to this command: Claude Code "
                  "names it to sparring's SessionStart hook when an interactive session "
                  "begins (not under `claude -p`, nor in a shell); a round without it is "
                  "reported as `Claude (its model is not recorded)`")


def _claude_code() -> dict[str, Any]:
    found = claude_code.find()
    proven = " and ".join(claude_code.PROVEN)
    if found.path is None:
        return _check("claude_code", False, "Claude Code is not running this command and "
                      f"`claude` is not on PATH: the skills run in it (proven with {proven})",
                      f"install Claude Code ({claude_code.UPGRADE}), or start `claude` from "
                      "the shell where it is on PATH")
    where = f"{found.path} ({found.how})"
    if found.version is None:
        return _check("claude_code", False, f"{where}: no version from `claude --version`",
                      f"check that Claude Code runs: `{shell_word(str(found.path))} --version`")
    old = claude_code.older_than_proven(found.version)
    return _check("claude_code", not old, f"{where}: {found.version}; sparring is proven with "
                  f"{proven}", f"Claude Code {found.version} is older than "
                  f"{claude_code.OLDEST_PROVEN}, the oldest release the skills are proven to "
                  f"run in without permission prompts: upgrade it ({claude_code.UPGRADE})")
