"""How the agreement was reached, in arch-debate and deep-discussion: their prose rounds name
points in lines of their own (`- C-1 agree: … Evidence: path:line "the line"`), and the
runner audits them: a point both sides reject is rejected by both, each citation is marked
(its quote checked against the file, Codex's reads checked against what it ran), each
concession is backed by new evidence that holds or flagged, and the outcome follows the
audit (`contested`, `unchallenged`). Scripted debates through the CLI against the fake
codex, each asserting the record's JSON, its markdown and what the verb printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.debates import ArchDebate, Discussion

SECTION = "## How the agreement was reached"
NOT_INDEPENDENT_ARCH = ("Codex reads Claude's opening round (round 0) before it writes its "
                        "first, so no point is reached by both sides on their own in an "
                        "arch-debate")
UNCHALLENGED = "unchallenged: no point was ever disputed"  # prose workflows run no challenge
NOT_NEW = "not new: it was on the record for this point before the move"


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "src").mkdir()
    (repo / "src" / "store.py").write_text("import sqlite3\nDB = 'sessions.db'\n")
    (repo / "src" / "load.py").write_text("# measured\nWRITES = 200\nPEAK = 450\n")
    return repo


@pytest.fixture
def arch(sparring: Any, fake_codex: Any, project: Path) -> ArchDebate:
    return ArchDebate(sparring, fake_codex, project)


def reading(path: str, reply: str) -> dict[str, str]:
    """A Codex round that opens `path` (a command on its thread) before it answers."""
    return {"mode": "commands", "command": f"/bin/bash -lc 'cat {path}'", "reply": reply}


class Record:
    """An ended arch-debate: its audit, its record's markdown and JSON, and `debate status`."""

    def __init__(self, arch: ArchDebate) -> None:
        self.status = arch.status()
        assert self.status["step"] == "agreed", self.status
        agreed = Path(self.status["agreed"]["file"])
        self.text = agreed.read_text()
        self.model = json.loads(agreed.with_suffix(".json").read_text())
        self.audit = self.model["agreement_audit"]


def debate(arch: ArchDebate, claude: list[str], codex: list[Any]) -> Record:
    """Claude's rounds 0..n and Codex's 1..n, alternating; the debate must end agreed."""
    arch.fake.script(codex)
    for n, text in enumerate(claude):
        arch.write(n, text)
        if n < len(codex):
            arch.codex_round()
    return Record(arch)


def stances(point: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(s["round"], s["side"], s["stance"], s["source"],
             [(e["cited"], e["mark"]) for e in s["evidence"]]) for s in point["stances"]]


def outcomes(audit: dict[str, Any]) -> list[tuple[str, str, str | None, bool]]:
    return [(p["id"], p["outcome"], p["conceded_by"], p["rests_on_flag"])
            for p in audit["points"]]


def summary(*, first: int = 0, backed: int = 0, flagged: str = "", rejected: int = 0,
            still: int = 0, dropped: int = 0) -> str:
    without = f"1 conceded without new evidence ({flagged})" if flagged else \
        "0 conceded without new evidence"
    return (f"Agreement: 0 points independent, {first} agreed on first reading, {backed} "
            f"reached with new evidence, {without}, {rejected} rejected by both, {still} "
            f"still open, {dropped} dropped.")


def test_arch_debate_agreed_with_nothing_disputed_is_unchallenged(arch: ArchDebate) -> None:
    done = debate(arch, [
        "SQLite, because we already ship it.\n\n- C-1 agree: SQLite handles our load. "
        'Evidence: src/load.py:2 "WRITES = 200"\n',
        "AGREED: SQLite for sessions.\n\n- C-1 agree: confirmed.\n"],
        [reading("src/load.py", "AGREED: SQLite for sessions.\n\n- C-1 agree: it does. "
                                'Evidence: src/load.py:2 "WRITES = 200"\n')])
    audit = done.audit
    (point,) = audit["points"]
    assert (point["id"], point["claim"], point["outcome"], point["disputed"]) == (
        "C-1", "SQLite handles our load.", "agreed", False)
    assert stances(point) == [
        (0, "claude", "agree", "round-0-claude.md:3", [('src/load.py:2 "WRITES = 200"',
                                                        "verified")]),
        (1, "codex", "agree", "round-1-codex.md:3", [('src/load.py:2 "WRITES = 200"',
                                                      "verified")]),
        (1, "claude", "agree", "round-1-claude.md:3", [])]
    assert audit["unchallenged"] is True and audit["concessions"] == []
    assert audit["independence"] == {"state": "not_measured", "why": NOT_INDEPENDENT_ARCH,
                                     "seen": []}
    line = summary(first=1) + " Unchallenged: no point was ever disputed."
    assert audit["summary"] == line
    assert f"_{line}_" in done.text.split("Proposed by", 1)[0], "at the top of the brief"
    # The outcome follows the audit: in the markdown, the JSON and the verb's output.
    assert f"**Outcome: UNCHALLENGED** — {UNCHALLENGED}" in done.text
    assert (done.model["outcome"], done.model["outcome_reasons"]) == (
        "unchallenged", [UNCHALLENGED])
    assert (done.status["outcome"], done.status["outcome_reasons"]) == (
        "unchallenged", [UNCHALLENGED])
    assert done.status["next"].startswith(f"agreed, but {UNCHALLENGED}: show the user")
    section = done.text.split(SECTION, 1)[1]
    assert f"Independence is not measured here: {NOT_INDEPENDENT_ARCH}." in section
    assert "**Unchallenged**" in section
    assert '`src/load.py:2 "WRITES = 200"` [verified]' in section


CONCEDING_CLAUDE = [
    "SQLite, because we already ship it.\n\n- C-1 agree: SQLite is enough.\n",
    "The peak is the weak spot.\n\n- X-1 disagree: the comment claims a measurement nobody "
    'ran. Evidence: src/load.py:1 "# measured"\n',
]
CONCEDING_CODEX = [
    reading("src/load.py", "Agreed on SQLite.\n\n- C-1 agree: yes.\n- X-1 agree: Peak writes "
                           'stay under 500/s. Evidence: src/load.py:3 "PEAK = 450"\n'),
    # Its thread opened src/load.py in round one: the quote checks out without a new read.
    'AGREED: SQLite for sessions.\n\n- X-1 agree: it was. Evidence: src/load.py:3 "PEAK = 450"\n',
]


def test_arch_debate_claude_persuaded_by_codexs_new_evidence_is_backed(
        arch: ArchDebate) -> None:
    done = debate(arch, [*CONCEDING_CLAUDE, "AGREED: SQLite for sessions.\n\n- X-1 agree: "
                         "one file takes them. Evidence: src/store.py:2\n"], [
        CONCEDING_CODEX[0],
        reading("src/store.py", "AGREED: SQLite for sessions.\n\n- X-1 agree: one file. "
                                "Evidence: src/store.py:2 \"DB = 'sessions.db'\"\n")])
    audit = done.audit
    (concession,) = audit["concessions"]
    assert {k: concession[k] for k in ("point", "side", "round", "from", "to", "new_evidence",
                                       "flag")} == {
        "point": "X-1", "side": "claude", "round": 2, "from": "disagree", "to": "agree",
        "new_evidence": True, "flag": None}
    # Claude cited the line without its quote: it borrows the quote Codex brought with it.
    (item,) = concession["evidence"]
    assert (item["cited"], item["mark"], item["new"], item["counts"]) == (
        "src/store.py:2", "verified", True, True)
    assert item["quote"] and item["quote"].startswith("DB = 'sessions.db")
    assert outcomes(audit) == [("X-1", "agreed", "claude", False),
                               ("C-1", "agreed", None, False)]
    assert audit["points"][0]["claim"] == "Peak writes stay under 500/s."
    assert audit["moved"]["sentence"] == ("Claude made every concession (1); Codex never "
                                          "moved from a position it held.")
    assert audit["summary"] == summary(first=1, backed=1)
    assert "**Claude made every concession (1); Codex never moved" in done.text
    assert "**Outcome: AGREED**\n" in done.text
    assert (done.model["outcome"], done.status["outcome"]) == ("agreed", "agreed")
    assert done.status["outcome_reasons"] == []
    assert done.status["next"] == ("agreed: show the user the agreed brief and commit the "
                                   "debate folder")


def test_the_minority_report_keeps_the_conceding_sides_last_argument(arch: ArchDebate) -> None:
    done = debate(arch, [*CONCEDING_CLAUDE, "AGREED: SQLite for sessions.\n\n- X-1 agree: "
                         "fine.\n"], CONCEDING_CODEX)
    (dissent,) = done.audit["minority"]
    assert {k: v for k, v in dissent.items() if k != "evidence"} == {
        "point": "X-1", "side": "claude", "round": 2, "gave_up": "disagree → agree",
        "argument": "the comment claims a measurement nobody ran.",
        "would_change_my_mind": "", "flag": "conceded_without_new_evidence"}
    assert [(e["cite"], e["quote"], e["mark"]) for e in dissent["evidence"]] == [
        ("src/load.py:1", "# measured", "verified")]
    section = done.text.split("### Dissent given up", 1)[1]
    assert ('- **X-1**, Claude (disagree → agree, round 2): "the comment claims a measurement '
            'nobody ran." — evidence: `src/load.py:1 "# measured"` [verified]') in section


@pytest.mark.parametrize("cited, marks", [
    ("", []),
    # the line Codex cited on X-1 already (its quote borrowed), and a line the file lacks
    (" Evidence: src/load.py:3; src/load.py:40",
     [("src/load.py:3", "verified", NOT_NEW),
      ("src/load.py:40", "not_matching", "src/load.py has 3 lines, not 40")]),
    # a quote that does not match its line
    (" Evidence: src/store.py:2 \"DB = 'redis.db'\"",
     [("src/store.py:2 \"DB = 'redis.db'\"", "not_matching",
       "the quote is not within 2 lines of src/store.py:2")]),
])
def test_an_agreed_debate_resting_on_a_flagged_concession_is_contested(
        arch: ArchDebate, cited: str, marks: list[tuple[str, str, str]]) -> None:
    arch.fake.script(CONCEDING_CODEX)
    for n, text in enumerate(CONCEDING_CLAUDE):
        arch.write(n, text)
        arch.codex_round()
    # The last round handed in as the skill does: its reply says where the debate stands.
    last = arch.dir.parent / "last-round.md"
    last.write_text(f"AGREED: SQLite for sessions.\n\n- X-1 agree: fine.{cited}\n")
    settled = arch.sparring("debate", "round", str(arch.dir), "--file", str(last))
    assert settled.exit_code == 0 and settled.out["started"] is False, settled.raw
    reasons = ["contested: X-1 (settled by Claude's concession without new evidence)"]
    assert (settled.out["debate"]["outcome"], settled.out["debate"]["outcome_reasons"]) == (
        "contested", reasons)
    done = Record(arch)
    (concession,) = done.audit["concessions"]
    assert concession["flag"] == "conceded_without_new_evidence"
    assert [(e["cited"], e["mark"], e["why"]) for e in concession["evidence"]] == marks
    assert outcomes(done.audit) == [("X-1", "agreed", "claude", True),
                                    ("C-1", "agreed", None, False)]
    assert done.audit["contested"] == [
        {"point": "X-1", "why": "settled by Claude's concession without new evidence"}]
    assert done.audit["summary"] == summary(first=1, flagged="Claude, X-1")
    assert "- **X-1**, Claude, round 2: disagree → agree — **conceded without new evidence**" \
        in done.text
    for cite, mark, _ in marks:
        shown = {"verified": "verified", "not_matching": "quote does not match"}[mark]
        assert f"`{cite}` [{shown}]" in done.text
    assert f"**Outcome: CONTESTED** — {reasons[0]}" in done.text
    assert (done.model["outcome"], done.model["outcome_reasons"]) == ("contested", reasons)
    assert (done.status["outcome"], done.status["outcome_reasons"]) == ("contested", reasons)
    assert done.status["next"].startswith(f"agreed, but {reasons[0]}: show the user")


@pytest.mark.parametrize("opened, mark, flag", [
    (False, "unread", "conceded_without_new_evidence"),
    (True, "verified", None),
])
def test_a_codex_citation_of_a_file_it_never_opened_is_unread(
        arch: ArchDebate, opened: bool, mark: str, flag: str | None) -> None:
    reply = ("AGREED: SQLite for sessions.\n\n- C-1 agree: the store is SQLite already. "
             'Evidence: src/store.py:1 "import sqlite3"\n')
    done = debate(arch, [
        'SQLite.\n\n- C-1 agree: SQLite is enough. Evidence: src/load.py:2 "WRITES = 200"\n',
        "- C-1 agree: still SQLite.\n",
        "AGREED: SQLite for sessions.\n"], [
        "- C-1 disagree: Redis is already there.\n",
        reading("src/store.py", reply) if opened else reply])
    (concession,) = done.audit["concessions"]
    assert (concession["side"], concession["point"], concession["flag"]) == ("codex", "C-1",
                                                                             flag)
    (item,) = concession["evidence"]
    assert (item["cited"], item["mark"]) == ('src/store.py:1 "import sqlite3"', mark)
    if opened:
        assert done.model["outcome"] == "agreed" and "**Outcome: AGREED**" in done.text
        assert '`src/store.py:1 "import sqlite3"` [verified]' in done.text
        return
    assert item["why"] == "no command Codex ran on its thread by round 2 opened src/store.py"
    assert '`src/store.py:1 "import sqlite3"` [file never opened by Codex]' in done.text
    assert (done.model["outcome"], done.status["outcome"]) == ("contested", "contested")
    assert done.status["outcome_reasons"] == [
        "contested: C-1 (settled by Codex's concession without new evidence)"]


def test_arch_debate_codex_concedes_with_a_command_it_ran(arch: ArchDebate) -> None:
    done = debate(arch, [
        'SQLite.\n\n- C-1 agree: SQLite holds the peak. Evidence: src/load.py:3 "PEAK = 450"\n',
        '- C-1 agree: the rate is 200. Evidence: src/load.py:2 "WRITES = 200"\n',
        "AGREED: SQLite for sessions.\n"], [
        "Too optimistic.\n\n- C-1 disagree: the peak is higher than that.\n",
        {"mode": "commands", "command": "/bin/bash -lc 'pytest tests/test_load.py'",
         "reply": "AGREED: SQLite for sessions.\n\n- C-1 agree: I ran it. "
                  "Evidence: `pytest tests/test_load.py`\n"}])
    (concession,) = done.audit["concessions"]
    assert (concession["point"], concession["side"], concession["round"], concession["from"],
            concession["to"], concession["flag"]) == ("C-1", "codex", 2, "disagree", "agree",
                                                      None)
    assert [(e["cited"], e["kind"], e["mark"], e["seen"], e["counts"])
            for e in concession["evidence"]] == [
        ("`pytest tests/test_load.py`", "command", "unchecked", True, True)]
    assert outcomes(done.audit) == [("C-1", "agreed", "codex", False)]
    assert done.audit["moved"]["codex"] == {"concessions": 1,
                                            "directions": {"disagree -> agree": 1}}
    assert "- **C-1**, Codex, round 2: disagree → agree — with new evidence" in done.text
    assert "[unchecked, seen in that round] (new)" in done.text
    assert done.model["outcome"] == "agreed"


@pytest.mark.parametrize("gives_up", ["withdraw", "disagree"])
def test_a_claim_both_sides_reject_is_rejected_by_both_and_the_debate_agrees(
        arch: ArchDebate, gives_up: str) -> None:
    """Claude withdraws its own C-1 (or rejects it: the owner's disagree reads the same)
    once Codex rejected it: settled as rejected by both, never among the agreed points."""
    done = debate(arch, [
        "SQLite.\n\n- C-1 agree: SQLite holds our 200 writes/s.\n"
        "- C-2 agree: Encrypt the session file.\n",
        f"- C-1 {gives_up}: the peak decides it, not the average. "
        'Evidence: src/load.py:3 "PEAK = 450"\n'
        "- C-2 withdraw: nothing secret is stored.\n- X-1 agree: yes.\n",
        "AGREED: keep Redis (X-1); C-1 is rejected by both.\n"], [
        reading("src/load.py", "- C-1 disagree: the peak is 450 writes/s. "
                               'Evidence: src/load.py:3 "PEAK = 450"\n- X-1 agree: Keep Redis.\n'),
        "AGREED: keep Redis (X-1); C-1 is rejected by both.\n"])
    audit = done.audit
    assert done.status["step"] == "agreed"
    assert outcomes(audit) == [("X-1", "agreed", None, False),
                               ("C-1", "rejected", "claude", False),
                               ("C-2", "withdrawn", None, False)]
    (concession,) = audit["concessions"]
    assert (concession["point"], concession["from"], concession["to"], concession["flag"]) == (
        "C-1", "agree", gives_up, None)
    assert audit["counts"]["rejected"] == 2
    assert audit["summary"] == summary(first=1, backed=1, rejected=2)
    assert [p["id"] for p in done.model["rejected_points"]] == ["C-1", "C-2"]
    assert (done.model["outcome"], done.status["outcome"]) == ("agreed", "agreed")
    rejected = done.text.split("## Rejected by both", 1)[1].split(SECTION, 1)[0]
    assert ("- **C-1** ~~SQLite holds our 200 writes/s.~~ — raised by Claude; rejected by "
            "both sides (Claude gave it up)") in rejected
    assert ("- **C-2** ~~Encrypt the session file.~~ — raised by Claude; withdrawn by its "
            "owner before anyone answered") in rejected
    assert "X-1" not in rejected
    table = done.text.split(SECTION, 1)[1]
    assert "| **C-1** SQLite holds our 200 writes/s. | rejected by both, conceded by Claude |" \
        in table
    assert "| **X-1** Keep Redis. | agreed |" in table


def test_arch_debate_points_the_brief_leaves_behind_are_dropped(arch: ArchDebate) -> None:
    done = debate(arch, [
        "SQLite.\n\n- C-1 agree: SQLite is enough.\n- C-2 agree: Encrypt sessions at rest.\n"
        "- C-3 agree: Sweep expired sessions every minute.\n",
        "- C-3 agree: a minute is what we need.\n",
        "AGREED: SQLite for sessions.\n"], [
        "- C-1 agree: yes.\n- C-3 disagree: hourly is enough.\n",
        "AGREED: SQLite for sessions (C-1).\n"])
    audit = done.audit
    assert [(p["id"], p["outcome"], p["why"]) for p in audit["points"]] == [
        ("C-1", "agreed", ""),
        ("C-2", "dropped", "Codex never answered it"),
        ("C-3", "dropped", "still disputed, and the final brief does not name it")]
    assert audit["unchallenged"] is False
    assert audit["summary"] == summary(first=1, dropped=2)
    assert ("| **C-2** Encrypt sessions at rest. | dropped (Codex never answered it) | "
            "0: agree | — |") in done.text
    assert done.model["outcome"] == "agreed", "a dropped point is not a flagged concession"


def test_arch_debate_stand_in_rounds_speak_for_nobody(arch: ArchDebate, scratch: Path) -> None:
    arch.fake.script(["AGREED: SQLite for sessions.\n\n- C-1 agree: it is.\n"])
    arch.write(0, "SQLite.\n\n- C-1 agree: SQLite is enough.\n")
    (scratch / "stand-in.md").write_text("- C-1 disagree: Redis is faster.\n")
    result = arch.sparring("debate", "round", str(arch.dir), "--stand-in",
                           str(scratch / "stand-in.md"))
    assert result.exit_code == 0, result.raw
    arch.write(1, "- C-1 agree: still.\n")
    arch.codex_round()
    arch.write(2, "AGREED: SQLite for sessions.\n")
    audit = Record(arch).audit
    assert audit["notes"] == ["round-1-codex.md is not Codex's own round (a stand-in, or "
                              "edited): its point lines count for nobody"]
    assert [(s["round"], s["side"], s["stance"]) for s in audit["points"][0]["stances"]] == [
        (0, "claude", "agree"), (1, "claude", "agree"), (2, "codex", "agree")]
    assert audit["concessions"] == [] and audit["points"][0]["outcome"] == "agreed"


def test_arch_debate_stuck_keeps_disputed_points_open(sparring: Any, fake_codex: Any,
                                                      project: Path) -> None:
    (project / "sparring.yaml").write_text("arch-debate:\n  max_rounds: 1\n")
    arch = ArchDebate(sparring, fake_codex, project)
    arch.fake.script(["- C-1 disagree: Redis is already there. Evidence: src/store.py:1\n"])
    arch.write(0, 'SQLite.\n\n- C-1 agree: SQLite is enough. Evidence: src/load.py:2 "WRITES = '
               '200"\n')
    arch.codex_round()
    arch.write(1, '- C-1 agree: still SQLite; the peak is 450. Evidence: src/load.py:3 "PEAK = '
               '450"\n')
    status = arch.status()
    assert status["step"] == "stuck", status
    assert (status["outcome"], status["outcome_reasons"]) == (
        "stalemate", ["stuck on values, not facts — decide"])
    model = json.loads((arch.dir / "DECISION-NEEDED.json").read_text())
    audit = model["agreement_audit"]
    assert model["outcome"] == "stalemate"
    assert [(p["id"], p["outcome"], p["why"]) for p in audit["points"]] == [
        ("C-1", "open", "still disputed")]
    assert audit["summary"] == summary(still=1)
    text = (arch.dir / "DECISION-NEEDED.md").read_text()
    assert f"_{audit['summary']}_" in text and SECTION in text
    assert "`src/store.py:1` [file never opened by Codex]" in text


# -- deep-discussion ----------------------------------------------------------------------

def frame(view: str) -> bytes:
    return json.dumps({"TOPIC": "Event sourcing for billing?", "FRAMING": "Audit trail.",
                       "CLAUDE_VIEW": view}).encode()


def yaml_round(response: str, search: str = "") -> bytes:
    return json.dumps({"response": response, "search_results": search}).encode()


def synthesis(agreed: str) -> bytes:
    return json.dumps({"agreed_points": agreed, "key_trade_offs": "-",
                       "recommended_approach": "-", "open_questions": "-",
                       "implementation_hints": "-", "final_observations": "-"}).encode()


class Report:
    """A deep-discussion's report: what `discuss report` printed, its markdown, its JSON."""

    def __init__(self, out: dict[str, Any]) -> None:
        self.out = out
        path = Path(out["report"])
        self.text = path.read_text()
        self.model = json.loads(path.with_suffix(".json").read_text())
        self.audit = self.model["agreement_audit"]


def discuss(talk: Discussion, view: str, responses: list[tuple[str, str]], agreed: str
            ) -> Report:
    """Frame with `view`, answer each Codex round with a response; once both sides marked
    consensus, the synthesis, then the report naming `agreed`."""
    talk.step("frame", frame(view))
    talk.wait()
    for response, search in responses:
        out = talk.step("round", yaml_round(response, search))
        if not out.get("consensus", {}).get("reached") and not (
                out.get("discussion") or {}).get("consensus", {}).get("reached"):
            talk.wait()
    talk.step("synthesis")
    talk.wait()
    return Report(talk.step("report", synthesis(agreed)))


SYNTH = "## Agreed points\n- the audit table\n"


def test_deep_discussion_agreed_in_round_one_is_unchallenged(sparring: Any, fake_codex: Any,
                                                             project: Path) -> None:
    fake_codex.script(["- C-1 agree: it does. Evidence: src/store.py:1 \"import sqlite3\"\n\n"
                       "[CONSENSUS_REACHED]\n", SYNTH])
    done = discuss(Discussion(sparring, fake_codex), "An audit table.\n\n- C-1 agree: "
                   "An audit table gives the trail.\n",
                   [("Agreed.\n\n[CONSENSUS_REACHED]\n", "")], "C-1")
    audit = done.audit
    (point,) = audit["points"]
    assert (point["id"], point["outcome"], point["raised_in"]) == ("C-1", "agreed", 1)
    assert stances(point) == [
        (1, "claude", "agree", "round 1 (Claude):3", []),
        (1, "codex", "agree", "round 1 (Codex):1",
         [('src/store.py:1 "import sqlite3"', "unread")])]
    assert audit["unchallenged"] is True
    assert audit["independence"]["state"] == "not_measured"
    assert audit["independence"]["why"].startswith("Codex reads Claude's opening view")
    assert audit["summary"].startswith(summary(first=1))
    assert done.text.index(audit["summary"]) < done.text.index("| Timestamp |"), "at the top"
    assert SECTION in done.text
    assert f"| Outcome | **UNCHALLENGED** — {UNCHALLENGED} |" in done.text
    assert (done.model["outcome"], done.model["outcome_reasons"]) == (
        "unchallenged", [UNCHALLENGED])
    assert (done.out["outcome"], done.out["outcome_reasons"]) == ("unchallenged",
                                                                  [UNCHALLENGED])
    assert done.out["consensus"] is True


def test_deep_discussion_claude_concedes_with_search_results(sparring: Any, fake_codex: Any,
                                                            project: Path) -> None:
    fake_codex.script([
        "- X-1 agree: Triggers cost little. Evidence: src/store.py:1\n"
        '[SEARCH_REQUEST: "trigger overhead"]\n',
        "- X-1 agree: still.\n",
        "[CONSENSUS_REACHED]\n", SYNTH])
    done = discuss(Discussion(sparring, fake_codex), "An audit table.\n", [
        ("- X-1 disagree: unmeasured.\n", "nothing yet"),
        ("- X-1 agree: the numbers settle it. Evidence: pgbench trigger run\n",
         "pgbench trigger run: +4% write latency"),
        ("[CONSENSUS_REACHED]\n", "")], "X-1")
    (concession,) = done.audit["concessions"]
    assert (concession["point"], concession["side"], concession["round"], concession["flag"]) \
        == ("X-1", "claude", 3, None)
    assert [(e["cited"], e["kind"], e["mark"], e["seen"], e["counts"])
            for e in concession["evidence"]] == [
        ("pgbench trigger run", "command", "unchecked", True, True)]
    assert outcomes(done.audit) == [("X-1", "agreed", "claude", False)]
    assert (done.out["outcome"], done.model["outcome"]) == ("consensus", "consensus")
    assert "| Outcome | **CONSENSUS** |" in done.text


def test_deep_discussion_claude_concedes_citing_what_codex_ran_the_round_before(
        sparring: Any, fake_codex: Any, project: Path) -> None:
    """Claude's message of round 2 answers Codex's round 1: a command Codex ran there is on
    the record Claude read, so citing it backs Claude's concession."""
    fake_codex.script([
        {"mode": "commands", "command": "/bin/bash -lc 'pytest tests/test_audit.py'",
         "reply": "- C-1 disagree: the trigger test shows a 3% cost. "
                  "Evidence: `pytest tests/test_audit.py`\n"},
        "- C-1 disagree: as said.\n\n[CONSENSUS_REACHED]\n", SYNTH])
    done = discuss(Discussion(sparring, fake_codex), "- C-1 agree: Triggers cost too much.\n", [
        ("- C-1 withdraw: the test run shows they do not. "
         "Evidence: `pytest tests/test_audit.py`\n", ""),
        ("[CONSENSUS_REACHED]\n", "")], "C-1 is rejected by both.")
    (concession,) = done.audit["concessions"]
    assert (concession["side"], concession["round"], concession["to"], concession["flag"]) == (
        "claude", 2, "withdraw", None)
    assert [(e["cited"], e["mark"], e["seen"], e["new"], e["counts"])
            for e in concession["evidence"]] == [
        ("`pytest tests/test_audit.py`", "unchecked", True, True, True)]
    assert outcomes(done.audit) == [("C-1", "rejected", "claude", False)]
    assert done.out["outcome"] == "consensus"


def test_deep_discussion_codex_concedes_without_new_evidence_is_contested(
        sparring: Any, fake_codex: Any, project: Path) -> None:
    fake_codex.script([
        "- C-1 disagree: events are simpler. Evidence: src/load.py:2\n"
        "- C-2 disagree: no.\n",
        "- C-1 agree: fine. Evidence: src/load.py:2\n\n[CONSENSUS_REACHED]\n",
        SYNTH])
    done = discuss(Discussion(sparring, fake_codex),
                   "- C-1 agree: An audit table is enough.\n"
                   "- C-2 agree: Keep the ledger in Postgres.\n",
                   [("- C-1 agree: it is.\n- C-2 agree: it must be.\n", ""),
                    ("[CONSENSUS_REACHED]\n", "")], "C-1")
    audit = done.audit
    (concession,) = audit["concessions"]
    assert (concession["side"], concession["point"], concession["flag"]) == (
        "codex", "C-1", "conceded_without_new_evidence")
    assert concession["evidence"][0]["why"] == (
        f"no command Codex ran on its thread by round 2 opened src/load.py; {NOT_NEW}")
    assert outcomes(audit) == [("C-1", "agreed", "codex", True),
                               ("C-2", "dropped", None, False)]
    assert audit["summary"] == summary(flagged="Codex, C-1", dropped=1)
    assert "**Codex made every concession (1); Claude never moved" in done.text
    reasons = ["contested: C-1 (settled by Codex's concession without new evidence)"]
    assert f"| Outcome | **CONTESTED** — {reasons[0]} |" in done.text
    assert (done.model["outcome"], done.model["outcome_reasons"]) == ("contested", reasons)
    assert (done.out["outcome"], done.out["outcome_reasons"]) == ("contested", reasons)
    assert done.out["consensus"] is True, "both sides marked it: the outcome says more"


def test_deep_discussion_a_claim_both_reject_is_listed_apart(sparring: Any, fake_codex: Any,
                                                            project: Path) -> None:
    fake_codex.script([
        "- C-1 disagree: replay is what auditors ask for. Evidence: "
        "https://example.com/audit-rules\n- X-1 agree: Keep an audit table.\n",
        "- C-1 disagree: rejected.\n\n[CONSENSUS_REACHED]\n", SYNTH])
    done = discuss(Discussion(sparring, fake_codex), "- C-1 agree: Auditors never replay.\n", [
        ("- C-1 withdraw: the rules ask for replay. Evidence: https://example.com/audit-rules\n"
         "- X-1 agree: yes.\n", "https://example.com/audit-rules: replay on request"),
        ("[CONSENSUS_REACHED]\n", "")], "X-1")
    assert outcomes(done.audit) == [("X-1", "agreed", None, False),
                                    ("C-1", "rejected", "claude", False)]
    (concession,) = done.audit["concessions"]
    assert [(e["mark"], e["seen"], e["counts"]) for e in concession["evidence"]] == [
        ("unchecked", True, True)]
    rejected = done.text.split("### Rejected by both", 1)[1].split("##", 1)[0]
    assert "- **C-1** ~~Auditors never replay.~~ — raised by Claude; rejected by both sides " \
        "(Claude gave it up)" in rejected
    assert done.out["outcome"] == "consensus"


def test_point_lines_count_only_as_lines_of_their_own() -> None:
    from sparring.workflows.markers import PointLine, point_lines

    text = ("Prose that mentions C-1 agree: in a sentence does not count.\n"
            "- C-1 agree: SQLite is enough. Evidence: src/a.py:3; `pytest tests/x.py`\n"
            "- **X-2** (disagree): Redis adds ops. Evidence: a.py:1, b.py:2\n"
            "> - C-3 agree: quoted from the other side\n"
            "```\n- C-4 agree: in a code block\n```\n"
            "C-5 Refine: no evidence here.\n"
            "- C-6 withdraw: wrong. Evidence: src/a.py:12 \"ttl = refresh(ttl); save()\"; "
            "src/b.py:4 `x = \"y\"`; https://example.com/a\n")
    assert point_lines(text) == [
        PointLine(2, "C-1", "agree", "SQLite is enough.",
                  ("src/a.py:3", "`pytest tests/x.py`")),
        PointLine(3, "X-2", "disagree", "Redis adds ops.", ("a.py:1", "b.py:2")),
        PointLine(8, "C-5", "refine", "no evidence here.", ()),
        PointLine(9, "C-6", "withdraw", "wrong.", (
            {"cite": "src/a.py:12", "quote": "ttl = refresh(ttl); save()"},
            {"cite": "src/b.py:4", "quote": 'x = "y"'},
            "https://example.com/a"))]
