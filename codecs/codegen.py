"""Compile a declaration into a specialised encoder and decoder for one version.

Interpreting the field list on every call is slow in Python; instead each (struct, version)
pair is turned once into the source of two small functions, which are cached. Consecutive
fixed-width fields become one `struct` call, flexible-version strings use compact lengths,
tagged fields are written sorted by tag, one-byte varints are read and written inline, and
arrays of same-width elements take the whole-array paths of `codegen_arrays`. The generated
source is kept (``Compiled.source``) so a wire-format question can be answered by reading it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from kconform.codecs.codegen_arrays import emit_read_array_fast, emit_write_array_fast
from kconform.codecs.codegen_source import FIXED, Source, fresh_default, is_fixed
from kconform.codecs.structs import NULL, Field, Struct, Versions

Writer = Callable[[bytes | memoryview], None]
"""Where a generated encoder puts its pieces (`list.append`; the caller joins them)."""


@dataclass(frozen=True)
class Compiled:
    decode: Callable[[memoryview, int, int, bool], tuple[Any, int]]
    encode: Callable[[Any, Writer, bool], None]
    source: str


def _default_const(src: Source, cls: type[Struct], f: Field) -> str:
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
        if is_fixed(f):
            run.append(f)
            continue
        if run:
            groups.append(tuple(run))
            run = []
        groups.append(f)
    if run:
        groups.append(tuple(run))
    return groups


def compiled(cls: type[Struct], version: int) -> Compiled:
    """Encoder and decoder of message `cls` at `version` (nested structs compile on first use)."""
    assert cls.owner is cls, f"{cls.struct_name} is a nested struct, not a message"
    return _compiled(cls, version, cls.is_flexible(version))


@cache
def _compiled(cls: type[Struct], version: int, flexible: bool) -> Compiled:
    src = Source()
    src.ns["CLS"] = cls
    _gen_decode(src, cls, version, flexible)
    _gen_encode(src, cls, version, flexible)
    source = "\n".join(src.lines)
    exec(compile(source, f"<kconform codec {cls.struct_name} v{version}>", "exec"), src.ns)
    return Compiled(src.ns["decode"], src.ns["encode"], source)


def _nested(
    src: Source, cls: type[Struct], f: Field, version: int, flexible: bool
) -> tuple[str, str]:
    """Names of the decode and encode functions of struct type `f.element_type`.

    Each name first holds a stub that compiles the struct (keeping recursion out of compile
    time) and then rebinds the name to the compiled function, so later calls go straight to it.
    """
    target = cls.structs[f.element_type]
    key = (target, version, flexible)
    if key in src.nested:
        return src.nested[key]
    ns = src.ns
    dec, enc = src.tmp("SD"), src.tmp("SE")

    def first_decode(buf: memoryview, pos: int, end: int, strict: bool) -> tuple[Any, int]:
        decode = ns[dec] = _compiled(target, version, flexible).decode
        return decode(buf, pos, end, strict)

    def first_encode(obj: Any, w: Writer, strict: bool) -> None:
        encode = ns[enc] = _compiled(target, version, flexible).encode
        encode(obj, w, strict)

    ns[dec], ns[enc] = first_decode, first_encode
    src.nested[key] = (dec, enc)
    return dec, enc


# --- decoding -------------------------------------------------------------------------------


def _gen_decode(src: Source, cls: type[Struct], version: int, flexible: bool) -> None:
    src(0, "def decode(buf, pos, end, strict):")
    src(1, "fld = ''")
    src(1, "unk = None")
    src(1, "try:")
    src(2, "pass")
    for group in _field_groups(cls, version):
        if isinstance(group, tuple):
            run = group
            fmt = ">" + "".join(FIXED[r.type][0] for r in run)
            size = sum(FIXED[r.type][1] for r in run)
            sizes = tuple((r.name, FIXED[r.type][1]) for r in run)
            unpack, run_k = src.struct_method(fmt, "unpack_from"), src.const(sizes, "R")
            src(2, f"if pos + {size} > end:")
            src(3, f"fld, err = run_short({run_k}, pos, end)")
            src(3, "raise err")
            targets = ", ".join(f"v_{r.attr}" for r in run)
            src(2, f"{targets}, = {unpack}(buf, pos)")
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
        value = f"v_{f.attr}" if f.present(version) else fresh_default(src, cls, f)
        src(1, f"o.{f.attr} = {value}")
    src(1, "o._unknown = unk")
    src(1, "return o, pos")


def _emit_read_tags(src: Source, cls: type[Struct], version: int, flexible: bool) -> None:
    tagged = sorted((f for f in cls.schema_fields if f.tagged(version)), key=lambda f: f.tag or 0)
    for f in tagged:
        src(2, f"v_{f.attr} = {fresh_default(src, cls, f)}")
    src(2, "fld = '<tagged fields>'")
    src(2, "if pos < end and buf[pos] == 0:")
    src(3, "pos += 1")
    src(2, "else:")
    _emit_uvarint(src, 3, "ntags", "end")
    src(3, "for _ in range(ntags):")
    src(4, "fld = '<tagged fields>'")
    # one-byte tag and size inline; anything longer or out of bounds goes to the helper
    src(4, "if pos + 1 < end and (tag := buf[pos]) < 0x80 and (tsize := buf[pos + 1]) < 0x80"
           " and tsize <= end - pos - 2:")  # fmt: skip
    src(5, "pos += 2")
    src(5, "tend = pos + tsize")
    src(4, "else:")
    src(5, "tag, pos, tend = read_tag_header(buf, pos, end)")
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
    keep = 5 if tagged else 4
    if tagged:
        src(4, "else:")
    src(keep, "if unk is None:")
    src(keep + 1, "unk = {}")
    src(keep, "unk[tag] = bytes(buf[pos:tend])")
    src(4, "pos = tend")


def _emit_read(
    src: Source, cls: type[Struct], f: Field, version: int, flexible: bool, var: str, ind: int,
    end: str,
) -> None:  # fmt: skip
    flex = flexible if f.flexible_versions is None else version in _versions(f.flexible_versions)
    nullable = f.nullable(version)
    if f.is_array:
        src(ind, f"{var} = []")
        start = src.tmp("p")  # "exceeds remaining" points at the length prefix, as for strings
        src(ind, f"{start} = pos")
        if flex:
            _emit_uvarint(src, ind, "n", end)
            src(ind, "n -= 1")
        else:
            src(ind, f"if pos + 4 > {end}: raise short_read('array length', pos, 4, {end})")
            src(ind, f"n, = {src.struct_method('>i', 'unpack_from')}(buf, pos)")
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
        first = emit_read_array_fast(src, cls, f, version, flex, var, item, app, ind + 1, end)
        src(ind + 1, f"{idx} = 0")
        src(ind + 1, "try:")
        src(ind + 2, f"for {idx} in range({first}, n):")
        _emit_read_value(src, cls, f, version, flex, item, ind + 3, end, element=True)
        src(ind + 3, f"{app}({item})")
        src(ind + 1, "except DecodeError as exc:")
        src(ind + 2, f"raise exc.within(f'[{{{idx}}}]') from None")
        return
    _emit_read_value(src, cls, f, version, flex, var, ind, end, element=False)


def _emit_uvarint(src: Source, ind: int, var: str, end: str) -> None:
    """Reads an unsigned varint into `var`, the one-byte case inline (no call)."""
    src(ind, f"if pos < {end} and ({var} := buf[pos]) < 0x80:")
    src(ind + 1, "pos += 1")
    src(ind, "else:")
    src(ind + 1, f"{var}, pos = read_uvarint(buf, pos, {end})")


def _emit_read_value(
    src: Source, cls: type[Struct], f: Field, version: int, flex: bool, var: str, ind: int,
    end: str, *, element: bool,
) -> None:  # fmt: skip
    t = f.element_type
    nullable = f.nullable(version) and not element
    if t in FIXED:
        fmt, size = FIXED[t]
        unpack = src.struct_method(">" + fmt, "unpack_from")
        src(ind, f"if pos + {size} > {end}: raise short_read({t!r}, pos, {size}, {end})")
        src(ind, f"{var}, = {unpack}(buf, pos)")
        src(ind, f"pos += {size}")
    elif t == "uuid":
        # wire.read_uuid, inline: the UUID's slots are filled directly (UUID() validates)
        src(ind, f"if pos + 16 > {end}: raise short_read('uuid', pos, 16, {end})")
        src(ind, f"{var} = new(UUID)")
        src(ind, f"set_uuid_int({var}, from_bytes(buf[pos : pos + 16], 'big'))")
        src(ind, f"set_uuid_is_safe({var}, UUID_UNKNOWN)")
        src(ind, "pos += 16")
    elif t in ("string", "bytes", "records"):
        reader = {"string": "string", "bytes": "bytes", "records": "bytes"}[t]
        reader = f"read_compact_{reader}" if flex else f"read_{reader}"
        if flex:  # a length that fits in one byte is read inline; the reader does the rest
            length = src.tmp("L")
            fits = f"pos + {length} <= {end}"
            src(ind, f"if pos < {end} and 0 < ({length} := buf[pos]) < 0x80 and {fits}:")
            if t == "string":
                src(ind + 1, "try:")
                src(ind + 2, f"{var} = str(buf[pos + 1 : pos + {length}], 'utf-8')")
                src(ind + 2, f"pos += {length}")
                src(ind + 1, "except UnicodeDecodeError:")
                src(ind + 2, f"{var}, pos = {reader}(buf, pos, {end})  # raises, with the offset")
            else:
                src(ind + 1, f"{var} = buf[pos + 1 : pos + {length}]")
                src(ind + 1, f"pos += {length}")
            src(ind, "else:")
            src(ind + 1, f"{var}, pos = {reader}(buf, pos, {end})")
        else:
            src(ind, f"{var}, pos = {reader}(buf, pos, {end})")
        if not nullable:
            src(ind, f"if {var} is None:")
            _emit_null_check(src, f, False, ind + 1, t)
    else:
        decode = _nested(src, cls, f, version, flex)[0]
        if nullable:
            src(ind, f"if pos + 1 > {end}: raise short_read('struct marker', pos, 1, {end})")
            src(ind, "marker = buf[pos]")
            src(ind, "pos += 1")
            src(ind, "if marker == 0xff:")
            src(ind + 1, f"{var} = None")
            src(ind, "else:")
            src(ind + 1, f"{var}, pos = {decode}(buf, pos, {end}, strict)")
        else:
            src(ind, f"{var}, pos = {decode}(buf, pos, {end}, strict)")


def _emit_null_check(src: Source, f: Field, nullable: bool, ind: int, what: str) -> None:
    if not nullable:
        src(ind, "if strict:")
        src(ind + 1, f"raise DecodeError('non-nullable {what} was serialized as null', offset=pos)")


def _versions(text: str) -> Any:
    return Versions.parse(text)


# --- encoding -------------------------------------------------------------------------------


def _gen_encode(src: Source, cls: type[Struct], version: int, flexible: bool) -> None:
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
            pack = src.struct_method(">" + "".join(FIXED[r.type][0] for r in group), "pack")
            src(2, f"fld = {group[0].name!r}")
            src(2, f"w({pack}({', '.join(f'o.{r.attr}' for r in group)}))")
        else:
            src(2, f"fld = {group.name!r}")
            _emit_write(src, cls, group, version, flexible, f"o.{group.attr}", 2, "w")
    if flexible:
        _emit_write_tags(src, cls, version, flexible)
    src(1, "except (struct_error, OverflowError, TypeError, AttributeError, UnicodeError) as exc:")
    src(2, f"raise EncodeError(f'{cls.struct_name}.{{fld}}: {{exc}}') from None")
    src(1, "except EncodeError as exc:")
    src(2, f"raise EncodeError(f'{cls.struct_name}.{{fld}}: {{exc}}') from None")


def _emit_write_tags(src: Source, cls: type[Struct], version: int, flexible: bool) -> None:
    tagged = sorted((f for f in cls.schema_fields if f.tagged(version)), key=lambda f: f.tag or 0)
    src(2, "unk = o._unknown  # None or a dict")
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
        if is_fixed(f):
            pack = src.struct_method(">" + FIXED[f.type][0], "pack")
            src(3, f"tagged.append(({f.tag}, {pack}({value})))")
            continue
        src(3, "sub = []")
        _emit_write(src, cls, f, version, flexible, value, 3, "sub.append")
        src(3, f"tagged.append(({f.tag}, b''.join(sub)))")
    src(2, "fld = '<tagged fields>'")
    src(2, "if unk:")
    src(3, "tagged.extend(unk.items())")
    src(3, "tagged.sort(key=lambda kv: kv[0])")
    _emit_write_length(src, 2, "w", "tagged", plus=0)
    src(2, "for tag, data in tagged:")
    src(3, "size = len(data)")
    src(3, "if 0 <= tag < 0x80 and size < 0x80:")  # one byte each, the usual case
    src(4, "w(UVT[tag])")
    src(4, "w(UVT[size])")
    src(3, "else:")
    src(4, "w(uv(tag))")
    src(4, "w(uv(size))")
    src(3, "w(data)")


def _emit_write(
    src: Source, cls: type[Struct], f: Field, version: int, flexible: bool, expr: str, ind: int,
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
            _emit_write_length(src, ind + 1, w, var)
        else:
            src(ind + 1, f"{w}({src.struct_method('>i', 'pack')}(len({var})))")
        item = src.tmp("e")
        loop = emit_write_array_fast(src, cls, f, version, flex, var, item, ind + 1, w)
        src(loop, f"for {item} in {var}:")
        _emit_write_value(src, cls, f, version, flex, item, loop + 1, w, element=True)
        return
    _emit_write_value(src, cls, f, version, flex, var, ind, w, element=False)


_COMPACT_NULL = b"\x00"
_ARRAY_NULL = b"\xff\xff\xff\xff"


def _emit_write_length(src: Source, ind: int, w: str, var: str, plus: int = 1) -> None:
    """Writes `len(var) + plus` as a varint (a compact length when `plus` is 1), taken from a
    table when short."""
    k = src.tmp("k")
    src(ind, f"{k} = len({var}) + {plus}")
    src(ind, f"{w}(UVT[{k}] if {k} < 0x80 else uv({k}))")


def _emit_write_value(
    src: Source, cls: type[Struct], f: Field, version: int, flex: bool, var: str, ind: int,
    w: str, *, element: bool,
) -> None:  # fmt: skip
    t = f.element_type
    nullable = f.nullable(version) and not element
    if t in FIXED:
        src(ind, f"{w}({src.struct_method('>' + FIXED[t][0], 'pack')}({var}))")
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
            _emit_write_length(src, ind + 1, w, data)
        elif t == "string":
            src(ind + 1, f"{w}({src.struct_method('>h', 'pack')}(len({data})))")
        else:
            src(ind + 1, f"{w}({src.struct_method('>i', 'pack')}(len({data})))")
        src(ind + 1, f"{w}({data})")
    else:
        encode = _nested(src, cls, f, version, flex)[1]
        if nullable:
            src(ind, f"if {var} is None:")
            src(ind + 1, f"{w}(b'\\xff')")
            src(ind, "else:")
            src(ind + 1, f"{w}(b'\\x01')")
            src(ind + 1, f"{encode}({var}, {w}, strict)")
        else:
            src(ind, f"{encode}({var}, {w}, strict)")


def _emit_write_null(src: Source, f: Field, nullable: bool, ind: int, what: str) -> None:
    if not nullable:
        src(ind, "if strict:")
        src(ind + 1, f"raise EncodeError('non-nullable {what} is None')")
