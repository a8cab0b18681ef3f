"""The agreement audit's rules, on records built by hand (workflows/audit.py); the workflows'
own records are tested through the CLI (test_audit_structured.py, test_audit_prose.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparring.workflows.audit import Entry, Record, compute, qualified


def test_a_record_without_points_says_it_cannot_be_audited(tmp_path: Path) -> None:
    audit = compute(Record([]), tmp_path)
    assert audit["summary"] == ("Agreement: no points on record (no round marked any), so how it "
                                "was reached cannot be audited.")
    assert audit["unchallenged"] is False and audit["points"] == []


STORE = "import redis\n\nTTL = 30\nttl = refresh(ttl)  # on every read\nREPLICAS = 3\n"


def q(cite: str, quote: str) -> dict[str, str]:
    return {"cite": cite, "quote": quote}


def test_a_concession_is_backed_by_new_evidence_that_holds_whoever_brought_it(
        tmp_path: Path) -> None:
    """Claude disagrees in round 1; Codex brings a new line in round 2; Claude concedes
    citing exactly that line: persuasion, not capitulation."""
    (tmp_path / "store.py").write_text(STORE)
    reads = {2: [("cat store.py", STORE)]}
    audit = compute(Record([
        Entry("X-1", "codex", 1, "agree", "TTLs refresh on every read", (q("store.py:3",
                                                                              "TTL = 30"),)),
        Entry("X-1", "claude", 1, "disagree", note="reads do not write", mind="a write on read"),
        Entry("X-1", "codex", 2, "agree", evidence=(q("store.py:4", "ttl = refresh(ttl)"),)),
        Entry("X-1", "claude", 2, "agree", evidence=("store.py:4",)),
    ], reads=reads), tmp_path)
    (concession,) = audit["concessions"]
    assert (concession["side"], concession["from"], concession["to"]) == (
        "claude", "disagree", "agree")
    assert concession["flag"] is None and concession["new_evidence"] is True
    (item,) = concession["evidence"]
    assert (item["mark"], item["new"], item["quote"]) == ("verified", True, "ttl = refresh(ttl)")
    assert audit["points"][0]["outcome"] == "agreed"
    assert audit["points"][0]["conceded_by"] == "claude"
    (dissent,) = audit["minority"]
    assert (dissent["argument"], dissent["would_change_my_mind"]) == (
        "reads do not write", "a write on read")
    # round 1's Codex citation: the file was not opened in round 1 (reads name round 2 only)
    first = audit["points"][0]["stances"][0]["evidence"][0]
    assert (first["mark"], first["cited"]) == ("unread", 'store.py:3 "TTL = 30"')


@pytest.mark.parametrize(("cited", "mark", "flag"), [
    # evidence on the record when Claude disagreed (its quote borrowed from Codex's citation)
    ("store.py:3", "verified", True),
    ("store.py:4", "unquoted", True),  # new, but no quote: it checks nothing
    (q("store.py:5", "REPLICAS = 3"), "verified", False),  # a line nobody cited: new
    (q("store.py:5", "REPLICAS = 4"), "not_matching", True),  # the quote is not there
    (q("store.py:1", "REPLICAS = 3"), "not_matching", True),  # line 5, not within two of 1
    (q("store.py:9", "x = 1"), "not_matching", True),  # the file has 5 lines
    ("https://sqlite.org/wal.html", "unchecked", True),  # a URL nobody ran a search for
])
def test_what_backs_a_concession(tmp_path: Path, cited: Any, mark: str, flag: bool) -> None:
    (tmp_path / "store.py").write_text(STORE)
    audit = compute(Record([
        Entry("X-1", "codex", 1, "agree", "claim", (q("store.py:3", "TTL = 30"),)),
        Entry("X-1", "claude", 1, "disagree"),
        Entry("X-1", "claude", 2, "agree", evidence=(cited,)),
    ], reads={1: [("cat store.py", STORE)]}), tmp_path)
    (concession,) = audit["concessions"]
    item = concession["evidence"][0]
    assert item["mark"] == mark, item
    assert (concession["flag"] is not None) is flag


def test_both_sides_rejecting_a_claim_is_its_own_outcome(tmp_path: Path) -> None:
    (tmp_path / "ttl.py").write_text("EXPIRE = True\n")
    audit = compute(Record([
        Entry("C-1", "claude", 0, "agree", "sessions need a sweep job"),
        Entry("C-1", "codex", 1, "disagree", evidence=(q("ttl.py:1", "EXPIRE = True"),)),
        Entry("C-1", "claude", 1, "withdraw", evidence=("ttl.py:1",), note="they expire"),
        Entry("C-2", "claude", 1, "withdraw", "a second thought", note="covered by C-1"),
    ], reads={1: [("rg EXPIRE", "ttl.py:1:EXPIRE = True")]}), tmp_path)
    rows = {p["id"]: p for p in audit["points"]}
    assert (rows["C-1"]["outcome"], rows["C-1"]["conceded_by"]) == ("rejected", "claude")
    assert rows["C-2"]["outcome"] == "withdrawn"
    assert audit["counts"]["rejected"] == 2 and audit["counts"]["agreed_on_first_reading"] == 0
    assert "2 rejected by both" in audit["summary"]
    assert audit["concessions"][0]["flag"] is None  # Codex's line, opened by its search
    assert audit["contested"] == []


def test_an_agreement_resting_on_a_flagged_concession_is_contested(tmp_path: Path) -> None:
    audit = compute(Record([
        Entry("X-1", "codex", 1, "agree", "claim"),
        Entry("X-1", "claude", 1, "disagree"),
        Entry("X-1", "claude", 2, "agree"),
    ]), tmp_path)
    assert audit["contested"] == [{"point": "X-1", "why": "settled by Claude's concession "
                                   "without new evidence"}]
    assert qualified(audit, challenged=False) == (
        "contested", ["contested: X-1 (settled by Claude's concession without new evidence)"])
    assert audit["moved"]["one_sided"] == "claude"
    never = compute(Record([Entry("X-1", "codex", 1, "agree", "claim"),
                            Entry("X-1", "claude", 1, "agree")]), tmp_path)
    assert never["unchallenged"] and qualified(never, challenged=False)[0] == "unchallenged"
    assert qualified(never, challenged=True) == (None, [])


def test_each_side_conceding_a_point_and_nobody_made_every_concession(
        tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("".join(f"line {n} of a\n" for n in range(1, 11)))
    reads = {n: [("cat a.py", "")] for n in (1, 2)}
    audit = compute(Record([
        Entry("C-1", "claude", 0, "agree", "claim"),
        Entry("C-1", "codex", 1, "disagree"),
        Entry("X-1", "codex", 1, "agree", "other"),
        Entry("X-1", "claude", 1, "disagree", evidence=(q("a.py:1", "line 1 of a"),)),
        Entry("C-1", "claude", 1, "agree"),
        Entry("C-1", "codex", 2, "agree", evidence=(q("a.py:2", "line 2 of a"),)),
        Entry("X-1", "claude", 2, "agree", evidence=(q("a.py:3", "line 3 of a"),)),
    ], reads=reads), tmp_path)
    assert [(c["side"], c["point"], c["round"]) for c in audit["concessions"]] == [
        ("codex", "C-1", 2), ("claude", "X-1", 2)]
    assert [(p["id"], p["outcome"], p["conceded_by"]) for p in audit["points"]] == [
        ("X-1", "agreed", "claude"), ("C-1", "agreed", "codex")]
    assert audit["moved"]["sentence"] is None and audit["moved"]["one_sided"] is None
    assert audit["counts"]["with_new_evidence"] == 2
    # Codex's move back to a point its owner gave up is no concession: it moves away
    away = compute(Record([
        Entry("C-1", "claude", 0, "agree", "claim"),
        Entry("C-1", "codex", 1, "disagree"),
        Entry("C-1", "claude", 1, "withdraw", note="fair"),
        Entry("C-1", "codex", 2, "agree"),
    ]), tmp_path)
    assert [c["side"] for c in away["concessions"]] == ["claude"]
    assert away["points"][0]["outcome"] == "open"


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
