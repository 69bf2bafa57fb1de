"""Minimal test client whose driver ignores SIGTERM (the contract's end-of-window signal)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(sigterm="ignore")))
