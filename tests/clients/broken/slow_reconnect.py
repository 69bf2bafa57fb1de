"""Minimal test client, not broken: after a connection reset during ApiVersions it reconnects
only 5 s later, on its own timer (as kafka-go does on its metadata refresh), and then sends its
name and version as it should: a case that waited a fixed 3 s left it not-applicable (issue 43)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(reset_reconnect_delay=5.0)))
