"""Minimal test client, not broken: payloads past 1000 bytes (so it compresses), and its
Terminating push goes under the subscription before the last one, as java:4.1.0's did when its
close raced the last Get's answer. Each push must be judged against the subscription it names."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(nodes=12, terminates_under_previous_subscription=True)))
