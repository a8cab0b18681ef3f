import sys

from sparring.cli import main

sys.exit(main())
