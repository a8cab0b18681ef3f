"""How the agreement was reached, in arch-debate and deep-discussion: their prose rounds name
points in lines of their own (`- C-1 agree: … Evidence: …`), and the runner audits them.
Scripted debates through the CLI against the fake codex, each asserting the
`agreement_audit` of the record's JSON and its section in the markdown."""

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


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "src").mkdir()
    (repo / "src" / "store.py").write_text("import sqlite3\nDB = 'sessions.db'\n")
    (repo / "src" / "load.py").write_text("# measured\nWRITES = 200\nPEAK = 450\n")
    return repo


@pytest.fixture
def arch(sparring: Any, fake_codex: Any, project: Path) -> ArchDebate:
    return ArchDebate(sparring, fake_codex, project)


def debate(arch: ArchDebate, claude: list[str], codex: list[Any]) -> tuple[dict[str, Any], str]:
    """Claude's rounds 0..n and Codex's 1..n, alternating; the debate must end agreed."""
    arch.fake.script(codex)
    for n, text in enumerate(claude):
        arch.write(n, text)
        if n < len(codex):
            arch.codex_round()
    status = arch.status()
    assert status["step"] == "agreed", status
    agreed = Path(status["agreed"]["file"])
    model = json.loads(agreed.with_suffix(".json").read_text())
    return model["agreement_audit"], agreed.read_text()


def entry(round_no: int, side: str, stance: str, source: str,
          evidence: list[str] | None = None) -> dict[str, Any]:
    return {"round": round_no, "side": side, "stance": stance, "evidence": evidence or [],
            "source": source}


def test_arch_debate_agreed_in_round_one_is_unchallenged_and_not_independent(
        arch: ArchDebate) -> None:
    audit, text = debate(arch, [
        "SQLite, because we already ship it.\n\n- C-1 agree: SQLite handles our load. "
        "Evidence: src/load.py:2\n",
        "AGREED: SQLite for sessions.\n\n- C-1 agree: confirmed.\n"],
        ["AGREED: SQLite for sessions.\n\n- C-1 agree: it does. Evidence: src/load.py:2\n"])
    assert audit["points"] == [{
        "id": "C-1", "claim": "SQLite handles our load.", "raised_by": "claude",
        "raised_in": 0, "outcome": "agreed", "why": "", "independent": False,
        "sealed_as": None, "stances": [
            entry(0, "claude", "agree", "round-0-claude.md:3", ["src/load.py:2"]),
            entry(1, "codex", "agree", "round-1-codex.md:3", ["src/load.py:2"]),
            entry(1, "claude", "agree", "round-1-claude.md:3")]}]
    assert audit["unchallenged"] is True and audit["concessions"] == []
    assert audit["independence"] == {"state": "not_measured", "why": NOT_INDEPENDENT_ARCH,
                                     "seen": []}
    summary = ("Agreement: 0 points independent, 1 agreed on first reading, 0 reached with new "
               "evidence, 0 conceded without new evidence, 0 still open, 0 dropped. "
               "Unchallenged: nobody disagreed with any point.")
    assert audit["summary"] == summary
    assert f"_{summary}_" in text.split("Proposed by", 1)[0], "at the top of the brief"
    section = text.split(SECTION, 1)[1]
    assert f"Independence is not measured here: {NOT_INDEPENDENT_ARCH}." in section
    assert "**Unchallenged**" in section


CONCEDING_CLAUDE = [
    "SQLite, because we already ship it.\n\n- C-1 agree: SQLite is enough.\n",
    "The peak is the weak spot.\n\n- X-1 disagree: the peak was never measured.\n",
]
CONCEDING_CODEX = [
    "Agreed on SQLite.\n\n- C-1 agree: yes.\n- X-1 agree: Peak writes stay under 500/s. "
    "Evidence: src/load.py:3\n",
    "AGREED: SQLite for sessions.\n\n- X-1 agree: it was. Evidence: src/load.py:3\n",
]


def test_arch_debate_claude_concedes_with_new_evidence(arch: ArchDebate) -> None:
    audit, text = debate(arch, [*CONCEDING_CLAUDE, "AGREED: SQLite for sessions.\n\n- X-1 "
                                "agree: the store settles it. Evidence: src/store.py:2\n"],
                         CONCEDING_CODEX)
    assert audit["concessions"] == [{
        "point": "X-1", "side": "claude", "round": 2, "from": "disagree", "to": "agree",
        "evidence": [{"cited": "src/store.py:2", "kind": "path_line", "checked": True,
                      "new": True, "counts": True, "why": ""}],
        "new_evidence": True, "flag": None}]
    assert [(p["id"], p["outcome"]) for p in audit["points"]] == [
        ("X-1", "conceded_by_claude"), ("C-1", "agreed")]
    assert audit["points"][0]["claim"] == "Peak writes stay under 500/s."
    assert audit["moved"]["sentence"] == ("Claude made every concession (1); Codex never "
                                          "moved from a position it held.")
    assert audit["summary"] == (
        "Agreement: 0 points independent, 1 agreed on first reading, 1 reached with new "
        "evidence, 0 conceded without new evidence, 0 still open, 0 dropped.")
    assert "**Claude made every concession (1); Codex never moved" in text


@pytest.mark.parametrize("cited, why", [
    ("", []),
    (" Evidence: src/load.py:3; src/load.py:40",
     ["not new: Codex cited it on X-1 in round 1", "src/load.py has 3 lines, not 40"]),
])
def test_arch_debate_claude_concedes_without_new_evidence(arch: ArchDebate, cited: str,
                                                          why: list[str]) -> None:
    audit, text = debate(arch, [*CONCEDING_CLAUDE,
                                f"AGREED: SQLite for sessions.\n\n- X-1 agree: fine.{cited}\n"],
                         CONCEDING_CODEX)
    (concession,) = audit["concessions"]
    assert concession["flag"] == "conceded_without_new_evidence"
    assert [e["why"] for e in concession["evidence"]] == why
    assert audit["summary"] == (
        "Agreement: 0 points independent, 1 agreed on first reading, 0 reached with new "
        "evidence, 1 conceded without new evidence (Claude, X-1), 0 still open, 0 dropped.")
    assert "- **X-1**, Claude, round 2: disagree → agree — **conceded without new evidence**" \
        in text


def test_arch_debate_codex_concedes_with_a_command_it_ran(arch: ArchDebate) -> None:
    audit, text = debate(arch, [
        "SQLite.\n\n- C-1 agree: SQLite holds the peak. Evidence: src/load.py:3\n",
        "- C-1 agree: the peak is 450. Evidence: src/load.py:2\n",
        "AGREED: SQLite for sessions.\n"], [
        "Too optimistic.\n\n- C-1 disagree: the peak is higher than that.\n",
        {"mode": "commands", "command": "/bin/bash -lc 'pytest tests/test_load.py'",
         "reply": "AGREED: SQLite for sessions.\n\n- C-1 agree: I ran it. "
                  "Evidence: `pytest tests/test_load.py`\n"}])
    assert audit["concessions"] == [{
        "point": "C-1", "side": "codex", "round": 2, "from": "disagree", "to": "agree",
        "evidence": [{"cited": "`pytest tests/test_load.py`", "kind": "command",
                      "checked": True, "new": True, "counts": True, "why": ""}],
        "new_evidence": True, "flag": None}]
    assert audit["points"][0]["outcome"] == "conceded_by_codex"
    assert audit["moved"]["codex"] == {"concessions": 1, "directions": {"disagree -> agree": 1}}
    assert "- **C-1**, Codex, round 2: disagree → agree — with new evidence" in text


def test_arch_debate_points_the_brief_leaves_behind_are_dropped(arch: ArchDebate) -> None:
    audit, text = debate(arch, [
        "SQLite.\n\n- C-1 agree: SQLite is enough.\n- C-2 agree: Encrypt sessions at rest.\n"
        "- C-3 agree: Sweep expired sessions every minute.\n",
        "- C-3 agree: a minute is what we need.\n",
        "AGREED: SQLite for sessions.\n"], [
        "- C-1 agree: yes.\n- C-3 disagree: hourly is enough.\n",
        "AGREED: SQLite for sessions (C-1).\n"])
    assert [(p["id"], p["outcome"], p["why"]) for p in audit["points"]] == [
        ("C-1", "agreed", ""),
        ("C-2", "dropped", "Codex never answered it"),
        ("C-3", "dropped", "still disputed, and the final brief does not name it")]
    assert audit["unchallenged"] is False
    assert audit["summary"].endswith("0 still open, 2 dropped.")
    assert ("| **C-2** Encrypt sessions at rest. | dropped (Codex never answered it) | "
            "0: agree | — |") in text


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
    status = arch.status()
    assert status["step"] == "agreed"
    audit = json.loads(Path(status["agreed"]["file"]).with_suffix(".json").read_text())[
        "agreement_audit"]
    assert audit["notes"] == ["round-1-codex.md is not Codex's own round (a stand-in, or "
                              "edited): its point lines count for nobody"]
    assert [(s["round"], s["side"], s["stance"]) for s in audit["points"][0]["stances"]] == [
        (0, "claude", "agree"), (1, "claude", "agree"), (2, "codex", "agree")]
    assert audit["concessions"] == [] and audit["points"][0]["outcome"] == "agreed"


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


def discuss(talk: Discussion, view: str, responses: list[tuple[str, str]], agreed: str
            ) -> tuple[dict[str, Any], str]:
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
    report = talk.step("report", synthesis(agreed))
    path = Path(report["report"])
    return json.loads(path.with_suffix(".json").read_text())["agreement_audit"], path.read_text()


SYNTH = "## Agreed points\n- the audit table\n"


def test_deep_discussion_agreed_in_round_one(sparring: Any, fake_codex: Any,
                                             project: Path) -> None:
    fake_codex.script(["- C-1 agree: it does. Evidence: src/store.py:1\n\n[CONSENSUS_REACHED]\n",
                       SYNTH])
    audit, text = discuss(Discussion(sparring, fake_codex), "An audit table.\n\n- C-1 agree: "
                          "An audit table gives the trail.\n",
                          [("Agreed.\n\n[CONSENSUS_REACHED]\n", "")], "C-1")
    assert audit["points"] == [{
        "id": "C-1", "claim": "An audit table gives the trail.", "raised_by": "claude",
        "raised_in": 1, "outcome": "agreed", "why": "", "independent": False,
        "sealed_as": None, "stances": [
            entry(1, "claude", "agree", "round 1 (Claude):3"),
            entry(1, "codex", "agree", "round 1 (Codex):1", ["src/store.py:1"])]}]
    assert audit["unchallenged"] is True
    assert audit["independence"]["state"] == "not_measured"
    assert audit["independence"]["why"].startswith("Codex reads Claude's opening view")
    assert audit["summary"].startswith("Agreement: 0 points independent, 1 agreed on first "
                                       "reading")
    assert text.index(audit["summary"]) < text.index("| Timestamp |"), "at the top"
    assert SECTION in text


def test_deep_discussion_claude_concedes_with_search_results(sparring: Any, fake_codex: Any,
                                                            project: Path) -> None:
    fake_codex.script([
        "- X-1 agree: Triggers cost little. Evidence: src/store.py:1\n"
        '[SEARCH_REQUEST: "trigger overhead"]\n',
        "- X-1 agree: still.\n",
        "[CONSENSUS_REACHED]\n", SYNTH])
    audit, _ = discuss(Discussion(sparring, fake_codex), "An audit table.\n", [
        ("- X-1 disagree: unmeasured.\n", "nothing yet"),
        ("- X-1 agree: the numbers settle it. Evidence: pgbench trigger run\n",
         "pgbench trigger run: +4% write latency"),
        ("[CONSENSUS_REACHED]\n", "")], "X-1")
    assert audit["concessions"] == [{
        "point": "X-1", "side": "claude", "round": 3, "from": "disagree", "to": "agree",
        "evidence": [{"cited": "pgbench trigger run", "kind": "command", "checked": True,
                      "new": True, "counts": True, "why": ""}],
        "new_evidence": True, "flag": None}]
    assert audit["points"][0]["outcome"] == "conceded_by_claude"


def test_deep_discussion_codex_concedes_without_new_evidence_and_drops(
        sparring: Any, fake_codex: Any, project: Path) -> None:
    fake_codex.script([
        "- C-1 disagree: events are simpler. Evidence: src/load.py:2\n"
        "- C-2 disagree: no.\n",
        "- C-1 agree: fine. Evidence: src/load.py:2\n\n[CONSENSUS_REACHED]\n",
        SYNTH])
    audit, text = discuss(Discussion(sparring, fake_codex),
                          "- C-1 agree: An audit table is enough.\n"
                          "- C-2 agree: Keep the ledger in Postgres.\n",
                          [("- C-1 agree: it is.\n- C-2 agree: it must be.\n", ""),
                           ("[CONSENSUS_REACHED]\n", "")], "C-1")
    (concession,) = audit["concessions"]
    assert (concession["side"], concession["point"], concession["flag"]) == (
        "codex", "C-1", "conceded_without_new_evidence")
    assert concession["evidence"][0]["why"] == "not new: Codex cited it on C-1 in round 1"
    assert [(p["id"], p["outcome"]) for p in audit["points"]] == [
        ("C-1", "conceded_by_codex"), ("C-2", "dropped")]
    assert audit["summary"] == (
        "Agreement: 0 points independent, 0 agreed on first reading, 0 reached with new "
        "evidence, 1 conceded without new evidence (Codex, C-1), 0 still open, 1 dropped.")
    assert "**Codex made every concession (1); Claude never moved" in text


def test_point_lines_count_only_as_lines_of_their_own() -> None:
    from sparring.workflows.markers import PointLine, point_lines

    text = ("Prose that mentions C-1 agree: in a sentence does not count.\n"
            "- C-1 agree: SQLite is enough. Evidence: src/a.py:3; `pytest tests/x.py`\n"
            "- **X-2** (disagree): Redis adds ops. Evidence: a.py:1, b.py:2\n"
            "> - C-3 agree: quoted from the other side\n"
            "```\n- C-4 agree: in a code block\n```\n"
            "C-5 Refine: no evidence here.\n")
    assert point_lines(text) == [
        PointLine(2, "C-1", "agree", "SQLite is enough.",
                  ("src/a.py:3", "`pytest tests/x.py`")),
        PointLine(3, "X-2", "disagree", "Redis adds ops.", ("a.py:1", "b.py:2")),
        PointLine(8, "C-5", "refine", "no evidence here.", ())]


def test_arch_debate_stuck_keeps_disputed_points_open(sparring: Any, fake_codex: Any,
                                                      project: Path) -> None:
    (project / "sparring.yaml").write_text("arch-debate:\n  max_rounds: 1\n")
    arch = ArchDebate(sparring, fake_codex, project)
    arch.fake.script(["- C-1 disagree: Redis is already there. Evidence: src/store.py:1\n"])
    arch.write(0, "SQLite.\n\n- C-1 agree: SQLite is enough. Evidence: src/load.py:2\n")
    arch.codex_round()
    arch.write(1, "- C-1 agree: still SQLite; the peak is 450. Evidence: src/load.py:3\n")
    status = arch.status()
    assert status["step"] == "stuck", status
    audit = json.loads((arch.dir / "DECISION-NEEDED.json").read_text())["agreement_audit"]
    assert [(p["id"], p["outcome"], p["why"]) for p in audit["points"]] == [
        ("C-1", "open", "still disputed")]
    assert audit["summary"] == (
        "Agreement: 0 points independent, 0 agreed on first reading, 0 reached with new "
        "evidence, 0 conceded without new evidence, 1 still open, 0 dropped.")
    text = (arch.dir / "DECISION-NEEDED.md").read_text()
    assert f"_{audit['summary']}_" in text and SECTION in text


def test_arch_debate_claude_withdraws_its_own_point(arch: ArchDebate) -> None:
    audit, text = debate(arch, [
        "SQLite.\n\n- C-1 agree: SQLite holds our 200 writes/s.\n",
        "- C-1 disagree: withdrawn: every read writes too. Evidence: src/store.py:2\n",
        "AGREED: keep Redis.\n"], [
        "- C-1 disagree: the refresh-on-read makes it 1,900 writes/s. "
        "Evidence: src/load.py:3\n",
        "AGREED: keep Redis.\n"])
    assert audit["points"][0]["outcome"] == "conceded_by_claude"
    assert audit["points"][0]["why"] == "withdrawn by Claude"
    assert audit["concessions"] == [{
        "point": "C-1", "side": "claude", "round": 1, "from": "agree", "to": "disagree",
        "evidence": [{"cited": "src/store.py:2", "kind": "path_line", "checked": True,
                      "new": True, "counts": True, "why": ""}],
        "new_evidence": True, "flag": None}]
    assert audit["summary"] == (
        "Agreement: 0 points independent, 0 agreed on first reading, 1 reached with new "
        "evidence, 0 conceded without new evidence, 0 still open, 0 dropped.")
    assert "- **C-1**, Claude, round 1: agree → disagree — with new evidence" in text
