"""Minimal test client: after a connection reset during ApiVersions it retries at ApiVersions
v0, without its name and version (franz-go v1.19.4-v1.21.3)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(v0_after_reset=True)))
