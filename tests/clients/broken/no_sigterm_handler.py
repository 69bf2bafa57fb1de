"""Minimal test client whose driver does not handle SIGTERM: it dies of it, no clean close."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(sigterm="default")))
