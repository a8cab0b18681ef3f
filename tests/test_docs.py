"""What docs/generate.py writes from the code (docs/runner.md's tables, the skills' verb
lists) never drifts from it."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "runner.md"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_tables_match_the_code() -> None:
    current = DOC.read_text(encoding="utf-8")
    assert generator().render(current) == current, (
        "docs/runner.md drifted from the code: run `.venv/bin/python docs/generate.py`")


def test_every_generated_file_matches_the_code() -> None:
    """runner.md, each SKILL.md's allowed-tools and layout.py's verb lists."""
    assert generator().stale() == [], "run `.venv/bin/python docs/generate.py`"


def test_every_table_is_in_the_document_once() -> None:
    text = DOC.read_text(encoding="utf-8")
    for name in generator().TABLES:
        assert text.count(f"<!-- generated: {name} -->") == 1, name
        assert text.count(f"<!-- end: {name} -->") == 1, name


def generated_copy(tmp_path: Path) -> Path:
    """A copy of every file docs/generate.py writes, laid out as in this clone."""
    for name in generator().targets():
        copy = tmp_path / name.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(name.read_bytes())
    return tmp_path


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "docs" / "generate.py"), "--check",
                           "--root", str(root)], capture_output=True, text=True, check=False)


def test_a_drifted_table_is_caught_and_check_says_how_to_fix_it(tmp_path: Path) -> None:
    root = generated_copy(tmp_path)
    assert check(root).returncode == 0
    doc = root / "docs" / "runner.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("| `network_unreachable` |",
                                                           "| `network_gone` |"))
    done = check(root)
    assert done.returncode == 1, done.stderr
    assert "docs/runner.md" in done.stderr
    assert "run `.venv/bin/python docs/generate.py`" in done.stderr


def test_every_verb_option_and_error_code_is_in_the_document() -> None:
    import click

    from sparring.cli.main import cli
    from sparring.errors import CODES

    text = DOC.read_text(encoding="utf-8")
    assert all(f"| `{code}` |" in text for code in CODES)
    for name, command in generator()._commands(cli):
        assert f"| `{name}" in text, name
        for param in command.params:
            if isinstance(param, click.Option) and param.name != "help":
                assert max(param.opts, key=len) in text, (name, param.opts)


def test_every_status_table_lists_the_statuses_poll_reports() -> None:
    """The statuses tables are prose (what each means, what to do); their first column is the
    value set of states.REPORTED, in docs/runner.md and in the skills' references/runner.md."""
    import re

    from sparring.states import REPORTED

    for doc in (DOC, ROOT / "references" / "runner.md"):
        tables = re.findall(r"^\| status \|.*\n\|[-| ]+\|\n((?:\|.*\n)+)", doc.read_text(), re.M)
        assert len(tables) == 1, doc
        listed = [re.findall(r"`([^`]+)`", row.split("|")[1]) for row in tables[0].splitlines()]
        assert [status for row in listed for status in row] == list(REPORTED), doc


def test_every_test_docs_security_names_exists() -> None:
    """docs/security.md proves each promise with a test it names (file::name): each one is
    there, so a renamed or removed test cannot leave a promise unproved in silence."""
    import re

    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", text)
    assert named, "docs/security.md names no test"
    missing = [f"{path}::{name}" for path, name in named
               if not re.search(rf"^(def {name}\(|{name} = )", (ROOT / path).read_text(
                   encoding="utf-8"), re.M)]
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def test_the_module_map_lists_every_module_and_no_other() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    region = text.split("<!-- module map -->", 1)[1].split("<!-- end: module map -->", 1)[0]
    listed = re.findall(r"^\| `([\w/]+\.py)` \|", region, re.M)
    package = ROOT / "scripts" / "sparring"
    modules = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py"))
    assert len(listed) == len(set(listed)), "a module listed twice"
    assert sorted(listed) == modules, (
        f"not in docs/architecture.md: {sorted(set(modules) - set(listed))}; "
        f"listed but gone: {sorted(set(listed) - set(modules))}")


def test_the_readme_leads_to_the_architecture() -> None:
    assert "docs/architecture.md" in (ROOT / "README.md").read_text(encoding="utf-8")


PACKAGE = ROOT / "scripts" / "sparring"
# A module named in a comment or docstring, as `turn/view.py` or `arch_debate/status.py`.
_NAMED_MODULE = re.compile(r"\b((?:cli|codex|commands|guard|installer|process|store|turn|"
                           r"workflows|arch_debate|deep_discussion|structured)/[\w/]+\.py)\b")


def modules_named_but_gone(sources: dict[str, str]) -> list[str]:
    """`file: module` for each module a source names that is not in the package (a path
    below the package, or below workflows/ for a workflow's own)."""
    gone = []
    for name, text in sources.items():
        for module in sorted(set(_NAMED_MODULE.findall(text))):
            if not any((base / module).is_file() for base in (PACKAGE, PACKAGE / "workflows")):
                gone.append(f"{name}: {module}")
    return gone


def test_every_module_the_code_names_exists() -> None:
    """Comments and docstrings that send a reader to a module name one that is there (a
    module removed or renamed leaves none behind)."""
    sources = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
               for p in PACKAGE.rglob("*.py")}
    assert modules_named_but_gone(sources) == []


def test_the_names_check_finds_a_module_that_is_gone() -> None:
    found = modules_named_but_gone({
        "a.py": "# poll's fast path (turn/quick.py); see turn/view.py, arch_debate/status.py"})
    assert found == ["a.py: turn/quick.py"]
