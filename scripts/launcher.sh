#!/bin/sh
# sparring launcher: the one command every skill calls. It finds the runtime that
# `python3 install.py` made (a private virtual environment), so the skills work even
# when the system Python has none of sparring's dependencies.
# word: one word of a command (the hint's, an export's), quoted as sparring/quoting.py's
# shell_word quotes it (as it is, else "in double quotes" when a shell reads nothing inside
# them, else 'in single quotes').
word() (
  LC_ALL=C  # ranges of bytes, as Python's set of characters: no locale's collation
  case "$1" in
    '' | *[!A-Za-z0-9_@%+=:,./-]*) ;;
    *) printf '%s' "$1"; return ;;
  esac
  case "$1" in
    *'$'* | *'`'* | *'"'* | *'\'* | *'!'* | *'
'*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\"'\"'/g")" ;;
    *) printf '"%s"' "$1" ;;
  esac
)
# `sparring --session-start` is Claude Code's SessionStart hook (hooks/hooks.json for the
# plugin; the settings install.py writes for an installed pack), the event on stdin. It names
# to every Bash call of the session what Claude Code tells hooks alone: the model it runs
# (SPARRING_CLAUDE_MODEL, which the runner records with each round: sparring/claude.py holds
# the same rule) and, in the plugin's hook, the folder it keeps for the plugin's data
# (SPARRING_PLUGIN_DATA, where the plugin's runtime lives: below). What a SessionStart hook
# appends to CLAUDE_ENV_FILE is set for each Bash call (2.1.197 and 2.1.332 alike). Each value
# is one shell word (word, above); a model's name outside its rule, or a folder with a line
# break, is left out. It prints nothing and starts no Python.
if [ "${1:-}" = --session-start ]; then
  [ -n "${CLAUDE_ENV_FILE:-}" ] || exit 0
  [ ! -L "$CLAUDE_ENV_FILE" ] || exit 0  # a link: never appended through
  LC_ALL=C  # ranges of bytes: no locale's collation
  # The event's first "model" key (Claude Code writes it at the top level, compact JSON): a
  # string value never holds a bare `"model":"`, its quotes escaped. Builtins only.
  input=$(cat) model=
  case "$input" in
    *'"model":"'*) model=${input#*'"model":"'} model=${model%%'"'*} ;;
    *'"model": "'*) model=${input#*'"model": "'} model=${model%%'"'*} ;;
  esac
  case "$model" in
    "" | *[!]A-Za-z0-9._:@/[-]*) ;;
    *) [ "${#model}" -le 100 ] &&
      printf "export SPARRING_CLAUDE_MODEL='%s'\n" "$model" 2>/dev/null >>"$CLAUDE_ENV_FILE" ;;
  esac
  case "${CLAUDE_PLUGIN_DATA:-}" in
    *"
"*) ;;
    /*) printf 'export SPARRING_PLUGIN_DATA=%s\n' "$(word "$CLAUDE_PLUGIN_DATA")" \
      2>/dev/null >>"$CLAUDE_ENV_FILE" ;;
  esac
  exit 0
fi
# Native Windows (Git Bash, MSYS2, Cygwin) is refused in one line before anything else; WSL
# is Linux. Windows sets OS for every process, so Linux and macOS never run uname here. The
# message and hint are sparring/host.py's (tests/test_windows.py holds them together).
if [ "${OS:-}" = Windows_NT ] || [ -n "${MSYSTEM:-}" ]; then
  case "$(uname -s 2>/dev/null)" in
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
      echo '{"schema_version": 1, "ok": false, "verb": "launcher", "error": {"code": "platform_unsupported", "message": "sparring does not run on native Windows yet: run it inside WSL (Windows Subsystem for Linux), where it works as on Linux", "hint": "set up WSL (`wsl --install`), then install Claude Code, Codex and sparring inside it as on Linux: docs/windows.md gives the steps"}}'
      exit 1 ;;
  esac
fi
data="${XDG_DATA_HOME:-$HOME/.local/share}/sparring"
# A project's Claude Code settings may set any variable (`env`): the program that a variable
# leads to runs only when it lies outside the project, else one JSON error naming the
# variable. The project is the git work tree that holds here (the nearest folder, from here
# up, whose .git is a file or a git folder: store/locate.py's rule), and here itself (a
# folder with no .git of its own in a home kept in git); a .sparring/ above never counts.
# Where the program lies: its folder's real path (a virtual environment's python, a link to
# the system's, runs with its folder's packages), and, for a program named outright ($3 =
# follow), where its link leads. A project that holds the user's own home chose nothing:
# its settings are the user's. That home is the user database's (a home kept in git,
# Claude Code started in /), or $HOME when no Claude Code settings file from here up to /
# names the variable or HOME (a home of another name than the database's: a container's, a
# throwaway one); a file that spells a name with a \u escape counts as naming it. One
# subshell of builtins: readlink runs only for a named program that is a link, id only for
# one inside (measured: 0.6 ms a call, 2.2 ms with readlink).
named_by_settings() { # $1: a variable, $2: here; whether a settings file names it or HOME
  f=$2
  while :; do
    for file in "$f/.claude/settings.json" "$f/.claude/settings.local.json"; do
      [ -f "$file" ] || continue
      while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in *\"$1\"* | *\"HOME\"* | *\\[uU]*) return 0 ;; esac
      done < "$file"
    done
    [ -n "$f" ] || return 1
    f=${f%/*}
  done
}
git_folder() { # $1: a .git; git's own test, as store/locate.py makes it: a HEAD, and objects/
  # and refs/ in the folder its commondir names (a worktree's: a file, never through a link,
  # its first line), else in it
  [ -f "$1/HEAD" ] || return 1
  common=
  if [ -f "$1/commondir" ] && ! [ -L "$1/commondir" ]; then
    read -r common <"$1/commondir" || :
  fi
  case "$common" in "") common=$1 ;; /*) ;; *) common="$1/$common" ;; esac
  [ -d "$common/objects" ] && [ -d "$common/refs" ]
}
outside_project() { # $1: the variable that chose it, $2: the program, $3: follow its link
  root=$(
    cd -P . 2>/dev/null || exit
    here=$PWD d=$PWD
    while [ -n "$d" ] && ! [ -f "$d/.git" ] && ! git_folder "$d/.git"; do
      d=${d%/*}
    done
    case "$2" in */*) folder=${2%/*} ;; *) folder=. ;; esac
    cd -P "${folder:-/}" 2>/dev/null || exit
    at="$PWD/" link=
    if [ "${3:-}" = follow ] && [ -L "${2##*/}" ]; then
      link="$(readlink -f "${2##*/}" 2>/dev/null)/"
    fi
    home=
    for top in ${d:+"$d"} "$here"; do
      case "$at" in "${top%/}"/*) ;; *) case "$link" in "${top%/}"/*) ;; *) continue ;; esac ;; esac
      if [ -z "$home" ]; then
        user=$(id -un 2>/dev/null)
        case "$user" in "" | *[!A-Za-z0-9._@-]*) home=/nonexistent ;; *)
          eval "home=~$user"
          home=$(cd -P "$home" 2>/dev/null && pwd) || home=/nonexistent ;;
        esac
      fi
      case "$home/" in "${top%/}"/*) continue ;; esac
      case "$(cd -P "${HOME:-/nonexistent}" 2>/dev/null && pwd)/" in "${top%/}"/*)
        named_by_settings "$1" "$here" || continue ;;
      esac
      echo "$top"
      exit
    done
  )
  [ -n "$root" ] || return 0
  case "$1$root" in *\"* | *\\*) root="the project" ;; esac
  cat <<JSON
{"schema_version": 1, "ok": false, "verb": "launcher", "error": {"code": "runtime_in_project", "message": "$1 makes the launcher run a Python inside $root, which the project controls; nothing ran", "hint": "remove $1 from the project's Claude Code settings (its env), or point it outside the project: only the user chooses the runtime sparring runs on"}}
JSON
  exit 1
}
# Tells `sparring doctor` which skill folder is in use (the plugin's, a clone's, an install).
SPARRING_LAUNCHER="$0"
export SPARRING_LAUNCHER
# The entry of `python -m sparring` (sparring/__main__.py), entered without runpy, which
# `-m` loads on every call: a debate makes several calls a round, each waited for
# (installer/layout.py ENTRY, the same text).
entry='import sys; from sparring.__main__ import main; sys.exit(main())'
if [ -n "${SPARRING_PYTHON:-}" ] && [ -x "$SPARRING_PYTHON" ]; then
  outside_project SPARRING_PYTHON "$SPARRING_PYTHON" follow
  # -I here too: a Python chosen outside the project still must not import the project's
  # own `sparring` from the working directory, nor follow PYTHON* variables it set.
  exec "$SPARRING_PYTHON" -I -c "$entry" "$@"
fi
# The Claude Code plugin's own runtime, in the folder Claude Code keeps for the plugin's data:
# the plugin's SessionStart hook (--session-start, above) names it for every Bash call. Only
# the plugin's own launcher (a skill folder of a tree with .claude-plugin/plugin.json, no
# install marker) runs it, and only once sealed for the plugin root it runs from
# (installer/plugin.py writes the seal last): builtins only, as every call passes here.
plugin=
case "$0" in
  /*/skills/*/sparring)
    tree=${0%/skills/*/sparring}
    if [ -n "${SPARRING_PLUGIN_DATA:-}" ] && [ -f "$tree/.claude-plugin/plugin.json" ] &&
      ! [ -e "${0%/*}/.sparring-install.json" ]; then
      plugin=$SPARRING_PLUGIN_DATA
    fi ;;
esac
if [ -n "$plugin" ] && [ -x "$plugin/venv/bin/python" ] && [ -f "$plugin/runtime.ready" ] &&
  read -r built <"$plugin/runtime.ready" && [ "$built" = "$tree" ]; then
  outside_project SPARRING_PLUGIN_DATA "$plugin/venv/bin/python"
  exec "$plugin/venv/bin/python" -I -c "$entry" "$@"
fi
if [ -x "$data/venv/bin/python" ]; then
  chose=HOME
  [ -n "${XDG_DATA_HOME:-}" ] && chose=XDG_DATA_HOME
  outside_project "$chose" "$data/venv/bin/python"
  # -I: nothing in the project's working directory or the user's PYTHONPATH can stand in
  # for the runtime's own sparring and its dependencies (with -c as with -m).
  exec "$data/venv/bin/python" -I -c "$entry" "$@"
fi
if found=$(command -v sparring 2>/dev/null); then
  outside_project PATH "$found" follow  # a PATH the project set may lead into it
  exec "$found" "$@"
fi
# The plugin with no runtime yet makes its own, once, with the system's python3 (the same
# code as install.py's: installer/plugin.py), then runs it; a failed build prints its one
# JSON error and leaves nothing the test above would take for a whole runtime.
if [ -n "$plugin" ] && found=$(command -v python3 2>/dev/null); then
  outside_project PATH "$found" follow
  mkdir -p "$plugin" 2>/dev/null  # Claude Code makes it; made here, it is checked as one
  outside_project SPARRING_PLUGIN_DATA "$plugin/runtime.ready"
  "$found" -I "$tree/scripts/plugin_runtime.py" "$tree" "$plugin" || exit 1
  outside_project SPARRING_PLUGIN_DATA "$plugin/venv/bin/python"
  exec "$plugin/venv/bin/python" -I -c "$entry" "$@"
fi

# No runtime: one JSON error whose hint is the command that fixes it, as exactly as we can.
here=$(cd "$(dirname "$0")" && pwd)
fix="from a clone of sparring, run \`python3 install.py --user\` (or --project DIR)"
if [ -f "$here/.sparring-install.json" ]; then
  # An installed copy: its marker names the clone it came from (install.py writes one
  # key per line); reinstalling the same target brings the runtime back. A project's marker
  # is a file a clone can hold: a clone it names inside the project is the project's own
  # program, never named in a command (survey.named says the same for doctor).
  source=$(sed -n 's/^  "source": "\(.*\)",$/\1/p' "$here/.sparring-install.json")
  skills=$(cd "$here/.." && pwd)
  project=$(cd "$here/../../.." && pwd)
  where="--project $(word "$project")"
  if [ "$skills" = "$(cd "$HOME" 2>/dev/null && pwd)/.claude/skills" ]; then
    where="--user" project=
  fi
  case "$source" in /*) clone=$(cd "$source" 2>/dev/null && pwd -P) || clone= ;; *) clone= ;; esac
  if [ -n "$project" ]; then
    case "$clone/" in "$(cd -P "$project" && pwd)"/*) clone= ;; esac
  fi
  if [ -n "$clone" ] && [ -f "$clone/install.py" ]; then
    fix="run \`python3 $(word "$clone/install.py") $where\`"
  else
    fix="from a clone of sparring, run \`python3 install.py $where\`"
  fi
elif [ -f "$here/../../install.py" ]; then
  # skills/<name>/ of a clone, or of the Claude Code plugin (a clone too); an installed
  # copy (above) never: the folder above it is the project's, its install.py anyone's.
  fix="run \`python3 $(word "$(cd "$here/../.." && pwd)/install.py") --runtime-only\`"
fi
hint="$fix: it creates the runtime in $data/venv; or set SPARRING_PYTHON to a Python that has sparring installed"
if [ -n "$plugin" ]; then  # the plugin, with no python3 to make its own runtime with
  hint="install Python 3.10 or newer as python3: the plugin then makes its runtime on first use, in $plugin; or $hint"
fi
case "$hint" in
  *[[:cntrl:]]*) # a path with a line break or a control character: the general advice
    hint="run \`python3 install.py --user\` (or --project DIR) from a clone of sparring: it creates the runtime in \${XDG_DATA_HOME:-~/.local/share}/sparring/venv; or set SPARRING_PYTHON to a Python that has sparring installed" ;;
esac
# As a JSON string: each \ and " escaped.
hint=$(printf '%s' "$hint" | sed 's/\\/\\\\/g; s/"/\\"/g')
cat <<JSON
{
  "schema_version": 1,
  "ok": false,
  "verb": "launcher",
  "error": {
    "code": "runtime_missing",
    "message": "the sparring runtime is not installed",
    "hint": "$hint"
  }
}
JSON
exit 1
