"""`kconform decode`: one request or response frame, given as hex, decoded by the codec."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kconform.cli.base import Command
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_FAILURES, EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(decode: argparse.ArgumentParser) -> None:
    decode.add_argument(
        "hex", nargs="?", default="-",
        help="the frame as hex, with or without its 4-byte size prefix; or a file holding it "
        "(hex or raw bytes); `-` or nothing: read standard input",
    )  # fmt: skip
    decode.add_argument("--response", action="store_true", help="the frame is a response")
    decode.add_argument("--api-key", type=int, help="for --response: the request's api key")
    decode.add_argument("--api-version", type=int, help="for --response: the request's version")
    decode.add_argument(
        "--lenient", action="store_true", help="accept nulls in non-nullable fields"
    )
    from kconform.plugin.option_table import add_options

    add_options(decode, "decode")  # --json (here a switch)


HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
ACCEPTED_FRAME = "give the frame as hex digits (e.g. 000000120012...), a file, or - for stdin"


def _hex_bytes(text: str) -> bytes:
    cleaned = "".join(text.split()).removeprefix("0x")
    shown = text if len(text) <= 40 else text[:37] + "..."
    bad = next(((i, c) for i, c in enumerate(cleaned) if c not in HEX_DIGITS), None)
    if bad is not None:
        raise UsageError(f"{shown!r} is not a file here nor hex ({bad[1]!r} at position "
                         f"{bad[0]}); {ACCEPTED_FRAME}")  # fmt: skip
    if len(cleaned) % 2:
        raise UsageError(f"{shown!r}: an odd number of hex digits ({len(cleaned)}); two make a "
                         f"byte; {ACCEPTED_FRAME}")  # fmt: skip
    return bytes.fromhex(cleaned)


def _is_file(argument: str) -> bool:
    """Whether the argument names a file; a name no file can have (too long for the file
    system) is hex or nothing, not an OSError."""
    try:
        return Path(argument).is_file()
    except OSError:
        return False


def _frame_bytes(argument: str) -> bytes:
    """The frame from the argument: hex text, a file (hex text or raw bytes), or stdin."""
    if argument == "-":
        raw = sys.stdin.buffer.read()
    elif _is_file(argument):
        try:
            raw = Path(argument).read_bytes()
        except OSError as exc:
            raise UsageError(f"{argument}: {exc.strerror or exc}") from None
    else:
        return _hex_bytes(argument)
    try:
        return _hex_bytes(raw.decode("ascii"))
    except (UsageError, UnicodeDecodeError):
        return raw  # raw bytes, as captured off the wire


def _strip_size_prefix(data: bytes, *, response: bool = False) -> bytes:
    """The frame without its size prefix. A prefix promising more bytes than follow is a
    truncated frame (UsageError), when the bytes read without it are no request either: a
    known api key at a version it has."""
    if len(data) < 4:
        raise UsageError(f"truncated frame: {len(data)} bytes, not even a size prefix")
    size = int.from_bytes(data[:4], "big", signed=True)
    if size == len(data) - 4:
        return data[4:]
    if not response and size > len(data) - 4 and not _plausible_request(data):
        raise UsageError(
            f"truncated frame: its size prefix says {size} bytes, {len(data) - 4} follow"
        )
    return data


def _plausible_request(data: bytes) -> bool:
    from kconform.codecs.messages import REQUESTS

    api_key = int.from_bytes(data[:2], "big", signed=True)
    version = int.from_bytes(data[2:4], "big", signed=True)
    request = REQUESTS.get(api_key)
    return request is not None and version in request.valid_versions


def _check_response_type(api_key: int, api_version: int) -> None:
    """An unknown --api-key or --api-version is a usage error naming what the codec reads, not
    a decode error at some byte. ApiVersions takes any version: a broker answers one it does not
    support with a v0 body, which the codec reads (KIP-511)."""
    from kconform.codecs.messages import API_VERSIONS_KEY, RESPONSES

    response = RESPONSES.get(api_key)
    if response is None:
        accepted = ", ".join(
            f"{key} ({RESPONSES[key].__name__.removesuffix('Response')})"
            for key in sorted(RESPONSES)
        )
        raise UsageError(f"--api-key {api_key}: not an api key the codec reads; accepted: "
                         f"{accepted}")  # fmt: skip
    known = api_version in response.valid_versions
    if not known and not (api_key == API_VERSIONS_KEY and api_version >= 0):
        raise UsageError(f"--api-version {api_version}: {response.__name__} has versions "
                         f"{response.valid_versions}")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from kconform.codecs.framing import decode_request, decode_response
    from kconform.codecs.wire import DecodeError

    data = _strip_size_prefix(_frame_bytes(args.hex), response=args.response)
    try:
        if args.response:
            if args.api_key is None or args.api_version is None:
                raise UsageError("--response needs --api-key and --api-version")
            _check_response_type(args.api_key, args.api_version)
            header, body, version = decode_response(
                data, args.api_key, args.api_version, strict=not args.lenient
            )
            print(f"correlation_id={header.correlation_id} {body.describe(version)}")
            summary = body.to_dict(version)
        else:
            api_key = int.from_bytes(data[:2], "big", signed=True)
            api_version = int.from_bytes(data[2:4], "big", signed=True)
            if api_key < 0 or api_version < 0:
                raise UsageError(
                    f"not a request frame: api key {api_key}, version {api_version} "
                    "(a response? use --response with --api-key and --api-version)"
                )
            request = decode_request(data, strict=not args.lenient)
            print(f"correlation_id={request.header.correlation_id} "
                  f"client_id={request.header.client_id!r} {request.describe()}")  # fmt: skip
            if request.body is None:
                return EXIT_FAILURES
            summary = request.body.to_dict(request.api_version)
    except DecodeError as exc:
        print(f"kconform: undecodable: {exc}", file=sys.stderr)
        return EXIT_FAILURES
    if args.json:
        print(json.dumps(summary, indent=2, default=_json_default))
    return EXIT_OK


def _json_default(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return str(value)


COMMAND = Command("decode", "decode one request or response frame given as hex", add_arguments, run)
