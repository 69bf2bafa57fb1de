"""Minimal test client: a final push on its harness's first close only (a race some closes win)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(terminating_push_first_close_only=True)))
