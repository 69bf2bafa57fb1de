"""Minimal test client: matches requested prefixes with the client type dropped, so a producer
asked for consumer metrics only pushes its producer metrics."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(type_blind_match=True)))
