"""Minimal test client: a new connection whose ApiVersions lack 71/72 ends its telemetry for good,
so it never pushes again once the broker advertises them again (ruling 19)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(gives_up_when_unadvertised=True)))
