"""Regenerate what is written from the code: docs/runner.md's tables, each SKILL.md's
`allowed-tools`, and installer/layout.py's lists of the verbs each skill runs.

    .venv/bin/python docs/generate.py           # rewrite them (after `python3 tests/run.py`)
    .venv/bin/python docs/generate.py --check   # exit 1 if any is out of date
                                                # (--root DIR: a copy laid out as here)

The skills' verbs come from the workflows' declarations (workflows/workflow.py: `runs`,
the verbs every skill runs, and a workflow's own verbs); install.py, which runs before any
runtime exists, reads them from layout.py, and Claude Code from the SKILL.md.

In runner.md each table sits between `<!-- generated: NAME -->` and `<!-- end: NAME -->`;
everything else in the file is prose and stays as written. The sources: the click commands of
scripts/sparring/cli/ (verbs, their arguments and options, the environment variables
options read; made from cli/verbs.py, the workflows' declarations, config.TURN_SETTINGS),
the error-code registry (errors.CODES), the poll/wait keys (contract.POLL_KEYS) and the
settings of sparring.yaml (config). tests/test_docs.py fails when a table drifts.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "runner.md"
sys.path.insert(0, str(ROOT / "scripts"))

import click  # noqa: E402  (after the path: the package may not be installed)

from sparring import config  # noqa: E402
from sparring.cli.main import cli  # noqa: E402
from sparring.errors import CODES  # noqa: E402
from sparring.installer import layout  # noqa: E402
from sparring.turn import contract  # noqa: E402
from sparring.workflows import registry  # noqa: E402
from sparring.workflows.workflow import EVERY_SKILL_RUNS  # noqa: E402

REGION = re.compile(r"(<!-- generated: ([\w-]+) -->\n)(.*?)(<!-- end: \2 -->)", re.S)


def _commands(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    for name in sorted(group.commands):
        command = group.commands[name]
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def _metavar(param: click.Parameter) -> str:
    if param.metavar:
        return param.metavar
    choices = getattr(getattr(param.type, "declared", None), "choices", ())
    if choices:
        return "|".join(str(c) for c in choices)
    return (param.name or "").upper()


def _option(param: click.Option) -> str:
    name = max((o for o in param.opts if o.startswith("--")), key=len, default=param.opts[0])
    name += "".join(f"/{o}" for o in param.secondary_opts)  # --json/--text
    shown = name if param.is_flag else f"{name} {_metavar(param)}"
    return f"`{shown}`" + (" (repeatable)" if param.multiple else "")


def _summary(command: click.Command) -> str:
    text = (command.help or "").split("\n\n")[0]
    return " ".join(text.split()).replace("|", "\\|")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def verbs() -> str:
    rows = ["| verb | arguments and options | what it does |", "|---|---|---|"]
    for name, command in _commands(cli):
        args = " ".join(_metavar(p) for p in command.params if isinstance(p, click.Argument))
        options = ", ".join(_cell(_option(p)) for p in command.params
                            if isinstance(p, click.Option) and p.name != "help")
        rows.append(f"| `{(name + ' ' + args).strip()}` | {options or '—'} | "
                    f"{_summary(command)} |")
    return "\n".join(rows)


def environment() -> str:
    found: dict[str, tuple[str, list[str]]] = {}
    for name, command in _commands(cli):
        for param in command.params:
            if isinstance(param, click.Option) and isinstance(param.envvar, str):
                _, verbs_of = found.setdefault(param.envvar, (_option(param), []))
                verbs_of.append(f"`{name}`")
    rows = ["| variable | option | read by |", "|---|---|---|"]
    rows += [f"| `{var}` | {_cell(option)} | {', '.join(verbs_of)} |"
             for var, (option, verbs_of) in sorted(found.items())]
    return "\n".join(rows)


def error_codes() -> str:
    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| `{code}` | {_cell(meaning)} |" for code, meaning in CODES.items()]
    return "\n".join(rows)


def poll_keys() -> str:
    rows = ["| key | printed | meaning |", "|---|---|---|"]
    rows += [f"| `{key}` | {when} | {_cell(meaning)} |"
             for key, when, meaning in contract.POLL_KEYS]
    return "\n".join(rows)


def settings() -> str:
    rows = ["| key | default | where |", "|---|---|---|"]
    base = config.resolve_turn({}, {})
    by_effort = {"timeout", "stall_after"}
    for key in config.top_level():
        value = base.get(key)
        shown = ("by effort (below)" if key in by_effort else
                 "Codex's own configuration" if key == "model" and value is None else
                 "what the user allows (may only narrow it)" if key == "sandbox" else
                 "—" if value is None else
                 f"`{value:g}`" if isinstance(value, float) else f"`{value}`")
        rows.append(f"| `{key}` | {shown} | top level |")
    for skill, flow in registry.WORKFLOWS.items():
        values = flow.defaults()
        for key in config.WORKFLOW_SETTINGS:
            if key in values:
                rows.append(f"| `{key}` | `{values[key]}` | section `{skill}:` |")
    rows += ["", "| effort | turn timeout | stall after |", "|---|---|---|"]
    rows += [f"| {effort} | {config.TIMEOUT_BY_EFFORT[effort]:g} s | "
             f"{config.STALL_BY_EFFORT[effort]:g} s |" for effort in config.EFFORTS]
    return "\n".join(rows)


TABLES: dict[str, Callable[[], str]] = {
    "verbs": verbs, "environment": environment, "error-codes": error_codes,
    "poll-keys": poll_keys, "settings": settings,
}


def render(text: str) -> str:
    """`text` with every generated region rewritten from the code."""
    def fill(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in TABLES:
            raise SystemExit(f"docs/runner.md: unknown generated region {name!r}")
        return f"{match.group(1)}{TABLES[name]()}\n{match.group(4)}"

    return REGION.sub(fill, text)


# -- what each skill runs, from the workflows' declarations ----------------------------------

SKILLS = ROOT / "skills"
LAYOUT = ROOT / "scripts" / "sparring" / "installer" / "layout.py"
_VERBS_BLOCK = re.compile(r"(# generated: skill verbs\n)(.*?)(# end: skill verbs)", re.S)
_ALLOWED = re.compile(r"^allowed-tools:\n(?:  - .*\n)*", re.M)


def skill_runs() -> dict[str, tuple[str, ...]]:
    """Each skill's verbs beyond every skill's, as its workflow declares them."""
    return {name: flow.skill_verbs()[len(EVERY_SKILL_RUNS):]
            for name, flow in registry.WORKFLOWS.items()}


def _tuple(words: tuple[str, ...], indent: int) -> str:
    """`words` as a Python tuple, wrapped under its opening parenthesis within 100 columns."""
    lines, line = [], "("
    for n, word in enumerate(words):
        piece = f'"{word}"' + (")" if n == len(words) - 1 else ",")
        if len(line) + len(piece) + 1 + indent > 100 and line != "(":
            lines.append(line.rstrip())
            line = " " * (indent + 1)
        line += piece + ("" if n == len(words) - 1 else " ")
    return "\n".join([*lines, line])


def verbs_block() -> str:
    """installer/layout.py's COMMON_VERBS and SKILL_VERBS (install.py, which runs before any
    runtime exists, reads no workflow)."""
    common = "COMMON_VERBS = "
    rows = [common + _tuple(EVERY_SKILL_RUNS, len(common)), "SKILL_VERBS = {"]
    for name, runs in skill_runs().items():
        key = f'    "{name}": '
        rows.append(key + _tuple(runs, len(key)) + ",")
    return "\n".join([*rows, "}"]) + "\n"


def allowed_tools(skill: str) -> str:
    """The `allowed-tools` of a skill's SKILL.md: its verbs, the inbox, its own folder."""
    runs = (*EVERY_SKILL_RUNS, *skill_runs()[skill])
    return "allowed-tools:\n" + "".join(
        f"  - {rule}\n" for rule in layout.skill_allowed_tools(skill, runs))


def skill_file(skill: str, text: str) -> str:
    if not _ALLOWED.search(text):
        raise SystemExit(f"skills/{skill}/SKILL.md has no allowed-tools list")
    return _ALLOWED.sub(lambda _: allowed_tools(skill), text, count=1)


def layout_file(text: str) -> str:
    return _VERBS_BLOCK.sub(lambda m: f"{m.group(1)}{verbs_block()}{m.group(3)}", text)


def targets(root: Path = ROOT) -> dict[Path, Callable[[str], str]]:
    """Each generated file under `root` (this clone, or a copy of it), with what makes it."""
    found: dict[Path, Callable[[str], str]] = {
        root / "docs" / "runner.md": render,
        root / LAYOUT.relative_to(ROOT): layout_file}
    for skill in registry.WORKFLOWS:
        found[root / "skills" / skill / "SKILL.md"] = lambda text, s=skill: skill_file(s, text)
    return found


def stale(root: Path = ROOT) -> list[str]:
    """The generated files under `root` that differ from what the code gives."""
    return [str(path.relative_to(root)) for path, make in targets(root).items()
            if make(path.read_text(encoding="utf-8")) != path.read_text(encoding="utf-8")]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        # --root DIR: check a copy of the generated files laid out as in this clone
        found = stale(Path(argv[argv.index("--root") + 1]) if "--root" in argv else ROOT)
        if found:
            print(f"out of date: {', '.join(found)}: run `.venv/bin/python docs/generate.py`",
                  file=sys.stderr)
            return 1
        return 0
    for path, make in targets().items():
        current = path.read_text(encoding="utf-8")
        fresh = make(current)
        shown = path.relative_to(ROOT)
        if fresh != current:
            path.write_text(fresh, encoding="utf-8")
            print(f"{shown}: regenerated")
        else:
            print(f"{shown}: up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
