import sys

from sparring.quick import main

# poll and wait of an ended turn answer without loading the CLI (quick.py); the rest goes on
# to it.
sys.exit(main())
