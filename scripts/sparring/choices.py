"""What a user chooses from by name: a turn's effort, Codex's sandbox, the schema Codex
answers in. Here, so that the command line's declarations (params.py), the settings
(config.py) and the schemas (answers.py) name them once."""

EFFORTS = ("low", "medium", "high", "xhigh")
SANDBOXES = ("read-only", "workspace-write", "danger-full-access")
CODEX_ANSWER = "codex-answer"
CLAUDE_VERDICT = "claude-verdict"
CLAUDE_SYNTHESIS = "claude-synthesis"
