"""Minimal test client: keeps sending Get and Push on new connections whose ApiVersions no longer
list 71/72, because its first connection's did (KIP-714 Receiving broker behavior: only to "any
connected broker that reports support for both these APIs in its ApiVersionResponse")."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(remembers_advertisement=True)))
