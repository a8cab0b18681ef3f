"""Regenerate the tables of docs/runner.md from the code.

    .venv/bin/python docs/generate.py           # rewrite them (after `python3 tests/run.py`)
    .venv/bin/python docs/generate.py --check   # exit 1 if they are out of date

Each table sits between `<!-- generated: NAME -->` and `<!-- end: NAME -->`; everything
else in the file is prose and stays as written. The sources: the click commands of
scripts/sparring/cli/ (verbs, their arguments and options, the environment variables
options read), the error-code registry (errors.CODES), the poll/wait keys
(contract.POLL_KEYS) and the settings of sparring.yaml (config). tests/test_docs.py fails
when a table drifts from the code.
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
from sparring.turn import contract  # noqa: E402
from sparring.workflows import registry  # noqa: E402

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
    if isinstance(param.type, click.Choice):
        return "|".join(str(c) for c in param.type.choices)
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
    for key in config.SETTINGS:
        value = getattr(base, key, None)
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


def main(argv: list[str]) -> int:
    current = DOC.read_text(encoding="utf-8")
    fresh = render(current)
    if "--check" in argv:
        if fresh != current:
            print("docs/runner.md is out of date: run `.venv/bin/python docs/generate.py`",
                  file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        DOC.write_text(fresh, encoding="utf-8")
        print("docs/runner.md: tables regenerated")
    else:
        print("docs/runner.md: up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
