"""The agreement audit's rules, on records built by hand (workflows/audit.py); the workflows'
own records are tested through the CLI (test_audit_structured.py, test_audit_prose.py)."""

from __future__ import annotations

from pathlib import Path

from sparring.workflows.audit import Entry, Record, compute


def test_a_record_without_points_says_it_cannot_be_audited(tmp_path: Path) -> None:
    audit = compute(Record([]), tmp_path)
    assert audit["summary"] == ("Agreement: no points on record (no round marked any), so how it "
                                "was reached cannot be audited.")
    assert audit["unchallenged"] is False and audit["points"] == []


def test_evidence_is_compared_as_cited_and_a_line_range_must_exist(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("one\ntwo\nthree")  # no newline at the end: three lines
    audit = compute(Record([
        Entry("X-1", "codex", 1, "agree", "claim", ("./a.py:2",)),
        Entry("X-1", "claude", 1, "disagree"),
        Entry("X-1", "claude", 2, "refine", evidence=("`a.py:2`", "a.py:2-3", "a.py:3-4")),
    ]), tmp_path)
    (concession,) = audit["concessions"]
    assert (concession["from"], concession["to"], concession["flag"]) == ("disagree", "refine",
                                                                         None)
    assert [(e["checked"], e["new"]) for e in concession["evidence"]] == [
        (True, False), (True, True), (False, True)]
    assert concession["evidence"][2]["why"] == "a.py has 3 lines, not 4"
    assert audit["moved"]["claude"]["directions"] == {"disagree -> refine": 1}


def test_the_last_side_to_concede_is_the_outcome_and_nobody_made_every_concession(
        tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n" * 10)
    audit = compute(Record([
        Entry("C-1", "claude", 0, "agree", "claim"),
        Entry("C-1", "codex", 1, "disagree"),
        Entry("C-1", "claude", 1, "disagree", evidence=("a.py:1",)),
        Entry("C-1", "codex", 2, "agree", evidence=("a.py:2",)),
        Entry("C-1", "claude", 2, "agree", evidence=("a.py:3",)),
    ]), tmp_path)
    assert [(c["side"], c["round"]) for c in audit["concessions"]] == [
        ("codex", 2), ("claude", 2)]
    assert audit["points"][0]["outcome"] == "conceded_by_claude"
    assert audit["moved"]["sentence"] is None
    assert audit["counts"]["with_new_evidence"] == 2


def test_a_brief_keeps_a_disputed_point_open_and_a_sealed_link_needs_agreement(
        tmp_path: Path) -> None:
    entries = [Entry("X-1", "claude", 0, "agree", "held", source="sealed analysis (C-1)"),
               Entry("X-1", "codex", 1, "agree", "claim"),
               Entry("X-1", "claude", 1, "agree"),
               Entry("X-2", "codex", 1, "agree", "other"),
               Entry("X-2", "claude", 1, "disagree")]
    named = compute(Record(entries, sealed={"X-1": "C-1"}, brief=frozenset({"X-2"}),
                           check=CLEAN), tmp_path)
    assert [(p["id"], p["outcome"], p["independent"]) for p in named["points"]] == [
        ("X-1", "agreed", True), ("X-2", "open", False)]
    left_out = compute(Record(entries, sealed={"X-1": "C-1"}, brief=frozenset(), check=CLEAN),
                       tmp_path)
    assert left_out["points"][1]["outcome"] == "dropped"
    challenged = compute(Record([*entries, Entry("X-1", "codex", 2, "disagree"),
                                 Entry("X-1", "codex", 3, "agree")], sealed={"X-1": "C-1"},
                                check=CLEAN), tmp_path)
    assert challenged["points"][0]["independent"] is False


# The runner's check of Codex's round one, as `seal` records it (turn/independence.py).
CLEAN = {"checked_at": 1.0, "turns": [1], "words": 8, "commands": 2, "items": 2, "bytes": 300,
         "seen": [], "unchecked": None, "project_files_read": 0}
SEEN = {**CLEAN, "seen": [{"turn": 1, "command": "`grep -rI 'needs a sweep' /tmp`",
                           "saw": "analysis",
                           "detail": "its output holds Claude's analysis: \"...\""}]}


def test_a_point_is_independent_only_when_the_runners_check_found_nothing(
        tmp_path: Path) -> None:
    """The same record, agreed throughout and linked to the sealed analysis: independent with
    a clean check on record; not without one (an earlier sparring never checked), nor when
    the check found Codex saw the analysis, which the line at the top of the report says,
    naming the command."""
    entries = [Entry("X-1", "claude", 0, "agree", "held", source="sealed analysis (C-1)"),
               Entry("X-1", "codex", 1, "agree", "claim"),
               Entry("X-1", "claude", 1, "agree")]
    clean = compute(Record(entries, sealed={"X-1": "C-1"}, check=CLEAN), tmp_path)
    assert clean["counts"]["independent"] == 1
    assert clean["independence"]["state"] == "checked"
    assert "2 commands and 2 outputs, 300 bytes" in clean["independence"]["why"]
    unchecked = compute(Record(entries, sealed={"X-1": "C-1"}), tmp_path)
    assert unchecked["counts"]["independent"] == 0
    assert unchecked["independence"]["state"] == "not_measured"
    assert "not on record" in unchecked["independence"]["why"]
    void = compute(Record(entries, sealed={"X-1": "C-1"}, check=SEEN), tmp_path)
    assert void["counts"]["independent"] == 0 and void["points"][0]["independent"] is False
    assert void["independence"]["state"] == "void"
    assert void["independence"]["seen"] == SEEN["seen"]
    assert void["summary"].startswith(
        "Agreement: independence void (in round one Codex's command `grep -rI 'needs a sweep' "
        "/tmp` showed it text of Claude's analysis), 0 points independent, 1 agreed on first "
        "reading")
    missing = compute(Record(entries, sealed={"X-1": "C-1"}, check={
        **CLEAN, "unchecked": "Codex's events of round one are missing (turn 1)"}), tmp_path)
    assert missing["independence"]["state"] == "not_measured"
    assert missing["counts"]["independent"] == 0
