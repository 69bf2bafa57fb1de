"""Codec throughput against kafka-python, measured in the same process, printed as ratios.

Two workloads from issue 2: an ApiVersionsResponse v3 listing 60 api keys (the message every
connection starts with) and a PushTelemetryRequest carrying a 100 KiB payload (the message
KIP-714 sends most bytes in). Each iteration encodes and decodes once. Both implementations
must produce identical bytes before anything is timed.

Run: `make bench` (or `python benchmarks/codec.py --seconds 2`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from kafka_python_oracle import kafka_python_class
from kconform.codecs.messages import ApiVersionsResponse, PushTelemetryRequest


def api_versions_response() -> tuple[ApiVersionsResponse, int]:
    keys = [
        ApiVersionsResponse.ApiVersion(api_key=k, min_version=0, max_version=k % 17)
        for k in range(60)
    ]
    features = [
        ApiVersionsResponse.SupportedFeatureKey(
            name="metadata.version", min_version=1, max_version=27
        )
    ]
    body = ApiVersionsResponse(
        api_keys=keys, supported_features=features, finalized_features_epoch=9
    )
    return body, 3


def push_telemetry_request() -> tuple[PushTelemetryRequest, int]:
    payload = os.urandom(100 * 1024)
    body = PushTelemetryRequest(
        client_instance_id=uuid.uuid4(), subscription_id=12345, compression_type=4, metrics=payload
    )
    return body, 0


def best_rate(fn: Callable[[], object], seconds: float) -> float:
    """Iterations per second: the best of 5 rounds, each about `seconds` / 5 long."""
    n = 1
    while True:  # calibrate the batch size to ~10 ms
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start > 0.01:
            break
        n *= 2
    best = 0.0
    for _ in range(5):
        deadline = time.perf_counter() + seconds / 5
        done = 0
        start = time.perf_counter()
        while time.perf_counter() < deadline:
            for _ in range(n):
                fn()
            done += n
        best = max(best, done / (time.perf_counter() - start))
    return best


def measure(name: str, body: object, version: int, seconds: float) -> tuple[str, float, float]:
    ours_cls = type(body)
    data = body.encode(version)  # type: ignore[attr-defined]
    theirs_cls = kafka_python_class(ours_cls.struct_name)
    theirs = theirs_cls.decode(data, version=version)
    # kafka-python 3.0's ApiVersionsResponse.decode leaves the `_header` slot unset, which makes
    # the decoded object impossible to re-encode; give it the value its constructor would.
    if not hasattr(theirs, "_header"):
        theirs._header = None
    theirs_bytes = bytes(theirs.encode(version=version))
    if theirs_bytes != data:
        raise SystemExit(f"{name}: kafka-python and kconform disagree on the bytes; not timing")

    def ours_roundtrip() -> object:
        return ours_cls.decode(body.encode(version), version)  # type: ignore[attr-defined]

    def theirs_roundtrip() -> object:
        return theirs_cls.decode(theirs.encode(version=version), version=version)

    return name, best_rate(ours_roundtrip, seconds), best_rate(theirs_roundtrip, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per implementation")
    args = parser.parse_args()
    import kafka

    print(f"kconform codec vs kafka-python {kafka.__version__} (encode+decode per iteration)")
    print(f"{'workload':<44} {'kconform/s':>12} {'kafka-python/s':>15} {'ratio':>7}")
    for name, factory in (
        ("ApiVersionsResponse v3, 60 api keys", api_versions_response),
        ("PushTelemetryRequest v0, 100 KiB payload", push_telemetry_request),
    ):
        body, version = factory()
        label, ours, theirs = measure(name, body, version, args.seconds)
        print(f"{label:<44} {ours:>12,.0f} {theirs:>15,.0f} {ours / theirs:>6.2f}x")


if __name__ == "__main__":
    main()
