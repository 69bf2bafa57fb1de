"""Minimal test client: aborts (SIGABRT) when its subscription matches none of its
metrics, as librdkafka 2.5.0 did (#4833)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(aborts_when_unmatched=True)))
