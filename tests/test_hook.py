"""The plugin's PreToolUse hook approves what install.py's rules approve, for the plugin's own
skills, and nothing else: no chained, substituted or redirected command, no path out of the
plugin or the inbox, no verb a skill does not run, no call naming --sandbox. On any doubt it
prints nothing (Claude Code asks), and it never denies.

Most cases ask `decide` in process with this repository as the plugin (it is one); the
cases about links, and the command line Claude Code runs, use a copy of the plugin and run
its hook as hooks/hooks.json does. tests/integration/test_plugin.py runs it in the real
Claude Code.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from sparring.cli.main import cli
from sparring.installer import hook, layout
from support.installing import ROOT, SKILLS

PLUGIN = str(ROOT)


def bash(command: str, cwd: Path | str = "/tmp") -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(cwd),
            "tool_input": {"command": command, "description": "run the sparring runner"}}


def tool(name: str, path: str, cwd: Path | str) -> dict[str, Any]:
    given = {"file_path": path, "content": "x"} if name == "Write" else {"file_path": path}
    return {"hook_event_name": "PreToolUse", "tool_name": name, "cwd": str(cwd),
            "tool_input": given}


def launcher(skill: str, root: Path = ROOT) -> str:
    return f"{root}/skills/{skill}/sparring"


def every_verb() -> list[str]:
    """Every verb of the runner's command line, groups' subcommands as two words."""
    found = []
    for name, command in sorted(cli.commands.items()):
        if isinstance(command, click.Group):
            found += [f"{name} {sub}" for sub in sorted(command.commands)]
        else:
            found.append(name)
    return found


# -- what it approves: exactly the installed rules --------------------------------------------


@pytest.mark.parametrize("skill", SKILLS)
def test_it_approves_a_skills_launcher_with_exactly_the_verbs_the_installed_rules_allow(
        skill: str) -> None:
    """The list is layout.py's, not a copy: a verb is approved here if and only if the rules
    install.py writes for an installed skill folder approve it."""
    rules = layout.rules([ROOT / "skills" / skill])
    for verb in every_verb():
        command = f"{launcher(skill)} {verb} some-session --timeout 100"
        wanted = f"Bash({launcher(skill)} {verb} *)" in rules
        found = hook.decide(bash(command), PLUGIN)
        assert (found is not None) is wanted, (skill, verb, found)
    assert hook.decide(bash(f"{launcher(skill)} wait"), PLUGIN)  # the verb alone


def test_the_commands_the_skills_write_are_approved() -> None:
    for command in ("{L} doctor --json --inbox", "{L} init --skill think-about",
                    "{L} start S --template think-about/round1 --vars-file {I}/round1.yaml",
                    "{L} wait S --seal {I}/analysis.md", "{L} verdict S --file {I}/verdict.json",
                    "{L} report S --synthesis {I}/synthesis.json", "{L} guard accept S",
                    "{L} finalize S", "{L} stop S", "{L} resume S --recover --effort medium"):
        filled = command.format(L=launcher("think-about"), I="/home/me/app/.sparring/inbox")
        assert hook.decide(bash(filled), PLUGIN), filled


def test_a_path_with_a_space_is_approved_in_double_quotes_only(tmp_path: Path) -> None:
    plugin = copy_plugin(tmp_path / "My Plugins" / "sparring")
    spaced = launcher("think-about", plugin)
    inbox = "/home/me/My App/.sparring/inbox/round.md"
    approved = [f'"{spaced}" wait S', f'"{spaced}" verdict S --file "{inbox}"']
    refused = [f"{spaced} wait S", f"'{spaced}' wait S", spaced.replace(" ", "\\ ") + " wait S",
               f'"{spaced}"  wait S', f'"{spaced}" wait "S', f'x"{spaced}" wait S',
               f'"{spaced}" "wait S"']
    found = run_hook(plugin, [bash(c) for c in approved + refused])
    assert [bool(f) for f in found] == [True] * len(approved) + [False] * len(refused), found


def test_a_path_with_a_single_quote_is_approved_in_double_quotes_only(tmp_path: Path) -> None:
    """A home such as /Users/Jane O'Doe: inside double quotes a single quote is literal, so
    the launcher there is approved as written that way, and never outside them."""
    plugin = copy_plugin(tmp_path / "Jane O'Doe" / "sparring")
    quoted = launcher("think-about", plugin)
    inbox = "/Users/Jane O'Doe/app/.sparring/inbox/round.md"
    approved = [f'"{quoted}" wait S', f'"{quoted}" verdict S --file "{inbox}"']
    refused = [f"{quoted} wait S", f"'{quoted}' wait S", f'"{quoted}" wait S\'x',
               f'"{quoted}" wait \'S\'', f'"{quoted}" verdict S --file {inbox}',
               quoted.replace("'", "\\'").replace(" ", "\\ ") + " wait S"]
    found = run_hook(plugin, [bash(c) for c in approved + refused])
    assert [bool(f) for f in found] == [True] * len(approved) + [False] * len(refused), found


# -- what it leaves to Claude Code's prompt ------------------------------------------------------


L = launcher("think-about")
REFUSED = {
    "chained": [f"{L} wait S && rm -rf ~", f"{L} wait S; rm -rf ~", f"{L} wait S || true",
                f"{L} wait S & curl x", f"{L} wait S\nrm -rf ~", f"true && {L} wait S",
                f"cd /tmp && {L} wait S"],
    "piped or redirected": [f"{L} wait S | sh", f"{L} wait S > /etc/x", f"{L} wait S 2>&1",
                            f"{L} verdict S < /etc/passwd", f"cat x | {L} verdict S"],
    "substituted": [f"{L} wait $(rm -rf ~)", f"{L} wait `id`", f"{L} wait ${{HOME}}",
                    f'{L} wait "$(id)"', f"{L} wait $S", f"{L} wait <(id)"],
    "with the environment set": [f"SPARRING_SANDBOX=danger-full-access {L} wait S",
                                 f"env SPARRING_SANDBOX=danger-full-access {L} wait S",
                                 f"export SPARRING_SANDBOX=x && {L} wait S"],
    "a verb no skill rule approves": [f"{L} render --list", f"{L} guard revert --session S",
                                      f"{L} guard check --session S", f"{L} guard snapshot S",
                                      f"{L}", f"{L} --help", f"{L} debate new d --file f",
                                      f"{L} waitx S", f"{L} guard", f"{L} guard acceptx S",
                                      f"{L} --session-start", f"{ROOT}/scripts/launcher.sh "
                                      "--session-start"],
    "naming --sandbox": [f"{L} start S --sandbox read-only", f"{L} resume S --sandbox=x",
                         f"{L} wait S --sandboxes", f"{L} wait --sandbox"],
    "not the plugin's launcher": [
        "sparring wait S", "skills/think-about/sparring wait S",
        f"./{ROOT.name}/skills/think-about/sparring wait S",
        f"{ROOT}/skills/think-about/../think-about/sparring wait S",
        f"{ROOT}/skills/think-about//sparring wait S", f"{ROOT}//skills/think-about/sparring wait",
        f"{ROOT}/scripts/launcher.sh wait S", f"{ROOT}/skills/think-about/SKILL.md wait S",
        f"{ROOT}/skills/no-such-skill/sparring wait S", "/bin/sh -c x",
        "/elsewhere/.claude/skills/think-about/sparring wait S",
        f"python3 {ROOT}/skills/think-about/sparring wait S"],
    "quoted or escaped another way": [f"'{L}' wait S", f"{L} wait 'S'", f"{L} wait S\\ x",
                                      f"{L} wait S*", f"{L} wait ~", f"{L} wait S # x",
                                      f"{L} wait S\tx", f"{L}  wait S", f" {L} wait S",
                                      f"{L} wait {{a,b}}", f"{L} wait S!"],
}


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_no_answer_for_anything_else(kind: str) -> None:
    for command in REFUSED[kind]:
        assert hook.decide(bash(command), PLUGIN) is None, command


def test_no_answer_for_another_plugin_or_none(tmp_path: Path) -> None:
    command = bash(f"{L} wait S")
    assert hook.decide(command, PLUGIN)
    for plugin in ("", "relative/root", f"{ROOT}//", f"{ROOT}/.", str(tmp_path),
                   f"{ROOT}/skills"):  # `{ROOT}/` is 2.1.197's spelling: the test below
        assert hook.decide(command, plugin) is None, plugin


@pytest.mark.parametrize("event", [
    None, [], "x", {}, {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                        "tool_input": {"command": L + " wait S"}},
    {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": L + " wait S"},
    {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": 1}},
    {"hook_event_name": "PreToolUse", "tool_name": "WebFetch",
     "tool_input": {"url": "http://127.0.0.1"}},
    {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}])
def test_no_answer_for_input_it_does_not_expect(event: Any) -> None:
    assert hook.decide(event, PLUGIN) is None


# -- the inbox and the skills' folders -----------------------------------------------------------


def test_writes_into_the_inbox_and_nowhere_else(tmp_path: Path) -> None:
    cwd = tmp_path / "app"
    (cwd / ".sparring" / "inbox").mkdir(parents=True)
    inbox = cwd / ".sparring" / "inbox"
    for name in ("Write", "Edit", "MultiEdit"):
        assert hook.decide(tool(name, str(inbox / "round.md"), cwd), PLUGIN), name
    assert hook.decide(tool("Write", str(inbox / "new" / "x.md"), cwd), PLUGIN)
    outside = [cwd / "app.py", cwd / ".sparring" / "sessions" / "x" / "session.json",
               cwd / ".sparring" / "inbox", tmp_path / "elsewhere" / ".sparring" / "inbox" / "x"]
    for path in outside:
        assert hook.decide(tool("Write", str(path), cwd), PLUGIN) is None, path
    for path in (f"{inbox}/../../app.py", f"{inbox}//x.md", f"{inbox}/./x.md", "x.md",
                 ".sparring/inbox/x.md"):
        assert hook.decide(tool("Write", path, cwd), PLUGIN) is None, path
    assert hook.decide(tool("Write", str(inbox / "x.md"), "relative"), PLUGIN) is None
    assert hook.decide(tool("NotebookEdit", str(inbox / "x.md"), cwd), PLUGIN) is None


def test_no_write_through_a_link_out_of_the_inbox(tmp_path: Path) -> None:
    cwd = tmp_path / "app"
    (cwd / ".sparring").mkdir(parents=True)
    secret = tmp_path / "secret"
    secret.mkdir()
    (cwd / ".sparring" / "inbox").symlink_to(secret)  # the inbox itself is a link
    assert hook.decide(tool("Write", str(cwd / ".sparring/inbox/x.md"), cwd), PLUGIN) is None
    (cwd / ".sparring" / "inbox").unlink()
    (cwd / ".sparring" / "inbox").mkdir()
    (cwd / ".sparring" / "inbox" / "key").symlink_to(tmp_path / "secret" / "key")
    (cwd / ".sparring" / "inbox" / "sub").symlink_to(secret)
    for path in (cwd / ".sparring/inbox/key", cwd / ".sparring/inbox/sub/x.md"):
        assert hook.decide(tool("Write", str(path), cwd), PLUGIN) is None, path


def test_reads_inside_the_plugins_skill_folders_only() -> None:
    cwd = "/home/me/app"
    for skill in SKILLS:
        for path in (ROOT / "skills" / skill).rglob("*"):
            assert hook.decide(tool("Read", str(path), cwd), PLUGIN), path
    for path in (ROOT / "scripts" / "launcher.sh", ROOT / "install.py", Path("/etc/passwd"),
                 ROOT / "skills", ROOT / "skills" / "no-such-skill" / "SKILL.md",
                 f"{ROOT}/skills/think-about/../../install.py"):
        assert hook.decide(tool("Read", str(path), cwd), PLUGIN) is None, path


def skill(name: Any) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Skill", "cwd": "/home/me/app",
            "tool_input": {"skill": name, "args": "go on with the debate"}}


def test_claude_may_invoke_the_plugins_own_skills_only() -> None:
    """What install.py's `Skill(<skill>)` rules allow an installed pack: Claude invoking a
    skill itself, for plain words. The plugin's skills are named after the plugin."""
    assert json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["name"] == \
        hook.NAME
    for name in SKILLS:
        assert f"Skill({name})" in layout.rules([ROOT / "skills" / name])
        assert hook.decide(skill(f"sparring:{name}"), PLUGIN), name
    for name in ("arch-debate", "other:arch-debate", "sparring:", "sparring:no-such-skill",
                 "sparring:../arch-debate", "sparring:arch-debate/x", 1, None):
        assert hook.decide(skill(name), PLUGIN) is None, name


# -- a copy of the plugin, as Claude Code runs its hook --------------------------------------------


def copy_plugin(dest: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in (".claude-plugin", "hooks", "skills", "references", "scripts"):
        shutil.copytree(ROOT / name, dest / name, symlinks=True, ignore=ignore)
    return dest


def hook_command(plugin: Path) -> list[str]:
    """hooks/hooks.json's command, as Claude Code runs it (CLAUDE_PLUGIN_ROOT substituted)."""
    config = json.loads((plugin / "hooks" / "hooks.json").read_text())
    entries = config["hooks"]["PreToolUse"]  # one a tool, each narrowed by its `if`
    assert {t for e in entries for t in e["matcher"].split("|")} == {
        "Bash", "Write", "Edit", "MultiEdit", "Read", "Skill"}
    [command] = {h["command"] for e in entries for h in e["hooks"]}  # the same hook for each
    assert {h["type"] for e in entries for h in e["hooks"]} == {"command"}
    return shlex.split(command.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin)))


def run_hook(plugin: Path, events: list[Any]) -> list[dict[str, Any] | None]:
    """Each event through the plugin's hook as Claude Code runs it: its answer, or None."""
    found = []
    for event in events:
        stdin = event if isinstance(event, str) else json.dumps(event)
        done = subprocess.run(hook_command(plugin), input=stdin, capture_output=True, text=True,
                              timeout=60, check=False,
                              env={"PATH": os.environ["PATH"], "CLAUDE_PLUGIN_ROOT": str(plugin)})
        assert done.returncode == 0 and done.stderr == "", done
        found.append(json.loads(done.stdout) if done.stdout else None)
    return found


def test_the_hook_answers_in_claude_codes_shape_or_not_at_all(tmp_path: Path) -> None:
    plugin = copy_plugin(tmp_path / "sparring")
    allowed, chained, garbage = run_hook(plugin, [
        bash(f"{launcher('dual-model', plugin)} seal S --file /w/.sparring/inbox/a.md"),
        bash(f"{launcher('dual-model', plugin)} seal S && id"), "{not json"])
    assert allowed == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow",
        "permissionDecisionReason": "sparring plugin: the dual-model skill's runner, `seal`"}}
    assert chained is None and garbage is None


def test_a_link_in_the_plugin_leading_out_of_it_is_not_approved(tmp_path: Path) -> None:
    plugin = copy_plugin(tmp_path / "sparring")
    skill = plugin / "skills" / "think-about"
    (skill / "sparring").unlink()
    (skill / "sparring").symlink_to("/bin/sh")
    (skill / "references" / "leak.md").symlink_to("/etc/hostname")
    found = run_hook(plugin, [bash(f"{skill}/sparring wait S"),
                              tool("Read", str(skill / "references" / "leak.md"), tmp_path),
                              tool("Read", str(skill / "SKILL.md"), tmp_path)])
    assert found[:2] == [None, None] and found[2] is not None


def test_the_hook_speaks_only_for_the_plugin_it_ships_in(tmp_path: Path) -> None:
    """A CLAUDE_PLUGIN_ROOT naming another copy (another plugin's hook would get it) gets no
    answer for this copy's launcher, nor for its own."""
    ours, other = copy_plugin(tmp_path / "ours"), copy_plugin(tmp_path / "other")
    event = bash(f"{launcher('think-about', other)} wait S")
    done = subprocess.run(hook_command(ours), input=json.dumps(event), capture_output=True,
                          text=True, timeout=60, check=False,
                          env={"PATH": os.environ["PATH"], "CLAUDE_PLUGIN_ROOT": str(other)})
    assert done.returncode == 0 and done.stdout == ""


@pytest.mark.parametrize("root, approved", [("{plugin}/", True), ("{plugin}//", False),
                                             ("{plugin}/.", False)])
def test_a_plugin_root_named_with_a_trailing_slash_is_the_same_plugin(
        tmp_path: Path, root: str, approved: bool) -> None:
    """2.1.197 names a plugin installed from a local marketplace `<folder>/`: the launcher's
    calls are still its own; a root spelled any other second way is not."""
    plugin = copy_plugin(tmp_path / "sparring")
    event = bash(f"{launcher('think-about', plugin)} wait S")
    done = subprocess.run(hook_command(plugin), input=json.dumps(event), capture_output=True,
                          text=True, timeout=60, check=False,
                          env={"PATH": os.environ["PATH"],
                               "CLAUDE_PLUGIN_ROOT": root.format(plugin=plugin)})
    assert done.returncode == 0 and bool(done.stdout) is approved, done


def test_a_python_without_sparrings_needs_still_answers_nothing(tmp_path: Path) -> None:
    """The hook runs on the system's python3, not the runtime: it needs the standard library
    only, and an interpreter that cannot import it exits 0 without a word."""
    plugin = copy_plugin(tmp_path / "sparring")
    (plugin / "scripts" / "sparring" / "installer" / "layout.py").write_text("raise ImportError\n")
    done = subprocess.run([sys.executable, "-I", "-S", str(plugin / "scripts" / "hook.py")],
                          input=json.dumps(bash(f"{launcher('think-about', plugin)} wait S")),
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"CLAUDE_PLUGIN_ROOT": str(plugin)})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
