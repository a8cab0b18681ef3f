"""A turn's settings are one table (config.TURN_SETTINGS): a row added there reaches every
verb that starts a turn as an option (with its variable), sparring.yaml, the settings a turn
runs with and its record (and the record's shape check), codex's command line, doctor's
check of codex's flags, and the last gate before codex; a later round carries it as its row
says. One toy setting walks through all of them, and without its row the gate refuses it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click
import pytest

from sparring import codex, config, params
from sparring.cli import main as cli_main
from sparring.codex import sandbox
from sparring.errors import SparringError
from sparring.store import shapes
from sparring.store.sessions import find_turn, resolve
from sparring.turn import launch, turns

TOY = config.Setting(
    "tone", "The tone Codex answers in. Default: plain", "choice",
    config._choice(("plain", "terse")), lambda chosen: "plain", "str", "codex",
    choices=("plain", "terse"), env="SPARRING_TONE", required=False,
    codex=config.CodexArg("--tone", "--tone"), resume=config.CARRIED)
ALLOWED = sandbox.Allowance("workspace-write", "environment", "SPARRING_SANDBOX")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "TURN_SETTINGS", (*config.TURN_SETTINGS, TOY))


def parsed(command: click.Command, *words: str) -> dict[str, Any]:
    context = command.make_context(command.name, list(words))
    return dict(context.params)


def test_a_toy_setting_reaches_the_options_of_every_verb_that_starts_a_turn(
        toy: None, monkeypatch: pytest.MonkeyPatch) -> None:
    built = cli_main.build()
    start, resume = built.commands["start"], built.commands["resume"]
    round_ = built.commands["debate"].commands["round"]  # type: ignore[attr-defined]
    for command in (start, resume, round_):
        shown = {o.opts[0]: o for o in command.params if isinstance(o, click.Option)}
        assert shown["--tone"].envvar == "SPARRING_TONE", command.name
    assert parsed(start, "S", "--tone", "terse")["tone"] == "terse"
    monkeypatch.setenv("SPARRING_TONE", "plain")
    assert parsed(start, "S")["tone"] == "plain"
    with pytest.raises(click.BadParameter):
        parsed(start, "S", "--tone", "loud")
    # A workflow's `turn-limits` verbs take the runner's limits only: not a codex setting.
    assert "--tone" not in [o.flag for o in params.group_options(params.Group("turn-limits"))]


def test_a_toy_setting_is_read_from_sparring_yaml_and_checked_there(
        toy: None, tmp_path: Path) -> None:
    (tmp_path / "sparring.yaml").write_text("tone: terse\n")
    assert config.resolve_turn({}, config.load(tmp_path))["tone"] == "terse"
    assert config.resolve_turn({"tone": "plain"}, config.load(tmp_path))["tone"] == "plain"
    (tmp_path / "sparring.yaml").write_text("tone: loud\n")
    with pytest.raises(SparringError, match="setting 'tone'") as refused:
        config.load(tmp_path)
    assert refused.value.code == "config_invalid"


def test_a_toy_setting_reaches_the_record_codexs_argv_doctor_and_the_gate(
        toy: None, session: str, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = resolve(session, repo)
    settings = config.resolve_turn({"tone": "terse"}, {})
    with found.update() as data:
        argv = turns.codex_argv(str(shutil.which("codex")), data, settings, thread_id=None,
                                schema=None)
        turns.new_turn(found, data, round_no=1, purpose="round", settings=settings,
                       prompt=b"q", argv=argv, thread_id=None)
    turn = find_turn(found.load(), 1)  # read back through the shape check
    assert turn["settings"]["tone"] == "terse"
    assert argv[argv.index("--tone") + 1] == "terse"
    resumed = codex.exec_argv("codex", cwd=repo, settings=settings, thread_id="t-1",
                              output_schema=None)
    assert resumed[resumed.index("--tone") + 1] == "terse"
    assert "--tone" in codex.flags(resume=False) and "--tone" in codex.flags(resume=True)
    assert sandbox.refusal(argv, ALLOWED) is None
    forged = [*argv[:2], "--tone", "loud", *argv[2:]]
    assert sandbox.refusal(forged, ALLOWED) is not None, "a value the row does not take"

    record = {**turn["settings"], "tone": 5}
    assert shapes.session_problem({**found.load(), "turns": [{**turn, "settings": record}]})

    monkeypatch.setattr(config, "TURN_SETTINGS", config.TURN_SETTINGS[:-1])  # the row gone
    assert sandbox.refusal(argv, ALLOWED) is not None


def test_a_later_round_carries_a_toy_setting_as_its_row_says(toy: None, repo: Path) -> None:
    previous: Any = {"settings": config.resolve_turn({"tone": "terse"}, {}).record(),
                     "sandbox": None}
    data = {"root": str(repo), "cwd": str(repo)}
    carried, _ = launch._resume_settings(data, previous, {})
    assert carried["tone"] == "terse"
    given, _ = launch._resume_settings(data, previous, {"tone": "plain"})
    assert given["tone"] == "plain"


def test_a_turn_recorded_before_a_setting_existed_gets_its_default(toy: None) -> None:
    older = {s.name: config.resolve_turn({}, {})[s.name] for s in config.TURN_SETTINGS[:-1]}
    assert config.TurnSettings.from_record(older)["tone"] == "plain"


def test_a_fixed_switch_passes_the_gate_only_as_its_row_makes_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A setting with no option (what Codex must run without, say) goes to codex as its row
    spells it, a TOML switch, and the gate takes no other value."""
    off = config.Setting("memories", "", "flag", lambda v: _exactly(False, v),
                         lambda chosen: False, "bool", "codex", option=False, in_file=False,
                         required=False, codex=config.CodexArg("-c", "--config",
                                                                key="memories.enabled"))
    monkeypatch.setattr(config, "TURN_SETTINGS", (*config.TURN_SETTINGS, off))
    settings = config.resolve_turn({}, {})
    argv = codex.exec_argv("codex", cwd=tmp_path, settings=settings, thread_id=None,
                           output_schema=None)
    assert "memories.enabled=false" in argv
    assert sandbox.refusal(argv, ALLOWED) is None
    on = [w.replace("memories.enabled=false", "memories.enabled=true") for w in argv]
    assert sandbox.refusal(on, ALLOWED) is not None
    assert "memories" not in config.top_level()


def _exactly(wanted: object, value: object) -> object:
    if value != wanted:
        raise ValueError(f"must be {wanted!r}")
    return value
