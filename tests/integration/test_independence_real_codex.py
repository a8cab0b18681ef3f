"""Independent by mechanism, and checked, with the real Codex CLI in its default read-only
sandbox against a loopback mock of the Responses API, whose tool calls make the real codex
run shell commands: the four cases of the independence issue.

The runner takes no seal while Codex's round one can run (a seal attempted then is refused
and keeps nothing), so Claude writes and seals its analysis once round one has ended, as the
skills say. Codex's round-one tool call is held by the mock until the scripted Claude has
done everything it may do meanwhile (its early seal refused); what Codex ran is then checked
when the analysis is sealed.
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from support.debates import SYNTHESIS, Debate, answer, cpt, pt
from support.loopback_server import Exchange
from support.responses_mock import Behaviour, ResponsesMock, shell_call, text

pytestmark = pytest.mark.integration

CODE = "def expire(rows): return [row for row in rows if row.expires_at > now()]"
ANSWER_TEXT = "SQLite in WAL mode holds the write rate, measured twice"


class Held:
    """A behaviour the mock holds until `gate` opens (the test's Claude has acted)."""

    def __init__(self, gate: threading.Event, then: Behaviour) -> None:
        self.gate, self.then = gate, then

    def respond(self, exchange: Exchange) -> None:
        assert self.gate.wait(60), "the test never opened the gate"
        self.then.respond(exchange)


def analysis_of(words: str) -> str:
    """Claude's analysis: a line of the project's code it quotes, and words of its own."""
    return (f"# My analysis\n\n- C-1: expiry needs a sweep job; today it runs `{CODE}` on "
            f"every read, and {words}.\n")


def own_words() -> str:
    """Words no other test (nor anything else on the machine) has."""
    return f"the nightly batch window {uuid.uuid4().hex} cannot absorb the peak load"


def pattern_of(words: str) -> str:
    """A search for `words` that does not find itself: the command naming it lies in Codex's
    own records (its events, its rollout), which a search of the home folder reads too."""
    unique = words.split()[4]
    return f"batch window {unique[:8]}[0-9a-f]{{24}}"


@pytest.fixture
def debate(real_codex: Path, sparring: Any, scratch: Path, repo: Path) -> Debate:
    (repo / "src").mkdir()
    (repo / "src" / "expiry.py").write_text(f"import time\n\n{CODE}\n")
    return Debate(sparring, None, scratch)


def round_one(debate: Debate, responses_mock: ResponsesMock, command: str,
              gate: threading.Event | None = None) -> None:
    """Codex's round one runs `command` (held until `gate` opens), then answers."""
    call = shell_call(command)
    responses_mock.script(call if gate is None else Held(gate, call), text(json.dumps(answer(
        [cpt("X-1", "agree", "Expiry needs a sweep job")], position=ANSWER_TEXT))))
    debate.start()


def sealed(debate: Debate, analysis: str) -> dict[str, Any]:
    """As the skills have Claude do it: wait for round one's end, then write and seal."""
    waited = debate.wait()
    assert waited["status"] == "completed" and waited["review"] is None, waited
    done = debate.sparring("wait", debate.sid, "--seal", debate.file("analysis.md", analysis))
    assert done.exit_code == 0, done.raw
    return dict(done.out)


def reported(debate: Debate) -> tuple[dict[str, Any], str]:
    verdict = debate.verdict({"points": [pt("X-1", "agree", cls="genuine_agreement",
                                            sealed="C-1")],
                              "convergence": {"state": "agree", "reason": "settled"}})
    assert verdict.exit_code == 0, verdict.raw
    debate.sparring("stop", debate.sid)  # the round the verdict started: not this test's
    out, report = debate.report(SYNTHESIS)
    return json.loads(Path(out["json"]).read_text())["agreement_audit"], report


def command_output(debate: Debate) -> str:
    from sparring.store.sessions import resolve

    session = resolve(debate.sid, Path.cwd())
    lines = Path(session.output(1, "events.jsonl")).read_text().splitlines()
    return "".join(str(event["item"].get("aggregated_output", "")) for event in map(
        json.loads, lines) if event["type"] == "item.completed"
        and event["item"]["type"] == "command_execution")


def test_a_search_for_the_analysis_during_round_one_finds_it_nowhere(
        debate: Debate, responses_mock: ResponsesMock, tmp_path: Path) -> None:
    """Claude tries to seal while Codex works (refused, nothing kept); then Codex searches the
    project, the home folder and the temp folder for a phrase of the analysis: nothing. Once
    round one has ended, the seal is taken and independence is checked."""
    words = own_words()
    gate = threading.Event()
    round_one(debate, responses_mock,
              f"grep -rIlE '{pattern_of(words)}' . \"$HOME\" {tmp_path}; echo done", gate)
    early = debate.sparring("seal", debate.sid, input=analysis_of(words).encode())
    assert early.error_code == "seal_too_early", early.raw
    gate.set()
    out = sealed(debate, analysis_of(words))
    assert command_output(debate).strip() == "done", "the search found the analysis"
    assert out["independence"] == {"state": "checked"}
    audit, _ = reported(debate)
    assert audit["counts"]["independent"] == 1


def test_a_copy_in_the_temp_folder_found_by_codex_voids_independence(
        debate: Debate, responses_mock: ResponsesMock, tmp_path: Path) -> None:
    words = own_words()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "draft.md").write_text(analysis_of(words))  # the user's draft, outside
    search = f"grep -rI 'batch window' {notes}"
    round_one(debate, responses_mock, search)
    out = sealed(debate, analysis_of(words))
    assert words in command_output(debate), "codex did not find the copy"
    assert out["independence"]["state"] == "void" and search in out["independence"]["why"]
    audit, report = reported(debate)
    assert audit["counts"]["independent"] == 0
    assert audit["independence"]["state"] == "void"
    assert search in audit["independence"]["seen"][0]["command"]
    assert audit["summary"].startswith("Agreement: independence void (in round one Codex's "
                                       "command `/bin/bash -lc")
    assert f"_{audit['summary']}_" in report
    assert search in report.split("## How the agreement was reached")[1]


def test_codex_reading_only_the_projects_files_keeps_the_point_independent(
        debate: Debate, responses_mock: ResponsesMock) -> None:
    round_one(debate, responses_mock, "cat src/expiry.py")
    out = sealed(debate, analysis_of(own_words()))
    assert CODE in command_output(debate), "codex printed the file the analysis quotes"
    assert out["independence"] == {"state": "checked"}
    audit, report = reported(debate)
    assert audit["counts"]["independent"] == 1
    assert audit["points"][0]["independent"] is True
    assert "Independence checked" in report


def test_codexs_answer_lies_nowhere_in_the_project_until_the_seal(
        debate: Debate, responses_mock: ResponsesMock, repo: Path) -> None:
    round_one(debate, responses_mock, "true")
    waited = debate.wait()
    assert waited["status"] == "completed" and waited["review"] is None

    def holding() -> list[str]:
        return sorted(str(p.relative_to(repo)) for p in repo.rglob("*")
                      if p.is_file() and ANSWER_TEXT.encode() in p.read_bytes())

    assert holding() == [], "Codex's answer lies in the project before the seal"
    sealed(debate, analysis_of(own_words()))
    assert holding() == [f".sparring/sessions/{debate.sid}/session.json"]
    assert debate.wait()["review"]["data"]["position"] == ANSWER_TEXT
