"""Minimal test client: well behaved, but its first request comes 4 s after it starts."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(start_delay=4.0)))
