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

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

from kconform.codecs import codegen
from kconform.codecs.codegen import Compiled
from kconform.codecs.strategies import struct_strategy
from kconform.codecs.structs import NULL, Field, Kind, Struct, Versions, snake_case
from kconform.codecs.wire import DecodeError, EncodeError
from kconform.errors import HarnessDefect

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["NULL", "Field", "Message", "Struct", "Versions", "message", "snake_case"]


class Message(Struct):
    """A top-level declaration: a request, a response, a header or a standalone data struct."""

    __slots__ = ()
    api_key: ClassVar[int | None] = None
    kind: ClassVar[Kind] = "data"
    _codecs: ClassVar[dict[int, Compiled]]  # version -> generated codec, filled on first use
    valid_versions: ClassVar[Versions] = Versions(0, 0)

    @classmethod
    def versions(cls) -> range:
        high = cls.valid_versions.high
        assert high is not None
        return range(cls.valid_versions.low, high + 1)

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
        return struct_strategy(cls, version)


def _make_struct(
    name: str, fields: Iterable[Field], registry: dict[str, type[Struct]], base: type[Struct]
) -> type[Struct]:
    fields = tuple(fields)
    for f in fields:
        if hasattr(base, f.attr):
            raise HarnessDefect(
                f"{name}.{f.name}: attribute {f.attr!r} is reserved by {base.__name__}"
            )
        if f.is_struct and f.fields:
            if f.element_type in registry:
                raise HarnessDefect(f"struct {f.element_type} declared twice in {name}")
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
            raise HarnessDefect(
                f"{cls.struct_name}: {struct.struct_name}.{f.name} uses undeclared {f.type}"
            )
    for struct in {cls, *cls.structs.values()}:
        tags = [f.tag for f in struct.schema_fields if f.tag is not None]
        if len(tags) != len(set(tags)):
            raise HarnessDefect(f"{cls.struct_name}: duplicate tags in {struct.struct_name}")


def _codec(cls: type[Message], version: int) -> Compiled:
    """Compile on first use and keep the result on the class (a dict lookup afterwards)."""
    if version not in cls.valid_versions:
        raise EncodeError(f"{cls.struct_name}: version {version} outside {cls.valid_versions}")
    codec = codegen.compiled(cls, version)
    cls._codecs[version] = codec
    return codec
