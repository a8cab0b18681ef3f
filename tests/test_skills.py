"""Every SKILL.md is valid for Claude Code and every path, command and template
variable it (or a reference it routes to) names exists and runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from sparring import templates

ROOT = Path(__file__).resolve().parents[1]
SKILLS = ("arch-debate", "deep-discussion", "dual-model", "think-about")
LAUNCHER = "${CLAUDE_SKILL_DIR}/sparring"
# Verbs that render a template from the YAML they are given.
IMPLIED = {"discuss frame": "deep-discussion/first"}


def skill_dirs() -> list[Path]:
    return [ROOT / "skills" / name for name in SKILLS if (ROOT / "skills" / name / "SKILL.md")
            .exists()]


def split(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text()
    assert text.startswith("---\n"), f"{path} has no frontmatter"
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def test_all_four_skills_exist() -> None:
    assert [p.name for p in skill_dirs()] == list(SKILLS)


def documents(skill: Path) -> list[Path]:
    return [skill / "SKILL.md", *sorted((skill / "references").glob("*.md"))]


@pytest.mark.parametrize("skill", skill_dirs(), ids=lambda p: p.name)
def test_frontmatter_is_valid(skill: Path) -> None:
    meta, body = split(skill / "SKILL.md")
    assert meta["name"] == skill.name
    description = meta["description"]
    assert 80 <= len(description) <= 1024
    assert "Use when" in description, "the description says when to use the skill"
    assert meta["allowed-tools"] == f"Bash({LAUNCHER} *)", "pre-approve the runner, no more"
    assert len(body.splitlines()) < 150, "SKILL.md is a short router"
    assert "$ARGUMENTS" in body


@pytest.mark.parametrize("skill", skill_dirs(), ids=lambda p: p.name)
def test_every_named_path_exists(skill: Path) -> None:
    assert (skill / "sparring").resolve().is_file()
    for doc in documents(skill):
        assert doc.resolve().is_file(), f"{doc} is a broken link"
        for name in re.findall(r"`references/([\w.-]+\.md)`", doc.read_text()):
            assert (skill / "references" / name).resolve().is_file(), f"{doc}: {name}"
    for link in (skill / "references").iterdir():
        assert link.resolve().is_file(), f"broken {link}"


def code_of(text: str) -> str:
    """The code in a document: fenced blocks and inline code spans."""
    fenced = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return "\n".join(fenced + inline)


def commands(text: str) -> list[list[str]]:
    """`sparring VERB [SUBVERB]` as named in a document's code (with or without the launcher)."""
    found = re.findall(r"(?:^|[\s/])sparring ([a-z-]+)(?: ([a-z-]+))?", code_of(text), re.M)
    return [[verb] + ([sub] if verb in ("guard", "debate", "discuss") and sub else [])
            for verb, sub in found]


@pytest.mark.parametrize("skill", skill_dirs(), ids=lambda p: p.name)
def test_every_named_command_runs(skill: Path, sparring: Any) -> None:
    named = {tuple(c) for doc in documents(skill) for c in commands(doc.read_text())}
    assert named, f"{skill.name} names no runner command"
    for command in sorted(named):
        result = sparring(*command, "--help")
        assert result.exit_code == 0, f"`sparring {' '.join(command)}` does not exist"


def template_uses(text: str) -> list[tuple[str, set[str]]]:
    """(template, variables) for each place a document passes variables to a template."""
    uses = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        named = re.findall(r"--template ([\w+/-]+)|render ([\w+/-]+)|`([\w-]+/[\w+-]+)` "
                           r"template|template `([\w-]+/[\w+-]+)`|(discuss frame)", line)
        for groups in named:
            name = next(g for g in groups if g)
            name = IMPLIED.get(name, name)
            keys = set(re.findall(r"--var(?:-file)? ([A-Z_]+)=", line))
            keys |= {k for k in re.findall(r"`([A-Z][A-Z_]{2,})`", line)}
            if "<<'END'" in line:
                for body in lines[i + 1:]:
                    if body.strip() == "END":
                        break
                    keys |= set(re.findall(r"^([A-Z][A-Z_]+):", body))
            uses.append((name, keys))
    return uses


@pytest.mark.parametrize("skill", skill_dirs(), ids=lambda p: p.name)
def test_every_placeholder_exists_in_the_template_it_names(skill: Path) -> None:
    checked = 0
    for doc in documents(skill):
        for name, keys in template_uses(doc.read_text()):
            assert name in templates.names(), f"{doc.name} names unknown template {name}"
            unknown = keys - templates.variables(name)
            assert not unknown, f"{doc.name}: {name} has no {sorted(unknown)}"
            checked += 1
    if skill.name != "arch-debate":  # arch-debate's runner fills every template itself
        assert checked, f"{skill.name} names no template"
