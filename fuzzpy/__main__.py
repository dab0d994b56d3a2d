import sys

from fuzzpy.cli import main

sys.exit(main())
