"""Compile a declaration into a specialised encoder and decoder for one version.

Interpreting the field list on every call is slow in Python; instead each (struct, version)
pair is turned once into the source of two small functions, which are cached. Consecutive
fixed-width fields become one `struct` call, flexible-version strings use compact lengths,
tagged fields are written sorted by tag. The generated source is kept (``Compiled.source``)
so a wire-format question can be answered by reading it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from kconform.codecs.codegen_runtime import NS_BASE
from kconform.codecs.schema import NULL, Field, Message, Struct

_FIXED: dict[str, tuple[str, int]] = {
    "bool": ("?", 1), "int8": ("b", 1), "int16": ("h", 2), "uint16": ("H", 2),
    "int32": ("i", 4), "uint32": ("I", 4), "int64": ("q", 8), "float64": ("d", 8),
}  # fmt: skip


@dataclass(frozen=True)
class Compiled:
    decode: Callable[[memoryview, int, int, bool], tuple[Any, int]]
    encode: Callable[[Any, Callable[[bytes | memoryview], None], bool], None]
    source: str


class _Source:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = dict(NS_BASE)
        self._n = 0

    def tmp(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def const(self, value: Any, prefix: str = "K") -> str:
        name = self.tmp(prefix)
        self.ns[name] = value
        return name

    def __call__(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


def _fresh_default(src: _Source, cls: type[Struct], f: Field) -> str:
    """An expression giving a new default value (never a shared mutable one)."""
    if f.default is not NULL and f.is_array:
        return "[]"
    if f.default is not NULL and f.is_struct:
        return f"{src.const(cls.structs[f.element_type], 'T')}()"
    return src.const(f.default_value(), "D")


def _default_const(src: _Source, cls: type[Struct], f: Field) -> str:
    """A shared default value, only for comparisons."""
    if f.default is not NULL and f.is_struct and not f.is_array:
        return src.const(cls.structs[f.element_type](), "D")
    return src.const(f.default_value(), "D")


def _field_groups(cls: type[Struct], version: int) -> list[Field | tuple[Field, ...]]:
    """The untagged fields of `version` in wire order, consecutive fixed-width ones grouped
    (a tuple), so each group costs one `struct` call."""
    groups: list[Field | tuple[Field, ...]] = []
    run: list[Field] = []
    for f in cls.schema_fields:
        if not f.present(version) or f.tagged(version):
            continue
        if _is_fixed(f):
            run.append(f)
            continue
        if run:
            groups.append(tuple(run))
            run = []
        groups.append(f)
    if run:
        groups.append(tuple(run))
    return groups


def _is_fixed(f: Field) -> bool:
    return not f.is_array and f.type in _FIXED


def compiled(cls: type[Struct], version: int) -> Compiled:
    """Encoder and decoder of message `cls` at `version` (nested structs compile on first use)."""
    assert issubclass(cls, Message)
    return _compiled(cls, version, cls.is_flexible(version))


@cache
def _compiled(cls: type[Struct], version: int, flexible: bool) -> Compiled:
    src = _Source()
    src.ns["CLS"] = cls
    _gen_decode(src, cls, version, flexible)
    _gen_encode(src, cls, version, flexible)
    source = "\n".join(src.lines)
    exec(compile(source, f"<kconform codec {cls.struct_name} v{version}>", "exec"), src.ns)
    return Compiled(src.ns["decode"], src.ns["encode"], source)


def _nested(src: _Source, cls: type[Struct], f: Field, version: int, flexible: bool) -> str:
    """A namespace name whose .decode/.encode handle struct type `f.element_type`."""
    return src.const(_Lazy(cls.structs[f.element_type], version, flexible), "S")


class _Lazy:
    """Defers compiling a nested struct until first use (keeps recursion out of compile time)."""

    __slots__ = ("_cls", "_compiled", "_flexible", "_version")

    def __init__(self, cls: type[Struct], version: int, flexible: bool) -> None:
        self._cls, self._version, self._flexible = cls, version, flexible
        self._compiled: Compiled | None = None

    def get(self) -> Compiled:
        if self._compiled is None:
            self._compiled = _compiled(self._cls, self._version, self._flexible)
        return self._compiled

    def decode(self, buf: memoryview, pos: int, end: int, strict: bool) -> tuple[Any, int]:
        return self.get().decode(buf, pos, end, strict)

    def encode(self, obj: Any, w: Callable[[bytes | memoryview], None], strict: bool) -> None:
        self.get().encode(obj, w, strict)


# --- decoding -------------------------------------------------------------------------------


def _gen_decode(src: _Source, cls: type[Struct], version: int, flexible: bool) -> None:
    src(0, "def decode(buf, pos, end, strict):")
    src(1, "fld = ''")
    src(1, "unk = {}")
    src(1, "try:")
    src(2, "pass")
    for group in _field_groups(cls, version):
        if isinstance(group, tuple):
            run = group
            fmt = ">" + "".join(_FIXED[r.type][0] for r in run)
            size = sum(_FIXED[r.type][1] for r in run)
            sizes = tuple((r.name, _FIXED[r.type][1]) for r in run)
            packer, run_k = src.const(struct.Struct(fmt), "P"), src.const(sizes, "R")
            src(2, f"if pos + {size} > end:")
            src(3, f"fld, err = run_short({run_k}, pos, end)")
            src(3, "raise err")
            targets = ", ".join(f"v_{r.attr}" for r in run)
            src(2, f"{targets}, = {packer}.unpack_from(buf, pos)")
            src(2, f"pos += {size}")
        else:
            src(2, f"fld = {group.name!r}")
            _emit_read(src, cls, group, version, flexible, f"v_{group.attr}", 2, "end")
    if flexible:
        _emit_read_tags(src, cls, version, flexible)
    src(1, "except DecodeError as exc:")
    src(2, "raise exc.within(fld) from None")
    src(1, "o = new(CLS)")
    for f in cls.schema_fields:
        value = f"v_{f.attr}" if f.present(version) else _fresh_default(src, cls, f)
        src(1, f"o.{f.attr} = {value}")
    src(1, "o.unknown_tagged_fields = unk")
    src(1, "return o, pos")


def _emit_read_tags(src: _Source, cls: type[Struct], version: int, flexible: bool) -> None:
    tagged = sorted((f for f in cls.schema_fields if f.tagged(version)), key=lambda f: f.tag or 0)
    for f in tagged:
        src(2, f"v_{f.attr} = {_fresh_default(src, cls, f)}")
    src(2, "fld = '<tagged fields>'")
    src(2, "if pos < end and buf[pos] == 0:")
    src(3, "pos += 1")
    src(2, "else:")
    src(3, "ntags, pos = read_uvarint(buf, pos, end)")
    src(3, "for _ in range(ntags):")
    src(4, "fld = '<tagged fields>'")
    src(4, "tag, pos, tend = read_tag_header(buf, pos, end)")
    keyword = "if"
    for f in tagged:
        src(4, f"{keyword} tag == {f.tag}:")
        src(5, f"fld = {f.name!r}")
        _emit_read(src, cls, f, version, flexible, f"v_{f.attr}", 5, "tend")
        src(5, "if pos != tend:")
        src(
            6, "raise DecodeError('tagged field value does not fill its declared size', offset=pos)"
        )
        keyword = "elif"
    if tagged:
        src(4, "else:")
        src(5, "unk[tag] = bytes(buf[pos:tend])")
    else:
        src(4, "unk[tag] = bytes(buf[pos:tend])")
    src(4, "pos = tend")


def _emit_read(
    src: _Source, cls: type[Struct], f: Field, version: int, flexible: bool, var: str, ind: int,
    end: str,
) -> None:  # fmt: skip
    flex = flexible if f.flexible_versions is None else version in _versions(f.flexible_versions)
    nullable = f.nullable(version)
    if f.is_array:
        src(ind, f"{var} = []")
        start = src.tmp("p")  # "exceeds remaining" points at the length prefix, as for strings
        src(ind, f"{start} = pos")
        if flex:
            src(ind, f"n, pos = read_uvarint(buf, pos, {end})")
            src(ind, "n -= 1")
        else:
            src(ind, f"if pos + 4 > {end}: raise short_read('array length', pos, 4, {end})")
            src(ind, "n, = INT32.unpack_from(buf, pos)")
            src(ind, "pos += 4")
        src(ind, "if n < 0:")
        _emit_null_check(src, f, nullable, ind + 1, "array")
        src(ind + 1, f"{var} = None")
        src(ind, f"elif n > {end} - pos:")
        src(ind + 1, f"raise DecodeError(f'array length {{n}} exceeds remaining {{{end} - pos}}',"
                     f" offset={start})")  # fmt: skip
        src(ind, "else:")
        item, idx, app = src.tmp("e"), src.tmp("i"), src.tmp("a")
        src(ind + 1, f"{app} = {var}.append")
        src(ind + 1, f"{idx} = 0")
        src(ind + 1, "try:")
        src(ind + 2, f"for {idx} in range(n):")
        _emit_read_value(src, cls, f, version, flex, item, ind + 3, end, element=True)
        src(ind + 3, f"{app}({item})")
        src(ind + 1, "except DecodeError as exc:")
        src(ind + 2, f"raise exc.within(f'[{{{idx}}}]') from None")
        return
    _emit_read_value(src, cls, f, version, flex, var, ind, end, element=False)


def _emit_read_value(
    src: _Source, cls: type[Struct], f: Field, version: int, flex: bool, var: str, ind: int,
    end: str, *, element: bool,
) -> None:  # fmt: skip
    t = f.element_type
    nullable = f.nullable(version) and not element
    if t in _FIXED:
        fmt, size = _FIXED[t]
        packer = src.const(struct.Struct(">" + fmt), "P")
        src(ind, f"if pos + {size} > {end}: raise short_read({t!r}, pos, {size}, {end})")
        src(ind, f"{var}, = {packer}.unpack_from(buf, pos)")
        src(ind, f"pos += {size}")
    elif t == "uuid":
        src(ind, f"{var}, pos = read_uuid(buf, pos, {end})")
    elif t in ("string", "bytes", "records"):
        reader = {"string": "string", "bytes": "bytes", "records": "bytes"}[t]
        reader = f"read_compact_{reader}" if flex else f"read_{reader}"
        src(ind, f"{var}, pos = {reader}(buf, pos, {end})")
        if not nullable:
            src(ind, f"if {var} is None:")
            _emit_null_check(src, f, False, ind + 1, t)
    else:
        nested = _nested(src, cls, f, version, flex)
        if nullable:
            src(ind, f"if pos + 1 > {end}: raise short_read('struct marker', pos, 1, {end})")
            src(ind, "marker = buf[pos]")
            src(ind, "pos += 1")
            src(ind, "if marker == 0xff:")
            src(ind + 1, f"{var} = None")
            src(ind, "else:")
            src(ind + 1, f"{var}, pos = {nested}.decode(buf, pos, {end}, strict)")
        else:
            src(ind, f"{var}, pos = {nested}.decode(buf, pos, {end}, strict)")


def _emit_null_check(src: _Source, f: Field, nullable: bool, ind: int, what: str) -> None:
    if not nullable:
        src(ind, "if strict:")
        src(ind + 1, f"raise DecodeError('non-nullable {what} was serialized as null', offset=pos)")


def _versions(text: str) -> Any:
    from kconform.codecs.schema import Versions

    return Versions.parse(text)


# --- encoding -------------------------------------------------------------------------------


def _gen_encode(src: _Source, cls: type[Struct], version: int, flexible: bool) -> None:
    src(0, "def encode(o, w, strict):")
    src(1, "fld = ''")
    src(1, "try:")
    src(2, "pass")
    absent = [f for f in cls.schema_fields if not f.present(version) and not f.ignorable]
    if absent:
        src(2, "if strict:")
        for f in absent:
            default = _default_const(src, cls, f)
            src(3, f"if o.{f.attr} != {default}:")
            src(4, f"fld = {f.name!r}")
            src(
                4, f"raise EncodeError('non-default value for a field absent in version {version}')"
            )
    for group in _field_groups(cls, version):
        if isinstance(group, tuple):
            packer = src.const(struct.Struct(">" + "".join(_FIXED[r.type][0] for r in group)), "P")
            src(2, f"fld = {group[0].name!r}")
            src(2, f"w({packer}.pack({', '.join(f'o.{r.attr}' for r in group)}))")
        else:
            src(2, f"fld = {group.name!r}")
            _emit_write(src, cls, group, version, flexible, f"o.{group.attr}", 2, "w")
    if flexible:
        _emit_write_tags(src, cls, version, flexible)
    src(1, "except (struct_error, OverflowError, TypeError, AttributeError, UnicodeError) as exc:")
    src(2, f"raise EncodeError(f'{cls.struct_name}.{{fld}}: {{exc}}') from None")
    src(1, "except EncodeError as exc:")
    src(2, f"raise EncodeError(f'{cls.struct_name}.{{fld}}: {{exc}}') from None")


def _emit_write_tags(src: _Source, cls: type[Struct], version: int, flexible: bool) -> None:
    tagged = sorted((f for f in cls.schema_fields if f.tagged(version)), key=lambda f: f.tag or 0)
    src(2, "unk = o.unknown_tagged_fields")
    if not tagged:
        src(2, "if not unk:")
        src(3, "w(b'\\x00')")
        src(3, "return")
    src(2, "tagged = []")
    for f in tagged:
        src(2, f"fld = {f.name!r}")
        default = _default_const(src, cls, f)
        value = f"v_{f.attr}"
        src(2, f"{value} = o.{f.attr}")
        src(2, f"if {value} != {default}:")
        src(3, "sub = []")
        _emit_write(src, cls, f, version, flexible, value, 3, "sub.append")
        src(3, f"tagged.append(({f.tag}, b''.join(sub)))")
    src(2, "fld = '<tagged fields>'")
    src(2, "if unk:")
    src(3, "tagged.extend(unk.items())")
    src(3, "tagged.sort(key=lambda kv: kv[0])")
    src(2, "w(uv(len(tagged)))")
    src(2, "for tag, data in tagged:")
    src(3, "w(uv(tag))")
    src(3, "w(uv(len(data)))")
    src(3, "w(data)")


def _emit_write(
    src: _Source, cls: type[Struct], f: Field, version: int, flexible: bool, expr: str, ind: int,
    w: str,
) -> None:  # fmt: skip
    flex = flexible if f.flexible_versions is None else version in _versions(f.flexible_versions)
    nullable = f.nullable(version)
    var = src.tmp("x")
    src(ind, f"{var} = {expr}")
    if f.is_array:
        src(ind, f"if {var} is None:")
        _emit_write_null(src, f, nullable, ind + 1, "array")
        null_marker = _COMPACT_NULL if flex else _ARRAY_NULL
        src(ind + 1, f"{w}({null_marker!r})")
        src(ind, "else:")
        if flex:
            src(ind + 1, f"{w}(uv(len({var}) + 1))")
        else:
            src(ind + 1, f"{w}(INT32.pack(len({var})))")
        item = src.tmp("e")
        src(ind + 1, f"for {item} in {var}:")
        _emit_write_value(src, cls, f, version, flex, item, ind + 2, w, element=True)
        return
    _emit_write_value(src, cls, f, version, flex, var, ind, w, element=False)


_COMPACT_NULL = b"\x00"
_ARRAY_NULL = b"\xff\xff\xff\xff"


def _emit_write_value(
    src: _Source, cls: type[Struct], f: Field, version: int, flex: bool, var: str, ind: int,
    w: str, *, element: bool,
) -> None:  # fmt: skip
    t = f.element_type
    nullable = f.nullable(version) and not element
    if t in _FIXED:
        packer = src.const(struct.Struct(">" + _FIXED[t][0]), "P")
        src(ind, f"{w}({packer}.pack({var}))")
    elif t == "uuid":
        src(ind, f"{w}({var}.bytes)")
    elif t in ("string", "bytes", "records"):
        null_marker = b"\x00" if flex else (b"\xff\xff" if t == "string" else b"\xff\xff\xff\xff")
        src(ind, f"if {var} is None:")
        _emit_write_null(src, f, nullable, ind + 1, t)
        src(ind + 1, f"{w}({null_marker!r})")
        src(ind, "else:")
        data = var
        if t == "string":
            data = src.tmp("s")
            src(ind + 1, f"{data} = {var}.encode('utf-8')")
            if not flex:
                src(ind + 1, f"if len({data}) > 32767:")
                src(
                    ind + 2,
                    "raise EncodeError(f'string of {len(" + data + ")} bytes exceeds 32767')",
                )
        if flex:
            src(ind + 1, f"{w}(uv(len({data}) + 1))")
        elif t == "string":
            src(ind + 1, f"{w}(INT16.pack(len({data})))")
        else:
            src(ind + 1, f"{w}(INT32.pack(len({data})))")
        src(ind + 1, f"{w}({data})")
    else:
        nested = _nested(src, cls, f, version, flex)
        if nullable:
            src(ind, f"if {var} is None:")
            src(ind + 1, f"{w}(b'\\xff')")
            src(ind, "else:")
            src(ind + 1, f"{w}(b'\\x01')")
            src(ind + 1, f"{nested}.encode({var}, {w}, strict)")
        else:
            src(ind, f"{nested}.encode({var}, {w}, strict)")


def _emit_write_null(src: _Source, f: Field, nullable: bool, ind: int, what: str) -> None:
    if not nullable:
        src(ind, "if strict:")
        src(ind + 1, f"raise EncodeError('non-nullable {what} is None')")
