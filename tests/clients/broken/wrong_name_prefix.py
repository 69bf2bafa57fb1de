"""Minimal test client: names its metrics producer.* without the org.apache.kafka. prefix."""

import sys

from minimal import Behaviour, main

if __name__ == "__main__":
    sys.exit(main(Behaviour(metric_prefix="")))
