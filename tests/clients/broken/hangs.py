"""A driver that hangs: it prints nothing, sends nothing and ignores SIGTERM."""

import json
import signal
import sys
import time

if __name__ == "__main__":
    if "--describe" in sys.argv:
        print(
            json.dumps({"implementation": "hangs", "version": "0", "capabilities": ["telemetry"]})
        )
        sys.exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("hangs.py: waiting for a lock that never comes", file=sys.stderr, flush=True)
    time.sleep(3600)
