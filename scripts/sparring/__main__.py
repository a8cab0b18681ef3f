import sys

# poll and wait of an ended turn, and guard check, answer without loading the CLI
# (cli/door.py); the rest goes on to it.
from sparring.cli.door import main

sys.exit(main())
