"""Minimal test client: collects a metric once per requested prefix it matches, so two
overlapping prefixes send it twice in one push (librdkafka 2.5.0-2.10.0, #5103)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(per_prefix_matches=True)))
