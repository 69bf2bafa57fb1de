"""Minimal test client: puts the host name in a resource attribute."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(hostname_attribute=True)))
