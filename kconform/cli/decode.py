"""`kconform decode`: one request or response frame, given as hex, decoded by the codec."""

from __future__ import annotations

import argparse
import json
import sys

from kconform.cli.base import Command
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_FAILURES, EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(decode: argparse.ArgumentParser) -> None:
    decode.add_argument("hex", help="the frame, with or without its 4-byte size prefix")
    decode.add_argument("--response", action="store_true", help="the frame is a response")
    decode.add_argument("--api-key", type=int, help="for --response: the request's api key")
    decode.add_argument("--api-version", type=int, help="for --response: the request's version")
    decode.add_argument(
        "--lenient", action="store_true", help="accept nulls in non-nullable fields"
    )
    decode.add_argument("--json", action="store_true", help="also print every field as JSON")


def _hex_bytes(text: str) -> bytes:
    cleaned = "".join(text.split()).removeprefix("0x")
    try:
        return bytes.fromhex(cleaned)
    except ValueError as exc:
        raise UsageError(f"not a hex string: {exc}") from None


def _strip_size_prefix(data: bytes) -> bytes:
    if len(data) >= 4 and int.from_bytes(data[:4], "big", signed=True) == len(data) - 4:
        return data[4:]
    return data


def run(args: argparse.Namespace) -> int:
    from kconform.codecs.framing import decode_request, decode_response
    from kconform.codecs.wire import DecodeError

    data = _strip_size_prefix(_hex_bytes(args.hex))
    try:
        if args.response:
            if args.api_key is None or args.api_version is None:
                raise UsageError("--response needs --api-key and --api-version")
            header, body, version = decode_response(
                data, args.api_key, args.api_version, strict=not args.lenient
            )
            print(f"correlation_id={header.correlation_id} {body.describe(version)}")
            summary = body.to_dict(version)
        else:
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
