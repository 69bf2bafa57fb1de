"""A driver for a lazily-connecting library whose close flushes: its `idle` sends nothing until
the client closes, when the library's first request (metadata) goes out; KIP-511's idle cases
would judge only a closing client's traffic."""

import json
import socket
import struct
import sys
import time

from kconform.fixtures.clients.contract import EventWriter, StopFlag, parse_command_line


def first_request(bootstrap: str) -> None:
    """ApiVersions v0, as a library's first request on its first connection."""
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    body = struct.pack(">hhih", 18, 0, 1, -1)  # api key, version, correlation id, null client id
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(struct.pack(">i", len(body)) + body)
        conn.recv(4096)


if __name__ == "__main__":
    if sys.argv[1:] == ["--describe"]:
        print(json.dumps({"implementation": "at-close", "version": "0.1", "capabilities": []}))
        sys.exit(0)
    invocation = parse_command_line(sys.argv[1:])
    out, stop = EventWriter(), StopFlag()
    began = time.time()
    out.emit("started", client="at-close", version="0.1")
    if invocation.scenario.kind == "idle":
        stop.wait(invocation.scenario.seconds)
    out.emit("closing")
    first_request(invocation.bootstrap)
    out.emit("closed", seconds=round(time.time() - began, 3), close_seconds=0.0)
