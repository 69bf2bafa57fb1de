"""A driver for a lazily-connecting library: its `idle` creates the client and waits, sending
nothing (the library would connect on the first send), so KIP-511's idle cases see no request.
Its produce and consume end at once, cleanly."""

import json
import sys
import time

from kconform.fixtures.clients.contract import EventWriter, StopFlag, parse_command_line

if __name__ == "__main__":
    if sys.argv[1:] == ["--describe"]:
        print(json.dumps({"implementation": "lazy", "version": "0.1", "capabilities": []}))
        sys.exit(0)
    invocation = parse_command_line(sys.argv[1:])
    out, stop = EventWriter(), StopFlag()
    began = time.time()
    out.emit("started", client="lazy", version="0.1")
    if invocation.scenario.kind == "idle":
        stop.wait(invocation.scenario.seconds)
    out.emit("closing")
    out.emit("closed", seconds=round(time.time() - began, 3), close_seconds=0.0)
