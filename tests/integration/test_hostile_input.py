"""Hostile text through every route the skills hand text to the runner, in the real Claude Code.

Whatever Claude has to pass — JSON, code with braces and quotes, apostrophes, backticks,
`$(…)`, `{{ … }}`, heredoc terminators, CRLF, non-ASCII, 100 KB — goes into a file Claude's
Write tool puts in the inbox, and the command only names the file. Each run below sends the
corpus through the routes of one workflow and checks that Claude Code asked nothing and that
the runner received every text byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.habitat import Habitat, Scenario, codex_processes, make_habitat, run_workflow
from support.installing import shared_runtime
from support.messages_mock import MessagesMock
from support.responses_mock import ResponsesMock

pytestmark = pytest.mark.integration

CORPUS = [
    '{"ttl": 30, "owner": "it\'s ours"}',
    "{'a': 1, 'b': [2, 3]}",
    "it's the team's call; don't 'quote' me",
    "`rm -rf /` and $(whoami) and `$(id)` and ${HOME} and $PATH",
    "{{ QUESTION }} {% if x %}{% endif %} {# comment #}",
    "END\n'END'\nEOF\n<<'END'",
    "naïve café — 東京 🚀 ∑",
    "crlf\r\nline\ttab  trailing  \r\n",
    "; | & > < * ? [a] ~ ! # \\ \\n \\\" %s %(x)s",
    "AGREED: not a first line\n[CONSENSUS_REACHED] in a quote? no: > [CONSENSUS_REACHED]",
]
TEXT = "\n".join(CORPUS)
BIG = (TEXT + "\n") * (100_000 // (len(TEXT) + 1) + 1)  # over 100 KB, the corpus repeated
# Claude's message to Codex: the corpus, each of its paragraphs naming the point it is about
# (the runner refuses a paragraph that names none).
MESSAGE = re.sub(r"\n\s*\n", lambda blank: blank.group(0) + "X-1: ", "X-1: " + TEXT)
L, S, INBOX = "{{launcher}}", "{{session}}", "{{inbox}}"


def answer(points: list[dict[str, Any]], position: str) -> dict[str, Any]:
    """Codex's answer in its schema: every key, null where unused."""
    return {"position": position, "choice": None, "confidence": None, "points": points,
            "convergence": {"state": "continue", "reason": "open"},
            "proposed_summary": None, "approve_summary": None, "summary_objections": []}


def point(stance: str, cite: str) -> dict[str, Any]:
    return {"id": "X-1", "claim": TEXT, "stance": stance,
            "evidence": [{"cite": cite, "quote": None}], "note": TEXT,
            "would_change_my_mind": None}


def wait() -> dict[str, Any]:
    return {"bash": f"{L} wait {S}", "until": {"status": "!running"},
            "expect": {"status": "completed"}}


def as_yaml(mapping: dict[str, str]) -> str:
    """JSON is YAML: every text reaches the runner exactly, whatever it holds."""
    return json.dumps(mapping, ensure_ascii=False, indent=1)


DUAL = Scenario("hostile-dual-model", "dual-model", "Redis or SQLite?", [
    answer([point("agree", "a.py:1")], TEXT),
    answer([point("refine", "a.py:2")], "p"),
    answer([point("refine", "a.py:3")], "p"),
], [
    {"bash": f"{L} init --skill dual-model", "save": {"session": "session", "inbox": "inbox"}},
    {"write": f"{INBOX}/dispatch.yaml", "content": as_yaml({"QUESTION": TEXT, "CONTEXT": TEXT})},
    {"bash": f"{L} start {S} --template dual-model/dispatch --vars-file {INBOX}/dispatch.yaml",
     "expect": {"ok": True}},
    {"write": f"{INBOX}/analysis.md", "content": BIG},
    {"bash": f"{L} wait {S} --seal {INBOX}/analysis.md", "expect": {"sealed": True}},
    wait(),
    {"write": f"{INBOX}/verdict.json", "json": {
        "position": TEXT, "message": MESSAGE,
        "points": [{"id": "X-1", "class": "genuine_disagreement", "stance": "disagree",
                    "evidence": [TEXT], "note": TEXT}],
        "convergence": {"state": "continue", "reason": TEXT}}},
    {"bash": f"{L} verdict {S} --file {INBOX}/verdict.json",
     "expect": {"next.action": "wait", "next.started": True}},  # its message: the dive
    wait(),
    {"write": f"{INBOX}/verdict.json", "json": {
        "position": TEXT,
        "points": [{"id": "X-1", "class": "genuine_disagreement", "stance": "disagree",
                    "evidence": [TEXT], "note": TEXT}],
        "convergence": {"state": "continue", "reason": TEXT}}},
    {"bash": f"{L} verdict {S} --file {INBOX}/verdict.json",
     "save": {"next": "next.command", "dive": "next.optional.command"}},
    {"write": f"{INBOX}/synthesis.json", "json": {
        "recommendations": [TEXT], "open_questions": [TEXT],
        "confidence": {"level": "low", "reason": TEXT}, "conclusion": TEXT}},
    {"bash": "{{next}}", "save": {"json": "json"}, "expect": {"ok": True}},
    {"write": f"{INBOX}/follow-up.md", "content": TEXT},
    {"bash": "{{dive}}", "expect": {"ok": True}},
    wait(),
    {"bash": f"{L} finalize {S}"}, {"bash": f"{L} stop {S}"},
    {"text": "done"}])

ARCH = Scenario("hostile-arch-debate", "arch-debate", "Redis or SQLite?", [], [
    {"bash": f"{L} doctor --json --inbox", "save": {"inbox": "inbox"}},
    {"write": f"{INBOX}/protocol.yaml", "content": as_yaml({
        "question": TEXT, "codebase_context": TEXT, "options": TEXT, "open_questions": TEXT})},
    {"bash": f"{L} debate new debate/hostile --file {INBOX}/protocol.yaml",
     "save": {"dir": "dir", "session": "session"}, "expect": {"ok": True}},
    {"write": f"{INBOX}/round.md", "content": BIG},
    {"write": f"{INBOX}/stand-in.md", "content": TEXT},
    {"bash": f"{L} debate round {{{{dir}}}} --file {INBOX}/round.md --stand-in {INBOX}/stand-in.md",
     "expect": {"stand_in": True}},
    {"bash": f"{L} finalize {S}"},
    {"text": "done"}])

DEEP = Scenario("hostile-deep-discussion", "deep-discussion", "NONE", [], [
    {"bash": f"{L} doctor --json --inbox", "save": {"inbox": "inbox"}},
    {"write": f"{INBOX}/args.txt", "content": "NONE"},
    {"bash": f"{L} discuss new --file {INBOX}/args.txt", "save": {"session": "session"}},
    {"write": f"{INBOX}/frame.yaml", "content": as_yaml({
        "TOPIC": TEXT, "FRAMING": TEXT, "CONTEXT": TEXT, "CLAUDE_VIEW": TEXT})},
    {"bash": f"{L} discuss frame {S} --file {INBOX}/frame.yaml", "expect": {"ok": True}},
    {"write": f"{INBOX}/round.yaml", "content": as_yaml({"critic": TEXT, "response": TEXT})},
    {"bash": f"{L} discuss round {S} --file {INBOX}/round.yaml", "expect": {"ok": True}},
    {"write": f"{INBOX}/report.yaml", "content": as_yaml({k: TEXT for k in (
        "agreed_points", "key_trade_offs", "recommended_approach", "open_questions",
        "implementation_hints", "final_observations")})},
    {"bash": f"{L} discuss report {S} --file {INBOX}/report.yaml", "save": {"report": "report"}},
    {"bash": f"{L} finalize {S}"},
    {"text": "done"}])


@pytest.fixture
def habitat(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
            messages_mock: MessagesMock, responses_mock: ResponsesMock,
            codex_bin: Path) -> Iterator[Habitat]:
    made = make_habitat(tmp_path, shared_runtime(tmp_path_factory), messages_mock,
                        responses_mock, codex_bin)
    yield made
    assert codex_processes(made.project) == []


def text_of(path: Path) -> str:
    """The file's text exactly (read_text would turn CRLF into LF)."""
    return path.read_bytes().decode("utf-8")


def session_data(project: Path) -> tuple[Path, dict[str, Any]]:
    [found] = (project / ".sparring" / "sessions").glob("*/session.json")
    return found.parent, json.loads(text_of(found))


def run_clean(claude: Path, habitat: Habitat, scenario: Scenario) -> dict[str, Any]:
    outcome = run_workflow(claude, habitat, scenario)
    assert outcome.model.failures == [], outcome.model.failures
    assert outcome.model.finished
    assert outcome.denials == [], "Claude Code asked for permission"
    assert [e for e in outcome.model.log if e.is_error] == []
    assert not list((habitat.project / ".sparring" / "inbox").iterdir()), "every file taken"
    return dict(outcome.model.values)


def test_think_about_and_dual_model_routes(claude_each: Path, habitat: Habitat) -> None:
    values = run_clean(claude_each, habitat, DUAL)

    folder, data = session_data(habitat.project)
    first = text_of(folder / "turns" / "1" / "prompt.txt")
    assert first.count(TEXT) == 2, "QUESTION and CONTEXT, through --vars-file"
    assert (folder / "sealed-claude-round-1.md").read_bytes() == BIG.encode(), "wait --seal"
    verdict = data["engine"]["verdicts"]["1"]
    assert verdict["position"] == verdict["points"][0]["note"] == TEXT
    assert verdict["message"] == MESSAGE
    assert verdict["points"][0]["evidence"] == [TEXT]
    second = text_of(folder / "turns" / "2" / "prompt.txt")
    assert MESSAGE in second, "FOLLOW_UP through the verdict's message"
    third = text_of(folder / "turns" / "3" / "prompt.txt")
    assert TEXT in third, "FOLLOW_UP through --var-file"
    report = json.loads(Path(values["json"]).read_text(encoding="utf-8"))
    assert report["synthesis"]["conclusion"] == TEXT and report["synthesis"]["recommendations"] == [
        TEXT], "report --synthesis"


def test_arch_debate_routes(claude_each: Path, habitat: Habitat) -> None:
    values = run_clean(claude_each, habitat, ARCH)

    folder = Path(values["dir"])
    protocol = text_of(folder / "DEBATE-PROTOCOL.md")
    assert protocol.count(TEXT) == 4, "the protocol's question and slots"
    assert (folder / "round-0-claude.md").read_bytes() == BIG.encode(), "debate round --file"
    assert TEXT.strip() in text_of(folder / "round-1-codex.md"), "stand-in"


def test_deep_discussion_routes(claude_each: Path, habitat: Habitat) -> None:
    values = run_clean(claude_each, habitat, DEEP)

    _, data = session_data(habitat.project)
    settings = data["discussion"]
    assert settings["topic"] == settings["framing"] == settings["context"] == TEXT
    assert [m["text"] for m in settings["messages"]] == [TEXT, TEXT, TEXT]
    report = text_of(Path(values["report"]))
    assert report.count(TEXT) >= 6 + 3, "the synthesis sections and the transcript"
