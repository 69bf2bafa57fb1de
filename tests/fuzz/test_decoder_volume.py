"""Decoder robustness by volume: a million frames, and every one decodes or raises DecodeError.

`tests/codecs/test_decode_robustness.py` checks each decoder carefully under Hypothesis; this is
the bulk run beside it. Frames come from `random.Random(seed)` without Hypothesis' per-example
overhead: random bytes, and valid encodings (random values for every declared field) with bits
flipped, cut short, bytes inserted or deleted, length prefixes inflated, or two frames spliced.
Every response decoder and version gets its share, both as a bare body and as a whole response
frame through `decode_response` (header, ApiVersions fallback). Any exception other than
DecodeError fails with the decoder, version, seed, frame index and the frame in hex, so it can
be replayed with `kconform decode`.

Volume: 10^6 frames under `--kconform-profile deep` (`tox -e fuzz`), 2 x 10^4 otherwise;
`KCONFORM_DECODER_FRAMES` and `KCONFORM_FUZZ_SEED` override count and seed.
"""

from __future__ import annotations

import os
import random
import time
import uuid
from typing import Any

import pytest

from kconform.codecs.framing import decode_response
from kconform.codecs.messages import ALL_MESSAGES, ResponseHeader, response_header_version
from kconform.codecs.schema import Field, Message, Struct
from kconform.codecs.wire import DecodeError

DEEP_FRAMES, QUICK_FRAMES = 1_000_000, 20_000
POOL = 12  # valid encodings kept per decoder and version, as mutation seeds
RESPONSE_DECODERS = [
    (cls, version) for cls in ALL_MESSAGES if cls.kind == "response" for version in cls.versions()
]
_INTS = {"int8": 7, "int16": 15, "uint16": 16, "int32": 31, "uint32": 32, "int64": 63}


def _value(cls: type[Struct], f: Field, version: int, rng: random.Random, depth: int) -> Any:
    if f.nullable(version) and rng.random() < 0.1:
        return None
    if f.is_array:
        count = 0 if depth > 2 else rng.choice((0, 1, 1, 2, 3))
        return [_element(cls, f, version, rng, depth) for _ in range(count)]
    return _element(cls, f, version, rng, depth)


def _element(cls: type[Struct], f: Field, version: int, rng: random.Random, depth: int) -> Any:
    name = f.element_type
    if f.is_struct:
        return random_struct(cls.structs[name], version, rng, depth + 1)
    if name in _INTS:
        bits = _INTS[name]
        low = 0 if name.startswith("uint") else -(2**bits)
        high = 2**bits - 1
        return rng.choice((0, 1, -1 if low else 1, low, high, rng.randint(low, high)))
    if name == "bool":
        return rng.random() < 0.5
    if name == "uuid":
        return uuid.UUID(int=rng.getrandbits(128))
    if name == "float64":
        return rng.uniform(-1e9, 1e9)
    if name == "string":
        return "".join(rng.choice("abcXYZ.-_é*") for _ in range(rng.randint(0, 12)))
    return rng.randbytes(rng.randint(0, 24))  # bytes, records


def random_struct(cls: type[Struct], version: int, rng: random.Random, depth: int = 0) -> Struct:
    """A valid instance of `cls` at `version`, every present field given a random value."""
    values = {
        f.attr: _value(cls, f, version, rng, depth) for f in cls.schema_fields if f.present(version)
    }
    return cls(**values)


def _pool(cls: type[Message], version: int, rng: random.Random) -> list[bytes]:
    return [random_struct(cls, version, rng).encode(version) for _ in range(POOL)]


_HUGE = (b"\x7f\xff\xff\xff", b"\xff\xff\xff\xff\x0f", b"\x7f\xff", b"\x80\x80\x80\x80\x80")


def mutate(valid: bytes, other: bytes, rng: random.Random) -> bytes:
    """One random mutation of a valid encoding."""
    data = bytearray(valid)
    kind = rng.randrange(7)
    if kind == 0 or not data:
        return rng.randbytes(rng.randint(0, 64))
    at = rng.randrange(len(data))
    if kind == 1:
        for _ in range(rng.randint(1, 4)):
            bit = rng.randrange(8 * len(data))
            data[bit // 8] ^= 1 << (bit % 8)
        return bytes(data)
    if kind == 2:
        return bytes(data[:at])
    if kind == 3:
        return bytes(data[:at] + rng.randbytes(rng.randint(1, 8)) + data[at:])
    if kind == 4:
        return bytes(data[:at] + data[at + rng.randint(1, 8) :])
    if kind == 5:
        huge = rng.choice(_HUGE)
        return bytes(data[:at] + huge + data[at + len(huge) :])
    return bytes(data[:at]) + other[rng.randrange(len(other) + 1) :]


def frames_for(profile: str) -> int:
    override = os.environ.get("KCONFORM_DECODER_FRAMES")
    if override:
        return int(override)
    return DEEP_FRAMES if profile == "deep" else QUICK_FRAMES


def test_every_response_decoder_takes_any_frame(pytestconfig: pytest.Config) -> None:
    total = frames_for(pytestconfig.getoption("--kconform-profile"))
    seed = int(os.environ.get("KCONFORM_FUZZ_SEED") or 714)
    rng = random.Random(seed)
    pools = {(cls, v): _pool(cls, v, rng) for cls, v in RESPONSE_DECODERS}
    failures: list[str] = []
    decoded = tried = 0
    started_at = time.perf_counter()
    for index in range(total):
        cls, version = RESPONSE_DECODERS[index % len(RESPONSE_DECODERS)]
        pool = pools[cls, version]
        body = (
            mutate(rng.choice(pool), rng.choice(pool), rng)
            if index % 5
            else rng.randbytes(rng.randint(0, 96))
        )
        framed = index % 2 == 1 and cls.api_key is not None
        try:
            if framed:
                assert cls.api_key is not None
                header = ResponseHeader(correlation_id=index).encode(
                    response_header_version(cls.api_key, version)
                )
                decode_response(header + body, cls.api_key, version)
            else:
                cls.decode(body, version)
            decoded += 1
        except DecodeError:
            pass
        except Exception as exc:  # the property under test: nothing but DecodeError
            where = "decode_response" if framed else f"{cls.struct_name}.decode"
            failures.append(
                f"{where} v{version} frame #{index} (seed {seed}): {type(exc).__name__}: {exc}; "
                f"body hex {body.hex()}"
            )
            if len(failures) >= 5:
                break
        tried += 1
    rate = tried / max(time.perf_counter() - started_at, 1e-9)
    print(
        f"\n{tried} frames over {len(RESPONSE_DECODERS)} response decoders/versions, "
        f"{decoded} decoded, {rate:,.0f} frames/s (seed {seed})"
    )
    assert not failures, "decoders raised something other than DecodeError:\n" + "\n".join(failures)
    assert decoded > 0, "no frame decoded at all: the mutations only make noise"
