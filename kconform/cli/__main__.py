"""`python -m kconform.cli ...`: the `kconform` command."""

import sys

from kconform.cli import main

sys.exit(main())
