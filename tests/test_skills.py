"""Every SKILL.md is valid for Claude Code and every path, command and template
variable it (or a reference it routes to) names exists and runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from sparring import templates
from sparring.cli.main import cli
from sparring.errors import CODES
from sparring.installer import layout
from sparring.workflows import registry

ROOT = Path(__file__).resolve().parents[1]
SKILLS = registry.SKILLS  # one skill folder per workflow (tests/test_registry.py)
LAUNCHER = "${CLAUDE_SKILL_DIR}/sparring"
# Verbs a skill names that no rule approves, on purpose: Claude Code asks the user.
ASKS_THE_USER = {"guard revert"}
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
    assert meta["allowed-tools"] == layout.skill_allowed_tools(
        skill.name, registry.get(skill.name).skill_verbs()), \
        "pre-approve the runner's verbs this skill runs and the inbox, no more"
    assert len(body.splitlines()) < 150, "SKILL.md is a short router"
    assert "$ARGUMENTS" in body


def test_the_verbs_install_py_approves_are_the_workflows_declarations() -> None:
    """install.py (which runs before any runtime, and reads no workflow) takes each skill's
    verbs from layout.py: generated from the declarations, never different from them."""
    for name, flow in registry.WORKFLOWS.items():
        assert layout.verbs(name) == flow.skill_verbs(), name


def _generator() -> Any:
    from test_docs import generated_copy, generator

    return generator(), generated_copy


@pytest.mark.parametrize("change", ["drop a verb", "add a verb", "list"])
def test_a_skill_list_that_differs_from_the_declarations_is_caught(
        change: str, tmp_path: Path) -> None:
    """A SKILL.md whose `allowed-tools` names a verb its workflow does not declare (or lacks
    one), and a verb list in layout.py that differs, are out of date: `docs/generate.py
    --check` fails (tests/test_docs.py runs it on the clone) and says which file."""
    gen, copy = _generator()
    root = copy(tmp_path)
    assert gen.stale(root) == []
    skill = root / "skills" / "think-about" / "SKILL.md"
    text = skill.read_text(encoding="utf-8")
    if change == "drop a verb":
        skill.write_text(text.replace("  - Bash(${CLAUDE_SKILL_DIR}/sparring seal *)\n", ""))
        wrong = "skills/think-about/SKILL.md"
    elif change == "add a verb":
        skill.write_text(text.replace("  - Edit(", "  - Bash(${CLAUDE_SKILL_DIR}/sparring "
                                      "render *)\n  - Edit(", 1))
        wrong = "skills/think-about/SKILL.md"
    else:
        listed = root / "scripts" / "sparring" / "installer" / "layout.py"
        listed.write_text(listed.read_text(encoding="utf-8").replace(
            '("init", "start", "seal", "verdict", "report")',
            '("init", "start", "seal", "verdict", "report", "render")', 1))
        wrong = "scripts/sparring/installer/layout.py"
    assert gen.stale(root) == [wrong]


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


def inbox_files(text: str) -> dict[str, set[str]]:
    """Keys of each YAML file a document shows: a ```yaml block after a line naming
    `INBOX/<file>`."""
    found: dict[str, set[str]] = {}
    pattern = r"`INBOX/([\w.-]+\.ya?ml)`(?:(?!```).)*?```yaml\n(.*?)```"
    for name, block in re.findall(pattern, text, re.S):
        found[name] = set(re.findall(r"^([A-Za-z_]+):", block, re.M))
    return found


def template_uses(text: str) -> list[tuple[str, set[str]]]:
    """(template, variables) for each place a document passes variables to a template."""
    uses = []
    files = inbox_files(text)
    for line in text.splitlines():
        named = re.findall(r"--template ([\w+/-]+)|render ([\w+/-]+)|`([\w-]+/[\w+-]+)` "
                           r"template|template `([\w-]+/[\w+-]+)`|(discuss frame)", line)
        for groups in named:
            name = next(g for g in groups if g)
            name = IMPLIED.get(name, name)
            keys = set(re.findall(r"--var(?:-file)? ([A-Z_]+)=", line))
            keys |= {k for k in re.findall(r"`([A-Z][A-Z_]{2,})`", line)}
            for file in re.findall(r"(?:--vars-file|--file) INBOX/([\w.-]+)", line):
                keys |= files.get(file, set())
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
        assert any(keys for doc in documents(skill) for _, keys in
                   template_uses(doc.read_text())), f"{skill.name}: no variables found"


# Shapes Claude Code refuses before `allowed-tools` applies (reference §12a): a heredoc,
# redirection, a pipe, a variable prefix, command substitution, text in quotes.
REFUSED = re.compile(r"<<|[|>;]|\$\(|^\s*[A-Z_]+=|['\"]")


def runner_commands(text: str) -> list[str]:
    """Every runner command a document shows: lines of fenced sh blocks, inline code."""
    fenced = [line for block in re.findall(r"```sh\n(.*?)```", text, re.S)
              for line in block.splitlines() if line.strip()]
    inline = re.findall(r"`([^`\n]*sparring [^`\n]*)`", re.sub(r"```.*?```", "", text,
                                                              flags=re.S))
    return fenced + [c for c in inline if re.match(r"(\$\{CLAUDE_SKILL_DIR\}/)?sparring ", c)]


@pytest.mark.parametrize("skill", skill_dirs(), ids=lambda p: p.name)
def test_every_command_shown_is_one_claude_code_approves(skill: Path) -> None:
    """What SKILL.md shows is what Claude copies: the launcher by its full path, plain
    arguments, text only in files."""
    body = split(skill / "SKILL.md")[1]
    shown = runner_commands(body)
    assert shown, f"{skill.name} shows no runner command"
    for command in shown:
        assert command.startswith(f"{LAUNCHER} "), f"not by its full path: {command}"
        assert not REFUSED.search(command), f"a shape Claude Code refuses: {command}"
    for doc in documents(skill)[1:]:
        for command in runner_commands(doc.read_text()):
            assert re.match(r"sparring |\$\{CLAUDE_SKILL_DIR\}/sparring ", command), command
            assert not REFUSED.search(command), f"{doc.name}: a refused shape: {command}"


# Every document that tells someone to run the runner: what they copy must exist as written.
DOCUMENTS = [doc for skill in skill_dirs() for doc in documents(skill)] + [
    ROOT / "README.md", ROOT / "docs" / "runner.md"]
# Where a command's words end: a comment, or the shell joining another command.
_END = {"#", "|", "||", "&&", ";", ">", "2>&1"}


def shown_commands(text: str) -> list[list[str]]:
    """The words after `sparring` (the launcher by any path, or the pip-installed command) in
    each runner command a document's code shows; `/plugin install sparring` is not one."""
    fenced, inline = re.findall(r"```[a-z]*\n(.*?)```", text, re.S), re.findall(
        r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    lines = [line for block in fenced for line in block.splitlines()] + inline
    found = []
    for line in lines:
        for match in re.finditer(r"(?:^|(?<=[\s/]))sparring (.*)$", line):
            if re.search(r"\binstall\s+$", line[:match.start()]):
                continue
            words = []
            for word in match.group(1).split():
                if word in _END or word.startswith("#"):
                    break
                words.append(word)
            found.append(words)
    return found


def resolve(words: list[str]) -> tuple[list[str], click.Command, list[str]] | None:
    """(the verb's path, its click command, the words after it); None for a placeholder verb
    (`sparring VERB --help`). A word naming no verb fails."""
    if not words or not re.match(r"[a-z]", words[0]):
        return None
    command: click.Command = cli
    path: list[str] = []
    rest = list(words)
    while isinstance(command, click.Group) and rest and re.fullmatch(r"[a-z][a-z|-]*", rest[0]):
        names = rest.pop(0).split("|")  # `guard snapshot|check|revert` names three
        for name in names[1:]:
            assert name in command.commands, f"`sparring {' '.join([*path, name])}` is no verb"
        assert names[0] in command.commands, f"`sparring {' '.join([*path, names[0]])}` is no verb"
        path.append(names[0])
        command = command.commands[names[0]]
    return path, command, rest


def options_of(command: click.Command) -> set[str]:
    return {flag for param in command.params if isinstance(param, click.Option)
            for flag in [*param.opts, *param.secondary_opts]} | {"--help", "-h"}


def test_every_verb_and_flag_a_document_shows_exists() -> None:
    """Each runner command in a SKILL.md, a reference, the README or docs/runner.md names a
    verb of the click tree, and each of its flags is an option of that verb."""
    checked, wrong = 0, []
    for doc in DOCUMENTS:
        for words in shown_commands(doc.read_text()):
            try:
                found = resolve(words)
            except AssertionError as exc:
                wrong.append(f"{doc.relative_to(ROOT)}: {exc}")
                continue
            if found is None:
                continue
            path, command, rest = found
            options = options_of(command)
            for word in rest:
                flag = word.strip("[]()").split("=", 1)[0]
                if re.fullmatch(r"--?[A-Za-z][\w-]*", flag) and flag not in options:
                    wrong.append(f"{doc.relative_to(ROOT)}: `sparring {' '.join(path)}` has no "
                                 f"{flag}: {' '.join(words)}")
            checked += 1
    assert not wrong, "\n".join(wrong)
    assert checked > 100, "the documents' commands were not found"


@pytest.mark.parametrize("skill", skill_dirs(), ids=lambda p: p.name)
def test_every_verb_a_skill_runs_is_approved_and_nothing_more(skill: Path) -> None:
    """The verbs a skill's SKILL.md and references show are exactly those its rules approve
    (install.py's and allowed-tools: layout.verbs), but `guard revert`, which asks the user;
    no rule approves a verb no skill runs (`render`, `guard check`, ...)."""
    shown = set()
    for doc in documents(skill):
        for words in shown_commands(doc.read_text()):
            found = resolve(words)
            if found is not None:
                shown.add(" ".join(found[0]))
    approved = set(layout.verbs(skill.name))
    assert shown - ASKS_THE_USER <= approved, f"shown, not approved: {shown - approved}"
    assert ASKS_THE_USER & approved == set()
    runs = {" ".join(words[:2]) if words[0] in ("debate", "discuss", "guard") else words[0]
            for name in SKILLS for words in [v.split() for v in layout.verbs(name)]}
    assert {"render", "guard check", "guard snapshot", "guard revert"} & runs == set()


def test_a_flag_or_verb_that_does_not_exist_is_caught() -> None:
    """The parser the test above relies on finds what a document gets wrong."""
    text = ("```sh\n${CLAUDE_SKILL_DIR}/sparring wait SESSION --sael FILE\n```\n"
            "Then `sparring discuss rounds S --file F` and `sparring guard check|undo`.")
    shown = shown_commands(text)
    assert shown == [["wait", "SESSION", "--sael", "FILE"], ["discuss", "rounds", "S", "--file",
                                                              "F"], ["guard", "check|undo"]]
    path, command, rest = resolve(shown[0]) or ([], cli, [])
    assert path == ["wait"] and "--sael" in rest and "--sael" not in options_of(command)
    assert "--seal" in options_of(command)
    for words in shown[1:]:
        with pytest.raises(AssertionError, match="is no verb"):
            resolve(words)


def error_tables(text: str) -> list[str]:
    """The codes in the first column of each table headed `| code |` (what to do per error)."""
    found = []
    for table in re.findall(r"^\| code \|.*\n\|[-| ]+\|\n((?:\|.*\n)+)", text, re.M):
        for row in table.splitlines():
            found += re.findall(r"`([^`]+)`", row.split("|")[1])
    return found


def test_every_error_code_a_document_tells_what_to_do_about_exists() -> None:
    checked = []
    for doc in DOCUMENTS:
        for code in error_tables(doc.read_text()):
            assert code in CODES, f"{doc.relative_to(ROOT)}: `{code}` is no error code"
            checked.append(code)
    assert {"guard_violation", "seal_required", "invalid_answer"} <= set(checked)


# -- every command the skills give has run in the real Claude Code ---------------------------

SCENARIOS = ROOT / "tests" / "integration" / "workflows"
# The verbs that take a second word: the groups of the workflows' own verbs, and the guard's.
GROUPS = {*(flow.command for flow in registry.WORKFLOWS.values() if flow.command), "guard"}
# Commands the runner prints for Claude to run as they are (scenarios run them from the
# saved value): the shape they have, and where a scenario runs one.
PRINTED = {
    ("report", ("--synthesis",)): "think-about-consensus: the verdict's next.command",
    ("resume", ("--template", "--var-file", "--vars-file")):
        "dual-model-deeper-dive: the verdict's next.optional.command",
}


def shape(command: str, launcher: str) -> tuple[str, tuple[str, ...]]:
    """(verb, its flags) of a runner command; `launcher` is how the command names it."""
    words = command.split()
    rest = words[words.index(launcher) + 1:]
    verb = rest[:2] if rest[0] in GROUPS else rest[:1]
    return " ".join(verb), tuple(sorted(set(re.findall(r"(?:^|\s)(--[a-z-]+)",
                                                        " ".join(rest)))))


def scenario_shapes() -> set[tuple[str, tuple[str, ...]]]:
    found = set()
    for path in SCENARIOS.glob("*.json"):
        for step in json.loads(path.read_text(encoding="utf-8"))["steps"]:
            if "{{launcher}}" in step.get("bash", ""):
                found.add(shape(step["bash"], "{{launcher}}"))
    return found | set(PRINTED)


def test_every_command_the_skills_give_has_run_in_the_real_claude_code() -> None:
    """A shape no scripted workflow runs has never been proven free of a permission prompt.
    A scenario running the verb with the same flags, or more, counts."""
    ran = scenario_shapes()
    missing = []
    for skill in skill_dirs():
        for doc in documents(skill):
            for command in runner_commands(doc.read_text()):
                launcher = LAUNCHER if command.startswith(LAUNCHER) else "sparring"
                verb, flags = shape(command, launcher)
                if not any(v == verb and set(flags) <= set(f) for v, f in ran):
                    missing.append(f"{skill.name}/{doc.name}: {command}")
    assert not missing, "no scenario in tests/integration/workflows runs:\n" + "\n".join(
        sorted(set(missing)))
