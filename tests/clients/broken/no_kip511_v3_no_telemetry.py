"""Minimal test client as segmentio/kafka-go is: ApiVersions v0 only (no ClientSoftwareName or
Version), no KIP-714, and a --describe that claims no telemetry: the certificate names the
KIP-511 MUST it fails and shows the cases needing v3 as consequences, not as INCOMPLETE."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(
        main(Behaviour(apiversions_v0_only=True, sends_telemetry=False, claims_telemetry=False))
    )
