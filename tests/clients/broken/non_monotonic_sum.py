"""Minimal test client: sends its Sum with is_monotonic=false."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(non_monotonic_sum=True)))
