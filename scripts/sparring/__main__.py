import sys

# poll and wait of an ended turn, and guard check, answer without loading the CLI
# (quick.py); the rest goes on to it.
from sparring.quick import main

sys.exit(main())
