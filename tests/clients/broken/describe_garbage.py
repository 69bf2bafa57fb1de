"""A driver whose --describe answers with text, not the contract's one JSON object."""

import sys

if __name__ == "__main__":
    print("usage: describe_garbage.py [options]  (version 1.0)")
    sys.exit(0)
