"""JaCoCo's dump protocol (fixtures/coverage/wire.py) on bytes built here, and against a fake
agent on 127.0.0.1: the per-case dump must read exactly what `jacococli dump` would write."""

from __future__ import annotations

import socket
import struct
import threading

import pytest

from kconform.fixtures.coverage import wire


def utf(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">H", len(raw)) + raw


def class_block(class_id: int, name: str, probes: list[bool]) -> bytes:
    packed = bytearray((len(probes) + 7) // 8)
    for i, hit in enumerate(probes):
        if hit:
            packed[i // 8] |= 1 << (i % 8)
    assert len(probes) < 128  # one-byte varint here
    return (
        bytes([wire.BLOCK_EXECUTIONDATA]) + struct.pack(">q", class_id) + utf(name)
        + bytes([len(probes)]) + bytes(packed)
    )  # fmt: skip


def session_block(name: str) -> bytes:
    return bytes([wire.BLOCK_SESSIONINFO]) + utf(name) + struct.pack(">qq", 1, 2)


PROBES = [True, False, True] + [False] * 7 + [True]
DUMP = (
    wire.HEADER
    + session_block("apache-node-1")
    + class_block(-5, "org/apache/kafka/server/ClientMetricsManager", PROBES)
)


def test_blocks_read_back() -> None:
    blocks = wire.split_blocks(DUMP + bytes([wire.BLOCK_CMDOK]))
    assert blocks.complete and blocks.end == len(DUMP)
    assert blocks.sessions == ("apache-node-1",)
    (cls,) = blocks.classes
    assert cls.name == "org/apache/kafka/server/ClientMetricsManager"
    assert cls.probes == tuple(PROBES) and cls.hit == 3
    assert cls.class_id == 2**64 - 5  # JaCoCo's ids are unsigned 64-bit CRCs


def test_truncated_block_waits_for_more() -> None:
    blocks = wire.split_blocks(DUMP[:-3])
    assert not blocks.complete
    assert blocks.classes == () and blocks.end == len(wire.HEADER) + len(
        session_block("apache-node-1")
    )


def test_concatenated_dumps_are_one_exec() -> None:
    assert len(wire.split_blocks(DUMP + DUMP).classes) == 2


def test_foreign_bytes_named() -> None:
    with pytest.raises(wire.ExecFormatError, match="block type 0x7f at byte 0"):
        wire.split_blocks(b"\x7f")
    with pytest.raises(wire.ExecFormatError, match="magic"):
        wire.split_blocks(b"\x01\xbe\xef\x10\x07")


def test_dump_command_bytes() -> None:
    assert wire.dump_command(reset=True) == b"\x01\xc0\xc0\x10\x07\x40\x01\x01"
    assert wire.dump_command(reset=False)[-1] == 0


def test_dump_against_a_fake_agent() -> None:
    """The agent writes its header first, then answers the command in pieces."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    asked: list[bytes] = []

    def agent() -> None:
        conn, _ = server.accept()
        with conn:
            conn.sendall(wire.HEADER)
            asked.append(conn.recv(64))
            body = DUMP[len(wire.HEADER) :] + bytes([wire.BLOCK_CMDOK])
            for i in range(0, len(body), 7):  # short writes: the reader must reassemble
                conn.sendall(body[i : i + 7])

    thread = threading.Thread(target=agent)
    thread.start()
    try:
        data = wire.dump(port, reset=True, timeout=5)
    finally:
        thread.join(5)
        server.close()
    assert data == DUMP
    assert asked == [wire.dump_command(reset=True)]


def test_agent_gone_is_oserror() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.close()
    with pytest.raises(OSError):
        wire.dump(port, reset=True, timeout=2)
