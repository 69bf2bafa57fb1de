"""A driver that crashes at once, saying why on stderr only."""

import sys

if __name__ == "__main__":
    if "--describe" not in sys.argv:
        print("crashes.py: cannot load libkafka-test.so: no such file", file=sys.stderr)
    sys.exit(1)
