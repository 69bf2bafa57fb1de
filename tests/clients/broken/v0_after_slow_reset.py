"""Minimal test client: after a connection reset during ApiVersions it reconnects only 5 s later
(on its own timer, as kafka-go does on its metadata refresh) and then at ApiVersions v0, without
its name and version: a case that waited a fixed 3 s saw no reconnection (issue 43)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(v0_after_reset=True, reset_reconnect_delay=5.0)))
