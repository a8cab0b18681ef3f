#!/bin/sh
# sparring launcher: the one command every skill calls. It finds the runtime that
# `python3 install.py` made (a private virtual environment), so the skills work even
# when the system Python has none of sparring's dependencies.
data="${XDG_DATA_HOME:-$HOME/.local/share}/sparring"
for python in "${SPARRING_PYTHON:-}" "$data/venv/bin/python"; do
  if [ -n "$python" ] && [ -x "$python" ]; then
    exec "$python" -m sparring "$@"
  fi
done
if command -v sparring >/dev/null 2>&1; then
  exec sparring "$@"
fi
cat <<'JSON'
{
  "schema_version": 1,
  "ok": false,
  "verb": "launcher",
  "error": {
    "code": "runtime_missing",
    "message": "the sparring runtime is not installed",
    "hint": "from a clone of sparring run `python3 install.py --user` (or --project DIR): it creates the runtime in ~/.local/share/sparring/venv; or set SPARRING_PYTHON to a Python that has sparring installed"
  }
}
JSON
exit 1
