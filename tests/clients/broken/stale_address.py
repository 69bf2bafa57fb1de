"""Minimal test client: after a lost connection it goes back to the address it first used, once
its next push is due, though Metadata now gives that broker another (Java 3.7.0-4.2.0, 4.3.x:
KAFKA-20393)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(stale_address=True)))
