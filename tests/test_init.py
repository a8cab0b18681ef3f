"""`sparring init`: sessions under a self-ignoring .sparring/, unique ids."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sparring.errors import CODES
from sparring.workflows.registry import SKILLS
from support.gitrepo import git


def test_init_creates_a_self_ignoring_state_dir(sparring: Any, repo: Path) -> None:
    result = sparring("init", "--skill", "think-about")
    assert result.exit_code == 0
    out = result.out
    assert out["ok"] and out["verb"] == "init" and out["git"] is True
    assert Path(out["session_dir"]).is_dir()
    assert Path(out["session_dir"]).parent.parent == repo / ".sparring"
    assert (repo / ".sparring" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    ignored = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all")
    assert {line[3:].split("/")[0] for line in ignored.splitlines()} == {".sparring"}


def test_init_in_a_subdirectory_uses_the_repository_root(sparring: Any, repo: Path,
                                                         monkeypatch: Any) -> None:
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    result = sparring("init", "--skill", "dual-model", "--cwd", str(sub))
    assert result.out["root"] == str(repo) and result.out["cwd"] == str(sub)


def test_init_outside_git_uses_the_folder(sparring: Any, tmp_path: Path,
                                          monkeypatch: Any) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    monkeypatch.chdir(folder)
    result = sparring("init", "--skill", "arch-debate")
    assert result.exit_code == 0 and result.out["git"] is False
    assert (folder / ".sparring" / "sessions" / result.out["session"]).is_dir()


def test_unknown_skill_is_a_usage_error_in_json(sparring: Any, repo: Path) -> None:
    result = sparring("init", "--skill", "brainstorm")
    assert result.exit_code == 2
    assert result.out["error"]["code"] == "usage_error"
    assert "brainstorm" in result.out["error"]["message"]
    assert "sparring init --help" in result.out["error"]["hint"]


def test_twenty_concurrent_inits_get_twenty_ids(repo: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-m", "sparring", "init", "--skill",
                               "think-about"], cwd=repo, stdout=subprocess.PIPE)
             for _ in range(20)]
    ids = [json.loads(p.communicate(timeout=60)[0])["session"] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(ids)) == 20
    assert len(list((repo / ".sparring" / "sessions").iterdir())) == 20


# Every verb that takes a session, as a call on one that `init` alone made (files empty).
_ON_A_SESSION = (("start", "{sid}"), ("resume", "{sid}"), ("resume", "{sid}", "--recover"),
                 ("poll", "{sid}"), ("wait", "{sid}", "--timeout", "0"), ("status", "{sid}"),
                 ("seal", "{sid}", "--file", "{empty}"),
                 ("verdict", "{sid}", "--file", "{empty}"), ("report", "{sid}"),
                 ("debate", "status", "{sid}"), ("discuss", "status", "{sid}"),
                 ("discuss", "round", "{sid}", "--file", "{empty}"),
                 ("discuss", "synthesis", "{sid}"), ("discuss", "report", "{sid}"),
                 ("guard", "accept", "{sid}"), ("guard", "revert", "--session", "{sid}"),
                 ("status",), ("status", "--open"), ("stop", "{sid}"), ("finalize", "{sid}"))


@pytest.mark.parametrize("skill", SKILLS)
def test_every_verb_on_a_session_init_alone_made_answers_with_a_stable_code(
        sparring: Any, fake_codex: Any, repo: Path, scratch: Path, skill: str) -> None:
    """An arch-debate (or any) session that `init` made without its workflow's own `new`:
    nothing crashes, the project's `status` lists it with what to do, and every refusal is
    a documented code."""
    fake_codex.mode("ok")
    sid = sparring("init", "--skill", skill).out["session"]
    (scratch / "empty.md").write_text("x\n")
    for call in _ON_A_SESSION:
        argv = [word.format(sid=sid, empty=scratch / "empty.md") for word in call]
        out = sparring(*argv, input=b"a question").out
        if not out["ok"]:
            assert out["error"]["code"] in CODES and out["error"]["code"] != "internal_error", \
                (argv, out)
        if argv[0] in ("start", "resume") and out["ok"]:
            sparring("wait", sid, "--timeout", "30")
    listed = sparring("status").out
    assert listed["ok"] and [row["session"] for row in listed["sessions"]] == [sid]


def test_a_sparring_folder_above_never_takes_a_session_outside_git(
        sparring: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """A `.sparring/` left above (in /tmp, in the home folder, another folder's) is not the
    project's: outside git a session lands in the working folder, and the one above is
    neither listed nor found by its id."""
    above = tmp_path / "shared"
    (above / "work" / "deep").mkdir(parents=True)
    monkeypatch.chdir(above)
    stray = sparring("init", "--skill", "think-about").out["session"]
    assert (above / ".sparring" / "sessions" / stray).is_dir()
    monkeypatch.chdir(above / "work")
    result = sparring("init", "--skill", "think-about")
    assert result.out["root"] == str(above / "work") and result.out["git"] is False
    assert (above / "work" / ".sparring" / "sessions" / result.out["session"]).is_dir()
    assert sparring("status", stray).error_code == "session_not_found"
    assert sparring("status", result.out["session"]).exit_code == 0


@pytest.mark.parametrize("kind", ["worktree", "submodule"])
def test_a_worktree_or_submodule_is_its_own_project_and_finds_its_sessions_by_id(
        sparring: Any, repo: Path, tmp_path: Path, monkeypatch: Any, kind: str) -> None:
    """Its `.git` file makes it the root, as git takes it (a session of the repository
    around it is not its own); from a folder below, `--session`-style lookup by id finds the
    project's sessions."""
    if kind == "worktree":
        top = tmp_path / "wt"
        git(repo, "worktree", "add", "-q", str(top))
    else:
        other = tmp_path / "lib"
        git(tmp_path, "clone", "-q", str(repo), str(other))
        git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other),
            "lib")
        top = repo / "lib"
    assert (top / ".git").is_file()
    outer = sparring("init", "--skill", "dual-model").out["session"]  # in the repository
    (top / "src").mkdir()
    monkeypatch.chdir(top / "src")
    result = sparring("init", "--skill", "dual-model")
    assert result.out["root"] == str(top) and result.out["git"] is True
    assert sparring("status", result.out["session"]).exit_code == 0
    assert sparring("status", outer).error_code == "session_not_found"


def test_an_empty_git_folder_is_no_repository(sparring: Any, repo: Path,
                                              monkeypatch: Any) -> None:
    """git looks past a `.git` folder that is no repository (no HEAD, objects, refs), and so
    does sparring: the root is the repository above."""
    (repo / "sub" / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo / "sub")
    assert sparring("init", "--skill", "dual-model").out["root"] == str(repo)
