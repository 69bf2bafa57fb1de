"""Minimal test client whose --describe claims no telemetry though it sends
GetTelemetrySubscriptions and PushTelemetry: the certificate reports the contradiction."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(claims_telemetry=False)))
