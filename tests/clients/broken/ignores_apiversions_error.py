"""Minimal test client: reads an ApiVersions answer's key table and never its error code, so
INVALID_REQUEST with the table attached counts as success (franz-go up to v1.21.5)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(ignores_apiversions_error=True)))
