"""A hard link in the inbox is refused like a symbolic one (issue 21).

`.sparring/inbox/round.md` made a second name of `~/.ssh/id_rsa` (`ln`, where the system
lets a process that may write the project do so) is a plain regular file inside the
project by its path: every verb read it, sent it to Codex and copied it into the session
or the debate folder, which is committed. A file the runner reads must be the project's
alone: one with other names is `path_is_link`, and nothing of it leaves.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from test_confinement import VERBS_THAT_READ, home, home_unchanged, leaks

__all__ = ["home"]  # the fixture, shared with test_confinement


@pytest.mark.parametrize("verb, argv", VERBS_THAT_READ, ids=[v for v, _ in VERBS_THAT_READ])
def test_a_hard_link_planted_in_the_inbox_is_never_read(
        verb: str, argv: Callable[[str, Path], list[str]], sparring: Any, repo: Path,
        scratch: Path, home: Path, fake_codex: Any) -> None:
    sid = sparring("init", "--skill", "think-about").out["session"]
    planted = scratch / "round.md"
    os.link(home / ".ssh" / "id_rsa", planted)
    refused = sparring(*argv(sid, planted))
    assert refused.error_code == "path_is_link", refused.raw
    assert "hard link" in refused.out["error"]["message"]
    assert leaks(refused, fake_codex, repo) == [str(planted)]  # only the link itself
    home_unchanged(home)


def test_a_hard_linked_round_file_in_the_debate_folder_is_not_read(
        sparring: Any, repo: Path, scratch: Path, home: Path, fake_codex: Any) -> None:
    sparring("debate", "new", "debate", "Redis or SQLite?")
    os.link(home / ".ssh" / "id_rsa", repo / "debate" / "round-0-claude.md")
    refused = sparring("debate", "round", "debate")
    assert refused.error_code == "path_is_link", refused.raw
    assert fake_codex.turn_calls() == []
