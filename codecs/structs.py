"""The declared shape of a message: versions, fields and the struct base class.

`schema.message()` turns a declaration into a `Message`; the code generator (`codegen`) and the
Hypothesis strategies (`strategies`) read these declarations, so they live below all three and
nothing here compiles or generates.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from kconform.codecs.wire import ZERO_UUID, CodecMisuse, kafka_uuid_str

__all__ = ["NULL", "Field", "Kind", "Struct", "Versions", "snake_case"]

PRIMITIVE_TYPES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid", "string",
     "bytes", "records"}
)  # fmt: skip
Kind = Literal["request", "response", "header", "data"]


@dataclass(frozen=True)
class Versions:
    """A Kafka version range: ``"0+"``, ``"1-4"``, ``"3"`` or ``"none"``."""

    low: int
    high: int | None  # None: open-ended
    empty: bool = False

    @classmethod
    def parse(cls, text: str) -> Versions:
        text = text.strip()
        if text == "none":
            return cls(0, -1, empty=True)
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        if self.empty or not isinstance(version, int):
            return False
        return self.low <= version and (self.high is None or version <= self.high)

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high is None:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


def snake_case(name: str) -> str:
    """Kafka's PascalCase names as attributes: ``ClientInstanceId`` → ``client_instance_id``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


@dataclass(frozen=True)
class Field:
    """One field of a declaration, with the same meaning as in Kafka's message JSON."""

    name: str
    type: str
    versions: str
    nullable_versions: str = "none"
    tag: int | None = None
    tagged_versions: str = "none"
    default: Any = None  # None: the type's default ("null" must be spelt NULL)
    ignorable: bool = False
    map_key: bool = False
    flexible_versions: str | None = None  # field-level override, e.g. RequestHeader.ClientId
    fields: Sequence[Field] = ()
    about: str = ""
    attr: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attr", snake_case(self.name))
        object.__setattr__(self, "fields", tuple(self.fields))

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in PRIMITIVE_TYPES

    def present(self, version: int) -> bool:
        return version in Versions.parse(self.versions)

    def tagged(self, version: int) -> bool:
        return self.tag is not None and version in Versions.parse(self.tagged_versions)

    def nullable(self, version: int) -> bool:
        return version in Versions.parse(self.nullable_versions)

    def default_value(self) -> Any:
        """A fresh default (lists are new objects each time)."""
        if self.default is NULL:
            return None
        if self.is_array:
            return []
        if self.is_struct:
            return None  # filled with the struct's defaults by Struct.__init__
        if self.default is not None:
            return _parse_default(self.type, self.default)
        return _TYPE_DEFAULTS[self.type]


class _Null:
    def __repr__(self) -> str:
        return "NULL"


NULL: Any = _Null()
"""Marker for ``"default": "null"`` in a declaration."""

_TYPE_DEFAULTS: dict[str, Any] = {
    "bool": False, "int8": 0, "int16": 0, "uint16": 0, "int32": 0, "uint32": 0, "int64": 0,
    "float64": 0.0, "uuid": ZERO_UUID, "string": "", "bytes": b"", "records": None,
}  # fmt: skip


def _parse_default(type_name: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if type_name == "bool":
        return value == "true"
    if type_name in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return int(value, 0)
    if type_name == "float64":
        return float(value)
    return value


class _StructMeta(type):
    if TYPE_CHECKING:  # generated nested struct classes are class attributes

        def __getattr__(cls, name: str) -> Any: ...


class Struct(metaclass=_StructMeta):
    """Base of every generated struct class: one attribute per declared field."""

    # None until a tagged field this declaration does not know is seen or the attribute is
    # read: most decoded structs have none, and building an empty dict for each one costs.
    __slots__ = ("_unknown",)
    _unknown: dict[int, bytes] | None
    struct_name: ClassVar[str] = "Struct"
    schema_fields: ClassVar[tuple[Field, ...]] = ()
    structs: ClassVar[dict[str, type[Struct]]] = {}
    owner: ClassVar[type[Struct] | None] = None  # the declaring message, for nested structs
    flexible_versions: ClassVar[Versions] = Versions(0, -1, empty=True)  # a message's own

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any: ...

    @classmethod
    def is_flexible(cls, version: int) -> bool:
        return version in cls.flexible_versions

    def __init__(self, **values: Any) -> None:
        for f in self.schema_fields:
            if f.attr in values:
                value = values.pop(f.attr)
            elif f.is_struct and not f.is_array and f.default is not NULL:
                value = self.structs[f.element_type]()
            else:
                value = f.default_value()
            setattr(self, f.attr, value)
        self._unknown = values.pop("unknown_tagged_fields", None)
        if values:
            raise CodecMisuse(f"{self.struct_name} has no field(s) {', '.join(sorted(values))}")

    @property
    def unknown_tagged_fields(self) -> dict[int, bytes]:
        """Tagged fields the declaration does not know, by tag; written back on encode."""
        unknown = self._unknown
        if unknown is None:
            unknown = self._unknown = {}
        return unknown

    @unknown_tagged_fields.setter
    def unknown_tagged_fields(self, value: dict[int, bytes]) -> None:
        self._unknown = value

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, a) == getattr(other, a) for a in self._slots()) and (
            (self._unknown or {}) == (other._unknown or {})  # None and {} alike
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass

    @classmethod
    def _slots(cls) -> tuple[str, ...]:
        return tuple(f.attr for f in cls.schema_fields)

    def __repr__(self) -> str:
        parts = [f"{a}={getattr(self, a)!r}" for a in self._slots()]
        if self._unknown:
            parts.append(f"unknown_tagged_fields={self.unknown_tagged_fields!r}")
        return f"{self.struct_name}({', '.join(parts)})"

    def to_dict(self, version: int | None = None) -> dict[str, Any]:
        """Kafka field names to plain values (structs as dicts, bytes as bytes), for reports."""
        return {
            f.name: _plain(getattr(self, f.attr), version)
            for f in self.schema_fields
            if version is None or f.present(version)
        }

    def describe(self, version: int | None = None) -> str:
        """One line for wire logs: Kafka field names, long values and arrays abbreviated."""
        body = " ".join(
            f"{f.name}={_short(getattr(self, f.attr), version)}"
            for f in self.schema_fields
            if version is None or f.present(version)
        )
        return f"{{{body}}}"


def _plain(value: Any, version: int | None) -> Any:
    if isinstance(value, Struct):
        return value.to_dict(version)
    if isinstance(value, list):
        return [_plain(v, version) for v in value]
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _short(value: Any, version: int | None) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        head = bytes(value[:8]).hex()
        return f"<{len(value)} bytes{' ' + head if head else ''}{'…' if len(value) > 8 else ''}>"
    if isinstance(value, uuid.UUID):
        return kafka_uuid_str(value)
    if isinstance(value, Struct):
        return value.describe(version)
    if isinstance(value, list):
        items = [_short(v, version) for v in value[:4]]
        if len(value) > 4:
            items.append(f"…+{len(value) - 4}")
        return "[" + ", ".join(items) + "]"
    if isinstance(value, str) and len(value) > 64:
        return repr(value[:61] + "...")
    return repr(value) if isinstance(value, str) else str(value).lower()
