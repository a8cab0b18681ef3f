#!/bin/sh
# The sparring plugin's SessionStart hook (hooks/hooks.json): names the folder Claude Code
# keeps for the plugin's data to every Bash call of the session, where the launcher finds (or,
# on first use, makes) the plugin's own runtime (installer/plugin.py). Claude Code gives
# CLAUDE_PLUGIN_DATA to hooks only; what a SessionStart hook appends to CLAUDE_ENV_FILE is
# set for each Bash call (2.1.197 and 2.1.332 alike). A path a shell would read otherwise is
# left out: the launcher then falls back to a runtime install.py made. No Python starts here.
[ -n "${CLAUDE_ENV_FILE:-}" ] && [ -n "${CLAUDE_PLUGIN_DATA:-}" ] || exit 0
case "$CLAUDE_PLUGIN_DATA" in
  /*) ;;
  *) exit 0 ;;
esac
case "$CLAUDE_PLUGIN_DATA" in
  *"'"* | *"
"*) exit 0 ;;
esac
printf "export SPARRING_PLUGIN_DATA='%s'\n" "$CLAUDE_PLUGIN_DATA" >>"$CLAUDE_ENV_FILE"
exit 0
