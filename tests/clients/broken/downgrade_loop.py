"""Minimal test client: on UNSUPPORTED_VERSION retries its own max version again and again."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(downgrade_loop=True)))
