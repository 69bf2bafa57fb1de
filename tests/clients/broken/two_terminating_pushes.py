"""Minimal test client: sends two Terminating pushes on close."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(two_terminating_pushes=True)))
