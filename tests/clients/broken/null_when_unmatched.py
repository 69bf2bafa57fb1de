"""Minimal test client: pushes a null Metrics while its subscription matches none of its
metrics, as librdkafka 2.5.0-2.10.0 did (#5106)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(null_when_unmatched=True)))
