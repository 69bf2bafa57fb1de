"""kafka-python ≥ 3.0 as a differential oracle for kconform's codec (tests and benchmarks).

kafka-python builds its protocol classes from Apache Kafka's message JSON. It does not ship the
KIP-714 messages, so their schemas are given here, written from SPEC.md §A.2, and loaded through
kafka-python's own JSON machinery: the same loader, a different package of JSON files.
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

TELEMETRY_SCHEMAS: dict[str, dict[str, Any]] = {
    "GetTelemetrySubscriptionsRequest": {
        "apiKey": 71, "type": "request", "name": "GetTelemetrySubscriptionsRequest",
        "validVersions": "0", "flexibleVersions": "0+",
        "fields": [{"name": "ClientInstanceId", "type": "uuid", "versions": "0+"}],
    },
    "GetTelemetrySubscriptionsResponse": {
        "apiKey": 71, "type": "response", "name": "GetTelemetrySubscriptionsResponse",
        "validVersions": "0", "flexibleVersions": "0+",
        "fields": [
            {"name": "ThrottleTimeMs", "type": "int32", "versions": "0+"},
            {"name": "ErrorCode", "type": "int16", "versions": "0+"},
            {"name": "ClientInstanceId", "type": "uuid", "versions": "0+"},
            {"name": "SubscriptionId", "type": "int32", "versions": "0+"},
            {"name": "AcceptedCompressionTypes", "type": "[]int8", "versions": "0+"},
            {"name": "PushIntervalMs", "type": "int32", "versions": "0+"},
            {"name": "TelemetryMaxBytes", "type": "int32", "versions": "0+"},
            {"name": "DeltaTemporality", "type": "bool", "versions": "0+"},
            {"name": "RequestedMetrics", "type": "[]string", "versions": "0+"},
        ],
    },
    "PushTelemetryRequest": {
        "apiKey": 72, "type": "request", "name": "PushTelemetryRequest",
        "validVersions": "0", "flexibleVersions": "0+",
        "fields": [
            {"name": "ClientInstanceId", "type": "uuid", "versions": "0+"},
            {"name": "SubscriptionId", "type": "int32", "versions": "0+"},
            {"name": "Terminating", "type": "bool", "versions": "0+"},
            {"name": "CompressionType", "type": "int8", "versions": "0+"},
            {"name": "Metrics", "type": "bytes", "versions": "0+"},
        ],
    },
    "PushTelemetryResponse": {
        "apiKey": 72, "type": "response", "name": "PushTelemetryResponse",
        "validVersions": "0", "flexibleVersions": "0+",
        "fields": [
            {"name": "ThrottleTimeMs", "type": "int32", "versions": "0+"},
            {"name": "ErrorCode", "type": "int16", "versions": "0+"},
        ],
    },
}  # fmt: skip

_PACKAGE = "kconform_oracle_telemetry_json"
_classes: dict[str, Any] = {}


def _telemetry_package() -> Any:
    """A throwaway package holding the telemetry JSON files, importable by kafka-python's loader."""
    if _PACKAGE in sys.modules:
        return sys.modules[_PACKAGE]
    root = Path(tempfile.mkdtemp(prefix="kconform-oracle-"))
    pkg = root / _PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, schema in TELEMETRY_SCHEMAS.items():
        (pkg / f"{name}.json").write_text(json.dumps(schema))
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(_PACKAGE)
    finally:
        sys.path.remove(str(root))


def kafka_python_class(name: str) -> Any:
    """kafka-python's message class for a Kafka message name (bundled, or telemetry from here)."""
    if name in _classes:
        return _classes[name]
    from kafka.protocol.api_message import ApiMessage

    if name in TELEMETRY_SCHEMAS:
        cls = type(name, (ApiMessage,), {"__slots__": ()}, load_json=_telemetry_package())
    else:
        cls = _bundled_classes().get(name)
        if cls is None:
            raise LookupError(f"kafka-python has no class for {name}")
    _classes[name] = cls
    return cls


def _bundled_classes() -> dict[str, Any]:
    """kafka-python's own JSON-driven classes, found by walking `kafka.protocol`."""
    import pkgutil

    import kafka.protocol
    from kafka.protocol.api_message import ApiMessage

    found: dict[str, Any] = {}
    for info in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" in info.name or ".schemas" in info.name or info.name.endswith("generate_stubs"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, ApiMessage)
                and value is not ApiMessage
            ):
                found.setdefault(value.__name__, value)
    return found
