"""The `sparring` command as a person meets it: help that leads with what they type, and
text on a terminal where a program gets JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.terminal import on_a_terminal


def test_bare_sparring_prints_its_help_as_text_leading_with_what_a_person_types(
        repo: Path, sparring: Any) -> None:
    status, shown = on_a_terminal(repo)
    bare = sparring()

    assert status == 0 and bare.exit_code == 0
    assert bare.out == {} and bare.raw == sparring("--help").raw  # text, not a JSON error
    assert shown.startswith("Usage: sparring "), shown
    people, runner = shown.index("\nFor you:\n"), shown.index("\nFor the skills:\n")
    assert people < runner
    assert shown.index("sparring doctor") < shown.index("sparring init")
    listed = shown[people:runner]
    assert "  doctor " in listed and "  status " in listed and "  init " not in listed
    assert "install.py --project" in shown and "--uninstall" in shown


def test_status_on_a_terminal_is_a_table_and_for_a_program_json(
        repo: Path, sparring: Any) -> None:
    made = sparring("init", "--skill", "think-about").out["session"]

    status, table = on_a_terminal(repo, "status")
    assert status == 0 and not table.lstrip().startswith("{"), table
    head, row = table.splitlines()[:2]
    assert head.split() == ["SESSION", "SKILL", "STATUS", "ROUNDS", "CREATED", "TOKENS",
                            "BUDGET"]
    assert row.split()[:4] == [made, "think-about", "new", "0"]
    piped = sparring("status")
    assert piped.out["sessions"][0]["session"] == made
    assert json.loads(on_a_terminal(repo, "status", "--json")[1])["sessions"]


def test_one_session_on_a_terminal_shows_its_facts_and_the_next_step(
        repo: Path, sparring: Any) -> None:
    made = sparring("init", "--skill", "think-about").out["session"]

    status, text = on_a_terminal(repo, "status", made)
    facts = dict(line.split(":", 1) for line in text.splitlines() if line.strip())
    assert status == 0 and facts["session"].strip() == made, text
    assert facts["status"].strip() == "new" and facts["tokens"].strip() == "0"
    assert facts["codex"].strip() == "Codex did not run"
    assert f"sparring start {made} " in facts["next"], text  # what to type to go on
    assert sparring("status", made).out["next"] == facts["next"].strip()
