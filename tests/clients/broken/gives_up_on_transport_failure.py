"""Minimal test client: a push lost with its connection ends its telemetry for good, as the Java
client 3.7.0-4.0.1 and 4.1.0 treat every failed telemetry request as fatal (KAFKA-19747)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(gives_up_on_transport_failure=True)))
