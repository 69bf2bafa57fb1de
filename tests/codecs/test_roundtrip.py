"""Every declared message survives encode → decode → encode, at every version it declares.

One declaration drives both directions (STYLE: schemas as data), so a value that encodes must
decode to itself and re-encode to the same bytes, and strict encoding refuses exactly what
Kafka's generated code refuses: null in a non-nullable field, and a non-default value in a
non-ignorable field the version does not carry (Java: UnsupportedVersionException).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kconform.codecs.messages import ALL_MESSAGES, ApiVersionsRequest, PushTelemetryRequest
from kconform.codecs.schema import Field, Message, Struct
from kconform.codecs.wire import DecodeError, EncodeError

PAIRS = [
    pytest.param(cls, version, id=f"{cls.struct_name}-v{version}")
    for cls in ALL_MESSAGES
    for version in cls.versions()
]

# ~180 (message, version) pairs share one budget: a tenth of the profile's examples each keeps
# the quick profile within the suite's time and still scales up with the deep one.
EXAMPLES = max(10, settings().max_examples // 10)


FieldPath = tuple[Field, ...]


@pytest.mark.parametrize(("cls", "version"), PAIRS)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_encode_then_decode_gives_the_value_back_and_the_same_bytes(
    cls: type[Message], version: int, data: st.DataObject
) -> None:
    obj = data.draw(cls.strategy(version), label=cls.struct_name)
    encoded = obj.encode(version)

    decoded = cls.decode(encoded, version)
    assert decoded == obj  # absent fields keep defaults; decoded bytes are views == bytes
    assert decoded.encode(version) == encoded
    assert cls.decode(encoded, version, strict=False) == obj
    assert decoded.to_dict(version) == obj.to_dict(version)

    # decode_from honours `pos`/`end` inside a larger buffer and reports where it stopped.
    framed = memoryview(b"\xa5" * 3 + encoded + b"\x5a" * 2)
    inner, end = cls.decode_from(framed, 3, 3 + len(encoded), version)
    assert inner == obj and end == 3 + len(encoded)

    line = obj.describe(version)
    assert len(line.splitlines()) == 1
    assert line.startswith(f"{cls.struct_name} v{version} ")


def test_describe_stays_on_one_line_whatever_the_strings_hold() -> None:
    hostile = "line\nbreak\r\u2028\u2029\x85\x0b\x0c\x1c end"
    request = ApiVersionsRequest(client_software_name=hostile, client_software_version="x" * 500)
    text = request.describe(3)
    assert len(text.splitlines()) == 1
    assert text.startswith("ApiVersionsRequest v3 ") and "ClientSoftwareName=" in text
    push = PushTelemetryRequest(metrics=b"\n" * 4096).describe(0)
    assert len(push.splitlines()) == 1 and "<4096 bytes" in push


# --- strictness: null where Kafka has no null, values a version cannot carry -----------------


def _walk(cls: type[Struct], version: int, path: FieldPath = ()) -> Iterator[FieldPath]:
    """Every field path reachable at `version` (through fields present at that version)."""
    for f in cls.schema_fields:
        yield (*path, f)
        if f.is_struct and f.present(version):
            yield from _walk(cls.structs[f.element_type], version, (*path, f))


def _build(cls: type[Struct], path: FieldPath, value: Any) -> Struct:
    """A default instance whose `path` holds `value`; arrays on the way get one element."""
    head, *rest = path
    if not rest:
        return cls(**{head.attr: value})
    inner = _build(cls.structs[head.element_type], tuple(rest), value)
    return cls(**{head.attr: [inner] if head.is_array else inner})


def _get(obj: Any, path: FieldPath) -> Any:
    for f in path:
        obj = getattr(obj[0] if isinstance(obj, list) else obj, f.attr)
    return obj


def _non_default(cls: type[Struct], f: Field) -> Any:
    """A value of `f`'s type that differs from its default."""
    if f.is_array:
        if f.is_struct:
            return [cls.structs[f.element_type]()]
        return [_non_default(cls, Field("x", f.element_type, "0+"))]
    if f.is_struct:
        struct = cls.structs[f.element_type]
        first = struct.schema_fields[0]
        return struct(**{first.attr: _non_default(struct, first)})
    default = f.default_value()
    if f.type == "bool":
        return not default
    if f.type == "string":
        return (default or "") + "x"
    if f.type in ("bytes", "records"):
        return bytes(default or b"") + b"x"
    if f.type == "uuid":
        return uuid.UUID(int=default.int ^ 1)
    return default + 1 if default < 100 else default - 1


def _path_id(cls: type[Message], version: int, path: FieldPath) -> str:
    return f"{cls.struct_name}-v{version}-{'.'.join(f.name for f in path)}"


def _owner(root: type[Message], path: FieldPath) -> type[Struct]:
    owner: type[Struct] = root
    for f in path[:-1]:
        owner = root.structs[f.element_type]
    return owner


NULL_TARGETS = [
    pytest.param(cls, version, path, id=_path_id(cls, version, path))
    for cls in ALL_MESSAGES
    for version in cls.versions()
    for path in _walk(cls, version)
    if path[-1].present(version)
    and not path[-1].nullable(version)
    and (path[-1].is_array or path[-1].type in ("string", "bytes", "records"))
]

ABSENT_TARGETS = [
    pytest.param(cls, version, path, id=_path_id(cls, version, path))
    for cls in ALL_MESSAGES
    for version in cls.versions()
    for path in _walk(cls, version)
    if not path[-1].present(version) and all(f.present(version) for f in path[:-1])
]


@pytest.mark.parametrize(("cls", "version", "path"), NULL_TARGETS)
def test_null_in_a_non_nullable_field_is_refused_strictly_and_carried_leniently(
    cls: type[Message], version: int, path: FieldPath
) -> None:
    obj = _build(cls, path, None)
    assert isinstance(obj, cls)
    with pytest.raises(EncodeError, match=rf"{cls.struct_name}\..*{path[-1].name}.*None"):
        obj.encode(version)

    lenient = obj.encode(version, strict=False)  # what a fuzzer or a buggy client sends
    with pytest.raises(DecodeError, match="serialized as null") as caught:
        cls.decode(lenient, version)
    assert caught.value.path[0] == cls.struct_name and caught.value.path[-1] == path[-1].name

    read_back = cls.decode(lenient, version, strict=False)
    assert _get(read_back, path) is None
    assert read_back == obj
    assert read_back.encode(version, strict=False) == lenient


@pytest.mark.parametrize(("cls", "version", "path"), ABSENT_TARGETS)
def test_a_value_the_version_cannot_carry_is_refused_unless_the_field_is_ignorable(
    cls: type[Message], version: int, path: FieldPath
) -> None:
    target, owner = path[-1], _owner(cls, path)
    obj = _build(cls, path, _non_default(owner, target))
    reference = _build(cls, path, getattr(owner(), target.attr))  # the target left at default

    if target.ignorable:  # Kafka drops an ignorable field silently at versions without it
        assert obj.encode(version) == reference.encode(version)
        return
    with pytest.raises(EncodeError, match=rf"{target.name}: non-default value .* {version}$"):
        obj.encode(version)
    assert obj.encode(version, strict=False) == reference.encode(version)
