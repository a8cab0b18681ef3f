import sys

if sys.argv[1:3] == ["guard", "check"] and len(sys.argv) == 5 and sys.argv[3] == "--baseline":
    # The one verb whose time is git's: start git status before the command line loads.
    from pathlib import Path

    from sparring.guard import start_early

    start_early(Path(sys.argv[4]))

# poll and wait of an ended turn answer without loading the CLI (quick.py); the rest goes on
# to it.
from sparring.quick import main

sys.exit(main())
