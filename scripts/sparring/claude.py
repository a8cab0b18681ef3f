"""The Claude that runs the debate, as far as sparring can know it: the model Claude Code
named when its session started.

Claude Code tells a command it runs nothing of its model; it tells its SessionStart hooks
(the `model` of the event). The launcher's `--session-start`, run as that hook (the plugin's
hooks/hooks.json, or the settings install.py writes), appends the name to the session's
environment file, so every Bash call of the session has it as SPARRING_CLAUDE_MODEL. Each
Codex turn records it (turns.new_turn), and the report names it (`decision-makers`).

What it is and is not: the model at the start of the Claude Code session that ran the round
(a `/model` switch later in that session does not reach a hook), named by Claude Code, or by
whatever set the variable (a settings file's `env` can): a label on the record, never an
input to a decision. A value outside the launcher's rule (below, the same characters and
length) is taken for none.

Codex is never told who the other side is (the prompts say "the other analyst"), by
mechanism too: it runs in the user's environment less the name of the model and the
variables that name Claude Code (`codex_environment`), which Claude Code sets for every
command it runs (CLAUDECODE, CLAUDE_CODE_ENTRYPOINT, CLAUDE_CODE_SESSION_ID, …).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

MODEL_VARIABLE = "SPARRING_CLAUDE_MODEL"
# The launcher's rule: up to 100 of these characters (model names and ids, Bedrock's and
# Vertex's included: `us.anthropic.claude-…-v1:0`, `claude-…@2025…`, `claude-…[1m]`).
_MODEL = re.compile(r"[A-Za-z0-9._:@/\[\]-]{1,100}")


# Claude Code's own variables: the marks it sets for each command it runs (CLAUDECODE=1,
# CLAUDE_CODE_ENTRYPOINT, CLAUDE_CODE_SESSION_ID, CLAUDE_CODE_EXECPATH, CLAUDE_CODE_SSE_PORT:
# 2.1.332), its hooks' (CLAUDE_ENV_FILE, CLAUDE_PROJECT_DIR, CLAUDE_PLUGIN_ROOT, …) and its
# settings (CLAUDE_CODE_USE_BEDROCK, CLAUDE_CONFIG_DIR, …). ANTHROPIC_* stay: a Codex
# provider of the user's may read its key there.
_CLAUDE_CODES = ("CLAUDECODE", "CLAUDE_")


def codex_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """What of `environ` Codex runs in: all of it but what names the other side."""
    return {name: value for name, value in environ.items()
            if name != MODEL_VARIABLE and not name.startswith(_CLAUDE_CODES)}


def model(environ: Mapping[str, str] | None = None) -> str | None:
    """The model Claude Code named at the start of this session, or None."""
    return named((os.environ if environ is None else environ).get(MODEL_VARIABLE))


def named(value: object) -> str | None:
    """`value` if it is a model's name by the launcher's rule, else None (a record read
    back is checked again: the project's files are within Codex's reach)."""
    return value if isinstance(value, str) and _MODEL.fullmatch(value) else None
