"""The sparring plugin's PreToolUse hook (hooks/hooks.json runs it with `python3 -I -S`): approves
this plugin's own launcher with the verbs each skill runs, the skills' folders and the inbox,
as install.py's rules do for an installed pack; anything else gets no answer, and Claude Code
asks. The rules are sparring/installer/hook.py's, beside the layout install.py writes from.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from sparring.installer.hook import main
except BaseException:  # an old or broken python3: no answer, and Claude Code asks
    sys.exit(0)

sys.exit(main())
