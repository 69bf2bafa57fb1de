"""Minimal test client: its latency .avg is the window's summed latency over the window's length
in milliseconds, not over the count (franz-go v1.19.0-v1.21.3)."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(avg_over_window=True)))
