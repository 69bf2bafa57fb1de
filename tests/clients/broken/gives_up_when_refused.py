"""Minimal test client: reconnects after a lost push, but a reconnection the broker refuses (it is
still restarting) ends its telemetry for good (ruling 17: telemetry again within the bound)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(gives_up_when_refused=True)))
