"""Minimal test client: after a connection reset during ApiVersions it does not reconnect while
the case waits (its timer is longer than ruling 22's 30 s bound): the case cannot judge its next
connection and says so (not-applicable, naming the bound), never `error`."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(reset_reconnect_delay=120.0)))
