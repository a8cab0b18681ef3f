"""The Claude Code plugin's runtime, made on first use (the launcher runs this with the
system's `python3 -I` when the plugin has none): `plugin_runtime.py ROOT DATA`. The work is
sparring/installer/plugin.py's, standard library only, as install.py's is.
"""

import json
import sys
from pathlib import Path

try:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from sparring.installer.plugin import main
except BaseException as exc:  # an old or broken python3: one JSON error, not a traceback
    print(json.dumps({"schema_version": 1, "ok": False, "verb": "launcher", "error": {
        "code": "runtime_build_failed",
        "message": f"the plugin could not make its runtime: {sys.executable} (Python "
                   f"{sys.version.split()[0]}) cannot run sparring's installer: {exc!r}",
        "hint": "install Python 3.10 or newer as python3, or set SPARRING_PYTHON to a Python "
                "that has sparring installed"}}))
    sys.exit(1)

sys.exit(main(sys.argv[1:]))
