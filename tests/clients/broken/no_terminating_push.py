"""Minimal test client: sends no final push on close."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(no_terminating_push=True)))
