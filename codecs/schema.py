"""Declarative message model mirroring Kafka's message JSON (`clients/.../common/message/*.json`).

A message is declared once, as data::

    PushTelemetryResponse = message(
        "PushTelemetryResponse", api_key=72, kind="response", valid="0", flexible="0+",
        fields=[Field("ThrottleTimeMs", "int32", "0+"), Field("ErrorCode", "int16", "0+")],
    )

and everything else derives from that declaration: a class with snake_case attributes
(``throttle_time_ms``), ``encode(version)``, ``decode(buf, version)``, ``size(version)``,
equality, a one-line ``describe()`` for wire logs, and ``strategy(version)`` for Hypothesis.
Adding a version is a change to the declaration, never to code.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from kconform.codecs.wire import ZERO_UUID, DecodeError, EncodeError, kafka_uuid_str

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from kconform.codecs.codegen import Compiled

__all__ = ["Field", "Message", "Struct", "Versions", "message", "snake_case"]

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
    owner: ClassVar[type[Message] | None] = None  # the declaring message, for nested structs

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any: ...

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
            raise TypeError(f"{self.struct_name} has no field(s) {', '.join(sorted(values))}")

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


class Message(Struct):
    """A top-level declaration: a request, a response, a header or a standalone data struct."""

    __slots__ = ()
    api_key: ClassVar[int | None] = None
    kind: ClassVar[Kind] = "data"
    _codecs: ClassVar[dict[int, Compiled]]  # version -> generated codec, filled on first use
    valid_versions: ClassVar[Versions] = Versions(0, 0)
    flexible_versions: ClassVar[Versions] = Versions(0, -1, empty=True)

    @classmethod
    def versions(cls) -> range:
        high = cls.valid_versions.high
        assert high is not None
        return range(cls.valid_versions.low, high + 1)

    @classmethod
    def is_flexible(cls, version: int) -> bool:
        return version in cls.flexible_versions

    def encode(self, version: int, *, strict: bool = True) -> bytes:
        """The body at `version`; `strict=False` lets fuzzers write nulls where none are allowed."""
        codec = type(self)._codecs.get(version) or _codec(type(self), version)
        out: list[bytes | memoryview] = []
        codec.encode(self, out.append, strict)
        return b"".join(out)

    def size(self, version: int) -> int:
        return len(self.encode(version))

    @classmethod
    def decode(
        cls, data: bytes | bytearray | memoryview, version: int, *, strict: bool = True
    ) -> Self:
        """Decode exactly one body; trailing bytes are an error. Byte fields are views of `data`."""
        buf = data if isinstance(data, memoryview) else memoryview(data)
        codec = cls._codecs.get(version)
        if codec is None:  # first use, or a version to refuse: decode_from does both
            obj, pos = cls.decode_from(buf, 0, len(buf), version, strict=strict)
        else:
            try:
                obj, pos = codec.decode(buf, 0, len(buf), strict)
            except DecodeError as exc:
                raise exc.within(cls.struct_name) from None
        if pos != len(buf):
            raise DecodeError(
                f"{len(buf) - pos} trailing bytes", offset=pos, path=(cls.struct_name,)
            )
        return obj

    @classmethod
    def decode_from(
        cls, buf: memoryview, pos: int, end: int, version: int, *, strict: bool = True
    ) -> tuple[Self, int]:
        codec = cls._codecs.get(version)
        if codec is None:
            if version not in cls.valid_versions:
                raise DecodeError(
                    f"version {version} is outside validVersions {cls.valid_versions}",
                    offset=pos,
                    path=(cls.struct_name,),
                )
            codec = _codec(cls, version)
        try:
            obj, pos = codec.decode(buf, pos, end, strict)
        except DecodeError as exc:
            raise exc.within(cls.struct_name) from None
        return obj, pos

    def describe(self, version: int | None = None) -> str:
        head = self.struct_name if version is None else f"{self.struct_name} v{version}"
        return f"{head} {super().describe(version)}"

    @classmethod
    def strategy(cls, version: int) -> SearchStrategy[Self]:
        """Hypothesis strategy for well-formed instances at `version`, derived from the fields
        and built once per version (`struct_strategy` caches it)."""
        from kconform.codecs.strategies import struct_strategy

        return struct_strategy(cls, version)


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


def _make_struct(
    name: str, fields: Iterable[Field], registry: dict[str, type[Struct]], base: type[Struct]
) -> type[Struct]:
    fields = tuple(fields)
    for f in fields:
        if hasattr(base, f.attr):
            raise ValueError(
                f"{name}.{f.name}: attribute {f.attr!r} is reserved by {base.__name__}"
            )
        if f.is_struct and f.fields:
            if f.element_type in registry:
                raise ValueError(f"struct {f.element_type} declared twice in {name}")
            registry[f.element_type] = _make_struct(f.element_type, f.fields, registry, Struct)
    namespace: dict[str, Any] = {
        "__slots__": tuple(f.attr for f in fields),
        "struct_name": name,
        "schema_fields": fields,
        "structs": registry,
        "__module__": "kconform.codecs.messages",
        "__qualname__": name,
    }
    return type(name, (base,), namespace)


def message(
    name: str,
    *,
    api_key: int | None = None,
    kind: Kind,
    valid: str,
    flexible: str,
    fields: Sequence[Field],
    common_structs: Sequence[tuple[str, Sequence[Field]]] = (),
) -> type[Message]:
    """Declare a message; returns its generated class (see the module docstring)."""
    registry: dict[str, type[Struct]] = {}
    for struct_name, struct_fields in common_structs:
        registry[struct_name] = _make_struct(struct_name, struct_fields, registry, Struct)
    cls = _make_struct(name, fields, registry, Message)
    assert issubclass(cls, Message)
    cls.api_key = api_key
    cls.kind = kind
    cls.valid_versions = Versions.parse(valid)
    cls.flexible_versions = Versions.parse(flexible)
    cls.owner = cls
    cls._codecs = {}
    for struct_name, struct_cls in registry.items():
        struct_cls.owner = cls
        setattr(cls, struct_name, struct_cls)
    _check_declaration(cls)
    return cls


def _check_declaration(cls: type[Message]) -> None:
    """Catch declaration slips early: unknown struct types, duplicate tags."""

    def walk(struct: type[Struct]) -> Iterable[tuple[type[Struct], Field]]:
        for f in struct.schema_fields:
            yield struct, f
            if f.is_struct:
                yield from walk(cls.structs[f.element_type])

    for struct, f in walk(cls):
        if f.is_struct and f.element_type not in cls.structs:
            raise ValueError(
                f"{cls.struct_name}: {struct.struct_name}.{f.name} uses undeclared {f.type}"
            )
    for struct in {cls, *cls.structs.values()}:
        tags = [f.tag for f in struct.schema_fields if f.tag is not None]
        if len(tags) != len(set(tags)):
            raise ValueError(f"{cls.struct_name}: duplicate tags in {struct.struct_name}")


def _codec(cls: type[Message], version: int) -> Compiled:
    """Compile on first use and keep the result on the class (a dict lookup afterwards)."""
    if version not in cls.valid_versions:
        raise EncodeError(f"{cls.struct_name}: version {version} outside {cls.valid_versions}")
    codec = codegen.compiled(cls, version)
    cls._codecs[version] = codec
    return codec


from kconform.codecs import codegen  # noqa: E402  (codegen builds on the classes above)
