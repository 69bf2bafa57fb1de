"""Minimal test client whose ClientSoftwareVersion is its application's version (4.2.7), not that
of the library it runs, which its --describe says is 1.0.0 (Sarama before v1.47.0, #3415)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(software_version="4.2.7")))
