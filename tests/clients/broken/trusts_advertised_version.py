"""Minimal test client: on UNSUPPORTED_VERSION retries at whatever ApiVersions version the answer
advertises, even one not below the version refused (franz-go before v1.21.4, cd381f4c)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(trusts_advertised_version=True)))
