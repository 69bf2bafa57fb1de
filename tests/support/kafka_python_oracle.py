"""kafka-python ≥ 3.0 as a differential oracle for kconform's codec (tests and benchmarks).

kafka-python builds its protocol classes from Apache Kafka's message JSON. It does not ship the
KIP-714 messages (nor key 74's ListClientMetricsResources, renamed by KIP-1142), so their schemas
are given here as JSON files (`kafka_json/`, written from §A.2) and loaded through
kafka-python's own JSON machinery: the same loader, a different package of JSON files.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

__all__ = ["JSON_MESSAGES", "KAFKA_JSON", "kafka_python_class"]

KAFKA_JSON = Path(__file__).parent / "kafka_json"
JSON_MESSAGES = frozenset(path.stem for path in KAFKA_JSON.glob("*.json"))
"""Message names kafka-python gets from `KAFKA_JSON` rather than from its own package."""

_classes: dict[str, Any] = {}


def kafka_python_class(name: str) -> Any:
    """kafka-python's message class for a Kafka message name (from `KAFKA_JSON`, or bundled).

    Raises whatever kafka-python's loader raises for a schema it cannot load (a message without
    fields: TypeError), and LookupError for a name it has no class for.
    """
    if name in _classes:
        return _classes[name]
    if name in JSON_MESSAGES:
        cls = _load_from_json(name)
    else:
        cls = _bundled_classes().get(name)
        if cls is None:
            raise LookupError(f"kafka-python has no class for {name}")
    _classes[name] = cls
    return cls


def _load_from_json(name: str) -> Any:
    """kafka-python's class for `name`, built by its own JSON loader through a throwaway package;
    sys.path, sys.modules and its response registry are left as they were."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # its loader's read_text
        from kafka.protocol.api_header import ResponseClassRegistry
        from kafka.protocol.api_message import ApiMessage

        package = "kconform_oracle_kafka_json"
        registered = dict(ResponseClassRegistry._response_class_registry)
        with tempfile.TemporaryDirectory(prefix="kconform-oracle-") as root:
            shutil.copytree(KAFKA_JSON, Path(root) / package)
            (Path(root) / package / "__init__.py").write_text("")
            sys.path.insert(0, root)
            importlib.invalidate_caches()
            try:
                module = importlib.import_module(package)
                return type(name, (ApiMessage,), {"__slots__": ()}, load_json=module)
            finally:
                sys.path.remove(root)
                # Response classes register themselves by api key; ours must not shadow key 74.
                ResponseClassRegistry._response_class_registry.clear()
                ResponseClassRegistry._response_class_registry.update(registered)
                sys.modules.pop(package, None)


@functools.cache
def _bundled_classes() -> dict[str, Any]:
    """kafka-python's own JSON-driven classes, found by walking `kafka.protocol`."""
    import kafka.protocol
    from kafka.protocol.api_message import ApiMessage

    found: dict[str, Any] = {}
    for info in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if ".old" in info.name or ".schemas" in info.name or info.name.endswith("generate_stubs"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, ApiMessage)
                and value is not ApiMessage
            ):
                found.setdefault(value.__name__, value)
    return found
