"""Minimal test client: pushes immediately after every Get (no 0.5-1.5 x interval jitter)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(zero_first_push_delay=True)))
