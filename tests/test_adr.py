"""The reports as a team's ADR tools read them (workflows/adr.py): MADR's YAML front matter
on every workflow's report, read back by a YAML parser whatever the question holds;
adr-tools' next number in a folder of numbered records, the date name elsewhere, never a
number taken twice; the "Revisit when" line; whether Codex took part in every round."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from sparring.errors import SparringError
from sparring.workflows import adr, audit, markers
from sparring.workflows import report as reports
from support.debates import (
    FRAME,
    QUESTION,
    SYNTHESIS,
    ArchDebate,
    Debate,
    Discussion,
    answer,
    body,
    cpt,
    front_matter,
    pt,
)

# Backstage's ADR plugin's default file filter (@backstage-community/plugin-adr-common).
MADR_FILE_PATH_FILTER = re.compile(r"^\d{4}-.+\.md$")
CLAUDE = "Claude (its model is not recorded)"


def _consulted(report_json: Path) -> list[str]:
    """What the report's own record says Codex ran with, as the front matter names it."""
    model = json.loads(report_json.read_text())
    return [f"Codex ({said})" for said in model["codex_part"]["models"]]


def _agreed(debate: Debate, mind: str | None = None, claude_mind: str | None = None,
            out: bool = True) -> tuple[dict[str, Any], str]:
    """One round, both agreeing on X-1; the report (at --out, or at its default place)."""
    debate.fake.script([{"reply": answer([cpt("X-1", "agree", "Use SQLite", mind=mind)],
                                         "agree")}])
    debate.start()
    debate.seal()
    debate.wait()
    point = pt("X-1", "agree", cls="genuine_agreement")
    if claude_mind:
        point["would_change_my_mind"] = claude_mind
    debate.verdict({"points": [point], "convergence": {"state": "agree", "reason": "settled"}})
    if out:
        return debate.report(SYNTHESIS)
    result = debate.sparring("report", debate.sid, "--synthesis",
                             debate.file("synthesis.json", SYNTHESIS))
    assert result.exit_code == 0, result.raw
    return dict(result.out), Path(result.out["report"]).read_text()


@pytest.mark.parametrize("skill", ["think-about", "dual-model"])
def test_a_structured_report_opens_with_madr_front_matter(sparring: Any, fake_codex: Any,
                                                          scratch: Path, skill: str) -> None:
    debate = Debate(sparring, fake_codex, scratch, skill)
    out, text = _agreed(debate)
    found, rest = front_matter(text)
    assert found["status"] == "proposed"
    assert found["date"] == datetime.date.today()  # a YAML date, as MADR writes it
    assert found["title"] == QUESTION
    assert found["decision-makers"] == [CLAUDE]
    consulted = _consulted(Path(out["json"]))
    assert consulted and consulted[0].startswith("Codex (") and "effort" in consulted[0]
    assert found["consulted"] == consulted
    assert found["sparring"] == {"skill": skill, "session": debate.sid,
                                 "outcome": out["outcome"], "codex-every-round": True}
    assert rest.startswith(f"# {QUESTION}\n")


def test_the_model_codex_ran_is_the_one_its_rollout_recorded(sparring: Any, fake_codex: Any,
                                                             scratch: Path) -> None:
    debate = Debate(sparring, fake_codex, scratch)
    out, text = _agreed(debate)
    model = json.loads(Path(out["json"]).read_text())
    (said,) = model["codex_part"]["models"]
    assert "(not recorded by codex)" not in said, "the fake's rollout records its model"
    assert f"Codex: {said}, every round" in text  # the Process section's line
    assert front_matter(text)[0]["consulted"] == [f"Codex ({said})"]


def test_claudes_model_is_the_one_claude_code_named_for_each_round(
        sparring: Any, fake_codex: Any, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SessionStart hook's name (SPARRING_CLAUDE_MODEL in every Bash call) is recorded by
    each turn as it starts, and the report names the Claude that sent the rounds by it; a
    round sent from a session that named none is said to be unrecorded, not guessed."""
    monkeypatch.setenv("SPARRING_CLAUDE_MODEL", "claude-opus-4-5-20251101")
    debate = Debate(sparring, fake_codex, scratch)
    _, text = _agreed(debate)
    folder = Path(sparring("status", debate.sid).out["session_dir"])
    data = json.loads((folder / "session.json").read_text())
    assert [t["claude_model"] for t in data["turns"]] == ["claude-opus-4-5-20251101"] * len(
        data["turns"])
    assert front_matter(text)[0]["decision-makers"] == ["Claude (claude-opus-4-5-20251101)"]
    assert "- Claude: claude-opus-4-5-20251101, every round (the model Claude Code named " \
        "as its session began)." in text
    status = sparring("status", debate.sid).out
    assert status["claude_ran"]["models"] == ["claude-opus-4-5-20251101"]

    monkeypatch.setenv("SPARRING_CLAUDE_MODEL", "claude $(id)")  # not a name the hook writes
    later = Debate(sparring, fake_codex, scratch)
    _, text = _agreed(later, out=False)
    assert front_matter(text)[0]["decision-makers"] == [CLAUDE]
    assert "- Claude: its model is not recorded (Claude Code names it" in text


def test_an_arch_debate_s_agreed_brief_opens_with_front_matter(sparring: Any, fake_codex: Any,
                                                               repo: Path) -> None:
    debate = ArchDebate(sparring, fake_codex, repo)
    fake_codex.script(["AGREED: SQLite with a TTL sweep job.\n\n- X-1 agree: SQLite holds.\n"
                       "Revisit when: writes pass 2,000 a second.\n"])
    debate.write(0, "SQLite, because we already ship it.\n\n"
                    "**Revisit when:** we shard the service.\n")
    debate.codex_round()
    debate.write(1, "AGREED: SQLite with a TTL sweep job.\n\nConfirmed.\n")
    assert debate.status()["step"] == "agreed"
    text = (debate.dir / "round-1-agreed.md").read_text()
    found, rest = front_matter(text)
    assert found["status"] == "proposed" and found["date"] == datetime.date.today()
    assert found["title"] == "Should we use Redis or SQLite for sessions?"
    assert found["consulted"] == _consulted(debate.dir / "round-1-agreed.json")
    assert found["sparring"]["session"] == debate.session
    assert found["sparring"]["outcome"] in ("agreed", "unchallenged")
    assert rest.startswith("# Agreed brief (round 1)\n")
    assert ("**Revisit when:** Claude: we shard the service.; Codex: writes pass 2,000 a "
            "second.") in text
    assert "Codex took part in every round (1 of 1): thread `" in text


def test_a_stand_in_round_is_said_in_the_participation_line(sparring: Any, fake_codex: Any,
                                                            repo: Path) -> None:
    debate = ArchDebate(sparring, fake_codex, repo)
    debate.write(0, "SQLite.\n")
    stood = sparring("debate", "round", str(debate.dir), "--stand-in", "-",
                     input=b"The strongest case for Redis is pub/sub.\n")
    assert stood.exit_code == 0, stood.raw
    fake_codex.script(["AGREED: SQLite.\n"])
    debate.write(1, "Pub/sub is not needed here.\n")
    debate.codex_round()
    debate.write(2, "AGREED: SQLite.\n\nConfirmed.\n")
    assert debate.status()["step"] == "agreed"
    text = (debate.dir / "round-2-agreed.md").read_text()
    found, _ = front_matter(text)
    assert found["sparring"]["codex-every-round"] is False
    assert found["consulted"] == _consulted(debate.dir / "round-2-agreed.json") != []
    assert re.search(r"\nCodex did not take part in every round: it answered round 2 of 2, "
                     r"not round 1: thread `[^`]+`, .+, [\d,]+ tokens\.\n", text)
    assert "**Revisit when:** _neither side said what would change its mind._" in text


def test_a_deep_discussion_report_opens_with_front_matter(sparring: Any, fake_codex: Any,
                                                          repo: Path) -> None:
    fake_codex.script(["The audit table wins.\n\nRevisit when: replay becomes a product "
                       "need.\n\n[CONSENSUS_REACHED]\n"])
    talk = Discussion(sparring, fake_codex)
    talk.step("frame", FRAME)
    talk.wait()
    talk.step("round", b"response: |\n  Agreed.\n  [CONSENSUS_REACHED]\n")
    report = talk.step("report", b"\n".join(
        f"{key}: '-'".encode() for key in ("agreed_points", "key_trade_offs",
                                            "recommended_approach", "open_questions",
                                            "implementation_hints", "final_observations")))
    path = Path(report["report"])
    text = path.read_text()
    found, rest = front_matter(text)
    assert found["status"] == "proposed" and found["date"] == datetime.date.today()
    assert found["title"] == "Event sourcing for the billing service?"
    assert found["consulted"] == _consulted(path.with_suffix(".json"))
    assert found["sparring"] == {"skill": "deep-discussion", "session": talk.sid,
                                 "outcome": report["outcome"], "codex-every-round": True}
    assert rest.startswith("# Deep discussion: Event sourcing for the billing service?\n")
    assert "**Revisit when:** Codex: replay becomes a product need." in text


HOSTILE = [
    "Redis: or SQLite?", "- a list item?", "# a comment?", "key: value # and a comment",
    'He said "no" and it\'s final', "first line\n---\nstatus: accepted", "yes", "0004",
    "@at", "`tick`", "%percent", "!tag", "*ref", "&anchor", "{a: 1}", "[1, 2]", "| >", "? q",
    "null", "~", "   leading spaces", "tab\there", "\x85 next line \u2028 and \x7f", "",
    "ünïcode — ok", "...",
]


@pytest.mark.parametrize("title", HOSTILE)
def test_front_matter_reads_back_whatever_the_title_holds(title: str) -> None:
    model = {"date": "2026-12-02", "title": title, "decision_makers": [CLAUDE],
             "consulted": [f"Codex ({title}, effort high)"], "skill": "think-about",
             "session": "think-about-1", "outcome": f"incomplete: {title}",
             "codex_part": {"every_round": False}}
    found, rest = front_matter(adr.document(model, f"# {title}\n"))
    assert found == {"status": "proposed", "date": datetime.date(2026, 12, 2), "title": title,
                     "decision-makers": [CLAUDE],
                     "consulted": [f"Codex ({title}, effort high)"],
                     "sparring": {"skill": "think-about", "session": "think-about-1",
                                  "outcome": f"incomplete: {title}",
                                  "codex-every-round": False}}
    assert rest == f"# {title}\n"


def test_a_hostile_question_reaches_the_report_s_front_matter_intact(
        sparring: Any, fake_codex: Any, scratch: Path) -> None:
    hostile = 'Redis: "yes" or - SQLite? # really\n---\nstatus: accepted'
    fake_codex.script([{"reply": answer([cpt("X-1", "agree")], "agree")}])
    sid = sparring("init", "--skill", "think-about").out["session"]
    sparring("start", sid, "--template", "think-about/round1", "--var", f"QUESTION={hostile}")
    debate = Debate.__new__(Debate)
    debate.sparring, debate.fake, debate.tmp, debate.skill, debate.sid, debate.n = (
        sparring, fake_codex, scratch, "think-about", sid, 0)
    debate.seal()
    debate.wait()
    debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement")],
                    "convergence": {"state": "agree", "reason": "settled"}})
    _, text = debate.report(SYNTHESIS)
    found, _ = front_matter(text)
    assert found["title"] == hostile and found["status"] == "proposed"


def test_revisit_when_names_both_sides_and_their_points(sparring: Any, fake_codex: Any,
                                                        scratch: Path) -> None:
    debate = Debate(sparring, fake_codex, scratch)
    out, text = _agreed(debate, mind="a measured peak above 2,000 writes/s",
                        claude_mind="a second region")
    assert ("**Revisit when:** Claude: a second region (X-1); Codex: a measured peak above "
            "2,000 writes/s (X-1)") in text
    assert re.search(r"\nCodex took part in every round \((\d) of \1\): thread `[^`]+`, ", text)
    model = json.loads(Path(out["json"]).read_text())
    assert [(r["side"], r["points"]) for r in model["revisit_when"]] == [
        ("claude", ["X-1"]), ("codex", ["X-1"])]


def test_no_revisit_condition_is_said_to_be_missing(sparring: Any, fake_codex: Any,
                                                   scratch: Path) -> None:
    _, text = _agreed(Debate(sparring, fake_codex, scratch))
    assert "**Revisit when:** _neither side said what would change its mind._" in body(text)


def _decisions(repo: Path, *names: str) -> Path:
    folder = repo / "docs" / "decisions"
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(f"# {name}\n")
    return folder


def test_a_folder_of_numbered_records_gives_the_next_number(sparring: Any, fake_codex: Any,
                                                            scratch: Path, repo: Path) -> None:
    folder = _decisions(repo, "0001-record-architecture-decisions.md", "0003-use-postgres.md",
                        "README.md", "notes.txt", "2026-11-30-think-about-earlier.md",
                        "0009-draft.txt")
    debate = Debate(sparring, fake_codex, scratch)
    out, _ = _agreed(debate, out=False)
    path = Path(out["report"])
    assert path == folder / "0004-should-sessions-live-in-redis-or-sqlite.md"
    assert MADR_FILE_PATH_FILTER.match(path.name)
    assert Path(out["json"]) == path.with_suffix(".json")
    again = sparring("report", debate.sid)
    assert again.exit_code == 0 and again.out["report"] == str(path), "its own number kept"
    path.unlink()  # moved away: the number is free again, and another may take it
    path.with_suffix(".json").unlink()
    (folder / "0004-someone-else.md").write_text("theirs\n")
    moved = sparring("report", debate.sid)
    assert Path(moved.out["report"]).name == "0005-should-sessions-live-in-redis-or-sqlite.md"
    assert (folder / "0004-someone-else.md").read_text() == "theirs\n"
    other = Debate(sparring, fake_codex, scratch)
    assert Path(_agreed(other, out=False)[0]["report"]).name.startswith("0006-")
    assert (folder / "0003-use-postgres.md").read_text() == "# 0003-use-postgres.md\n"


@pytest.mark.parametrize("names", [(), ("README.md", "2026-11-30-think-about-earlier.md")])
def test_an_unnumbered_folder_keeps_the_date_name(sparring: Any, fake_codex: Any,
                                                  scratch: Path, repo: Path,
                                                  names: tuple[str, ...]) -> None:
    folder = _decisions(repo, *names)
    out, _ = _agreed(Debate(sparring, fake_codex, scratch), out=False)
    today = datetime.date.today().isoformat()
    assert Path(out["report"]) == folder / (
        f"{today}-think-about-should-sessions-live-in-redis-or-sqlite.md")


def test_two_reports_racing_for_a_number_do_not_both_take_it(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _decisions(repo, "0001-first.md")
    data: Any = {"root": str(repo), "id": "think-about-x", "skill": "think-about",
                 "turns": [], "question": "Which queue?", "reports": []}
    real = reports.write
    raced: list[Path] = []

    def racing(path: Path, *args: Any, **kw: Any) -> Path | None:
        if not raced:  # another writer takes the number between the choice and the write
            raced.append(path)
            path.write_text("theirs\n")
        return real(path, *args, **kw)

    monkeypatch.setattr(reports, "write", racing)
    path, beside = reports.publish(data, None, "docs/decisions/{date}-{slug}.md", "mine\n",
                                   {"k": 1})
    assert raced == [folder / "0002-which-queue.md"]
    assert raced[0].read_text() == "theirs\n"
    assert path == folder / "0003-which-queue.md" and path.read_text() == "mine\n"
    assert beside == folder / "0003-which-queue.json"


def test_an_explicit_out_taken_meanwhile_is_refused_not_renamed(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data: Any = {"root": str(repo), "id": "think-about-x", "skill": "think-about",
                 "turns": [], "question": "Which queue?", "reports": []}
    real = reports.write

    def racing(path: Path, *args: Any, **kw: Any) -> Path | None:
        path.write_text("theirs\n")
        return real(path, *args, **kw)

    monkeypatch.setattr(reports, "write", racing)
    with pytest.raises(SparringError) as err:
        reports.publish(data, repo / "mine.md", None, "mine\n", {"k": 1})
    assert err.value.code == "path_protected"
    assert (repo / "mine.md").read_text() == "theirs\n"


@pytest.mark.parametrize(("name", "number"), [
    ("0001-use-sqlite.md", 1), ("0042-a.md", 42), ("12345-big.md", 12345),
    ("2026-12-02-think-about-x.md", None), ("0001-use-sqlite.txt", None), ("README.md", None),
    ("0001-.md", None), ("001-short.md", None),
])
def test_what_counts_as_a_numbered_record(name: str, number: int | None) -> None:
    assert adr.number_of(name) == number


def test_the_front_matter_is_block_yaml_a_reader_can_diff() -> None:
    model = {"date": "2026-12-02", "title": "Q", "decision_makers": [CLAUDE],
             "consulted": ["Codex (gpt-5.5, effort high)"], "skill": "think-about",
             "session": "s", "outcome": "consensus", "codex_part": {"every_round": True}}
    assert adr.front_matter(model) == (
        "---\nstatus: proposed\ndate: 2026-12-02\ntitle: Q\ndecision-makers:\n"
        f"- {CLAUDE}\nconsulted:\n- Codex (gpt-5.5, effort high)\nsparring:\n"
        "  skill: think-about\n  session: s\n  outcome: consensus\n"
        "  codex-every-round: true\n---\n\n")
    assert yaml.safe_load(adr.front_matter(model).split("---")[1])["status"] == "proposed"


def test_revisit_when_takes_each_side_s_latest_word_on_what_still_stands(tmp_path: Path) -> None:
    entries = [
        audit.Entry("X-1", "codex", 1, "agree", "SQLite holds", mind="a peak above 2k/s"),
        audit.Entry("X-1", "claude", 1, "agree", mind="a second region"),
        audit.Entry("X-2", "codex", 1, "agree", "One volume", mind="sticky sessions"),
        audit.Entry("X-2", "claude", 1, "agree"),
        audit.Entry("X-2", "codex", 2, "agree"),  # nothing would change its mind now
        audit.Entry("X-3", "codex", 1, "agree", "Keep Redis", mind="a queue on it"),
        audit.Entry("X-3", "claude", 1, "disagree", mind="the queue moving"),
        audit.Entry("X-3", "codex", 2, "withdraw", mind="never mind"),
    ]
    found = audit.compute(audit.Record(entries), tmp_path)["revisit_when"]
    assert found == [
        {"side": "claude", "said": "a second region", "points": ["X-1"], "where": None},
        {"side": "codex", "said": "a peak above 2k/s", "points": ["X-1"], "where": None}]


@pytest.mark.parametrize(("text", "said"), [
    ("Agreed.\nRevisit when: writes pass 2k/s.\n", "writes pass 2k/s."),
    ("- **Revisit when:** we shard\n", "we shard"),
    ("revisit when: lower case counts\n", "lower case counts"),
    ("Revisit when: first\nRevisit when: last\n", "last"),
    ("> Revisit when: quoted from the other side\n", None),
    ("```\nRevisit when: in a code block\n```\n", None),
    ("    Revisit when: indented\n", None),
    ("We said Revisit when: in a sentence\n", None),
    ("Revisit when:\n", None),
])
def test_a_revisit_line_counts_only_on_a_line_of_its_own(text: str, said: str | None) -> None:
    assert markers.revisit_when(text) == said
