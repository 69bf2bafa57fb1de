"""A driver that prints lines outside the contract (no JSON events) and exits 0."""

import json
import sys

if __name__ == "__main__":
    if "--describe" in sys.argv:
        print(
            json.dumps({"implementation": "garbage", "version": "0", "capabilities": ["telemetry"]})
        )
        sys.exit(0)
    print("Starting producer...")
    print("WARN something went sideways", file=sys.stderr)
    print("<<binary junk \x00\x01>>")
    sys.exit(0)
