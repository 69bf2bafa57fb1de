"""Minimal test client: a Get answered with a Null ClientInstanceId ends its telemetry, though
its close still sends the Terminating push with the id it kept (the Java client from 3.8.0)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(stops_at_null_id=True)))
