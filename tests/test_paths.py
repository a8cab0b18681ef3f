"""paths.py, the one way in for files an argument names, on its own: where a path leads, what
it refuses, and what it writes. The verbs' use of it is tested in test_confinement.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparring import paths
from sparring.errors import SparringError


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "real" / "project"
    (project / "docs").mkdir(parents=True)
    monkeypatch.chdir(project)
    return project


def code_of(call: object) -> str:
    assert callable(call)
    with pytest.raises(SparringError) as caught:
        call()
    return caught.value.code


def test_a_path_reaching_the_root_through_a_link_above_it_is_inside(root: Path,
                                                                    tmp_path: Path) -> None:
    """As /tmp is a link to /private/tmp on macOS: links above the project are the user's
    own layout; only those below the root are refused."""
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    (root / "docs" / "q.md").write_text("question\n")
    via_alias = tmp_path / "alias" / "project" / "docs" / "q.md"
    assert paths.place(via_alias, root, "--file").parts == ("docs", "q.md")
    assert paths.read(via_alias, tmp_path / "alias" / "project", "--file").data == b"question\n"


@pytest.mark.parametrize("given", ["../x", "/elsewhere/x", "docs/../../x", "docs/../../project2/x"])
def test_what_leads_out_is_outside_before_the_disk_is_touched(root: Path, given: str) -> None:
    with pytest.raises(SparringError) as caught:
        paths.place(given, root, "--file")
    assert caught.value.code == "path_outside_project"
    assert caught.value.details["root"] == str(root)


def test_the_inbox_takes_writes_and_the_rest_of_sparrings_folder_does_not(root: Path) -> None:
    assert paths.write(".sparring/inbox/note.md", "x", root, "--out").is_file()
    assert stat_mode(root / ".sparring") == 0o700, "made private, as sparring makes it"
    for refused in (".sparring/note.md", ".sparring/inbox", ".sparring/sessions/a/b.json",
                    "sub/.sparring/inbox/.git/config", "docs/.GIT/hooks/x", "Claude.md"):
        assert code_of(lambda r=refused: paths.write(r, "x", root, "--out")) == (
            "path_protected"), refused


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_a_write_replaces_only_what_the_caller_owns(root: Path) -> None:
    mine = root / "docs" / "report.md"
    paths.write(mine, "one\n", root, "the report")
    assert code_of(lambda: paths.write(mine, "two\n", root, "the report")) == "path_protected"
    assert mine.read_text() == "one\n"
    paths.write(mine, "two\n", root, "the report", replace=lambda p: p == mine)
    assert mine.read_text() == "two\n"
    assert [p.name for p in mine.parent.iterdir()] == ["report.md"], "no temporary file left"


def test_a_file_that_appears_meanwhile_is_never_written_over(root: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """Between the look (nothing there) and the write, someone made the file: it stays."""
    target = root / "docs" / "new.md"
    target.write_text("theirs\n")
    monkeypatch.setattr(paths.disk, "lstat_in", lambda parent, name: None)  # it looked absent
    with pytest.raises(SparringError) as caught:
        paths.write(target, "ours\n", root, "--out")
    assert caught.value.code == "path_protected" and "appeared" in caught.value.message
    assert target.read_text() == "theirs\n"


def test_missing_a_folder_and_not_a_folder_are_told_apart(root: Path) -> None:
    (root / "docs" / "file.md").write_text("x")
    assert code_of(lambda: paths.read("nope/x.md", root, "--file")) == "file_not_found"
    assert code_of(lambda: paths.read("docs/file.md/x", root, "--file")) == "file_not_found"
    assert code_of(lambda: paths.write("docs/file.md/x", "y", root, "--out")) == "not_writable"
    assert code_of(lambda: paths.read("docs", root, "--file")) == "not_a_file"


def test_text_of_names_the_first_bad_byte() -> None:
    with pytest.raises(SparringError) as caught:
        paths.text_of(b"ok\n\xff\xfe", "round.md")
    assert caught.value.code == "not_utf8"
    assert caught.value.message == "round.md is not UTF-8 text (byte 0xff at offset 3)"
    assert paths.text_of("naïve — 東京\n".encode(), "x") == "naïve — 東京\n"


def _spellings(name: str) -> list[str]:
    return sorted({name, name.upper(), name.title(), name[:1].upper() + name[1:]})


@pytest.mark.parametrize("name", sorted(paths.PROTECTED_FILES))
@pytest.mark.parametrize("depth", ["", "docs/", "docs/deep/er/"])
def test_a_file_that_steers_an_agent_or_git_is_never_written_in_any_case_at_any_depth(
        root: Path, name: str, depth: str) -> None:
    """The one list (paths.PROTECTED_FILES): AGENTS.md and AGENTS.override.md, CLAUDE.md and
    the rest, however they are spelled and wherever they are."""
    for spelled in _spellings(name):
        target = f"{depth}{spelled}"
        assert code_of(lambda t=target: paths.write(t, "x", root, "--out")) == "path_protected"
        assert not (root / target).exists()
    assert list(root.rglob("*")) == [root / "docs"], "not even a folder was made"


@pytest.mark.parametrize("name", sorted(paths.PROTECTED_FOLDERS))
@pytest.mark.parametrize("depth", ["", "docs/"])
def test_nothing_is_written_in_a_folder_that_steers_an_agent_or_git(
        root: Path, name: str, depth: str) -> None:
    for spelled in _spellings(name):
        for target in (f"{depth}{spelled}/settings.json", f"{depth}{spelled}/hooks/x"):
            assert code_of(lambda t=target: paths.write(t, "x", root, "--out")) == \
                "path_protected"
            assert code_of(lambda t=target: paths.folder(t, root, "a debate folder",
                                                         create=True)) == "path_protected"
        assert not (root / f"{depth}{spelled}").exists()


@pytest.mark.parametrize("given", ["d" * 256, f"docs/{'é' * 128}/x", "/".join(["d" * 200] * 21)])
def test_a_name_or_path_too_long_for_a_file_system_is_refused_untouched(
        root: Path, given: str) -> None:
    assert code_of(lambda: paths.write(given, "x", root, "--out")) == "path_too_long"
    assert code_of(lambda: paths.folder(given, root, "a folder", create=True)) == \
        "path_too_long"
    assert list(root.rglob("*")) == [root / "docs"]
