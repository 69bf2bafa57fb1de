"""Whole-array paths of the generated codec (issue 16): arrays whose elements all have the same
width, such as an ApiVersionsResponse's api keys, are read with one `iter_unpack` and written
with one comprehension of `struct` calls, instead of a call per element. Anything unusual in
such an array (unknown tagged fields, a truncation, a value `struct` refuses) hands the whole
array to the element-by-element code, so values and errors are exactly what it gives."""

from __future__ import annotations

import struct

from kconform.codecs.codegen_source import FIXED, Source, fresh_default, is_fixed
from kconform.codecs.structs import Field, Struct

__all__ = ["emit_read_array_fast", "emit_write_array_fast", "flat_fields"]


def flat_fields(cls: type[Struct], version: int) -> tuple[Field, ...] | None:
    """The fields of a struct that is a single fixed-width run at `version` (nothing tagged,
    nothing absent that strict encoding would have to check), else None."""
    out: list[Field] = []
    for f in cls.schema_fields:
        if not f.present(version):
            if not f.ignorable:
                return None
        elif f.tagged(version) or not is_fixed(f):
            return None
        else:
            out.append(f)
    return tuple(out) or None


def emit_read_array_fast(
    src: Source, cls: type[Struct], f: Field, version: int, flex: bool, var: str, item: str,
    app: str, ind: int, end: str,
) -> str:  # fmt: skip
    """Reads a whole array of same-width elements with one `iter_unpack` (no call per element).

    Returns the index the element-by-element loop starts from: all elements are left to it
    when one has tagged fields or the array is truncated (it reports where).
    """
    t = f.element_type
    stop = src.tmp("z")
    if t in FIXED:
        fmt, size = FIXED[t]
        src(ind, f"{stop} = pos + n * {size}")
        src(ind, f"if {stop} <= {end}:")
        src(ind + 1, f"{var}.extend(map(FIRST, {src.struct_method('>' + fmt, 'iter_unpack')}"
                     f"(buf[pos:{stop}])))")  # fmt: skip
        src(ind + 1, f"pos = {stop}")
        return f"len({var})"
    target = cls.structs[t] if f.is_struct else None
    flat = flat_fields(target, version) if target is not None else None
    if target is None or flat is None:
        return "0"
    fmt = ">" + "".join(FIXED[x.type][0] for x in flat) + ("B" if flex else "")
    stride = struct.calcsize(fmt)
    values = [src.tmp("v") for _ in flat]
    tags, made = src.tmp("t"), src.tmp("m")
    names = ", ".join([*values, tags] if flex else values)
    src(ind, f"{stop} = pos + n * {stride}")
    src(ind, f"if n and {stop} <= {end}:")
    # allocating from C (map) saves a Python-level call per element, the largest single cost
    src(ind + 1, f"{made} = list(map(new, repeat({src.const(target, 'T')}, n)))")
    src(ind + 1, f"for {item}, ({names},) in zip({made}, "
                 f"{src.struct_method(fmt, 'iter_unpack')}(buf[pos:{stop}])):")  # fmt: skip
    if flex:
        src(ind + 2, f"if {tags}:")  # tagged fields: the element-by-element loop reads them all
        src(ind + 3, "break")
    for x, value in zip(flat, values, strict=True):
        src(ind + 2, f"{item}.{x.attr} = {value}")
    for x in target.schema_fields:
        if not x.present(version):
            src(ind + 2, f"{item}.{x.attr} = {fresh_default(src, target, x)}")
    src(ind + 2, f"{item}._unknown = None")
    src(ind + 1, "else:")
    src(ind + 2, f"{var} = {made}")
    src(ind + 2, f"pos = {stop}")
    return f"len({var})"


def emit_write_array_fast(
    src: Source, cls: type[Struct], f: Field, version: int, flex: bool, var: str, item: str,
    ind: int, w: str,
) -> int:  # fmt: skip
    """Writes a whole array of same-width elements in one comprehension of `struct` calls (or
    one call in all for primitives), joined and written once.

    Returns the indentation of the element-by-element loop, which runs only when this could not
    finish (unknown tagged fields, a value `struct` refuses) and so reports errors as before.
    """
    t = f.element_type
    out = src.tmp("b")
    if t in FIXED:
        src(ind, f"{out} = True")
        src(ind, "try:")
        src(ind + 1, f"{w}(struct_pack(f'>{{len({var})}}{FIXED[t][0]}', *{var}))")
        src(ind + 1, f"{out} = None")
    else:
        target = cls.structs[t] if f.is_struct else None
        flat = flat_fields(target, version) if target is not None else None
        if flat is None:
            return ind
        pad = "x" if flex else ""  # a zero pad byte: the empty tag section of a flexible element
        pack = src.struct_method(">" + "".join(FIXED[x.type][0] for x in flat) + pad, "pack")
        values = ", ".join(f"{item}.{x.attr}" for x in flat)
        plain = f" if not {item}._unknown" if flex else ""  # the others need the full encoder
        src(ind, f"{out} = True")
        src(ind, "try:")
        src(ind + 1, f"{out} = [{pack}({values}) for {item} in {var}{plain}]")
        src(ind + 1, f"if len({out}) == len({var}):")
        src(ind + 2, f"{w}(b''.join({out}))")
        src(ind + 2, f"{out} = None")
    src(ind, "except (struct_error, OverflowError, TypeError, AttributeError):")
    src(ind + 1, "pass")
    src(ind, f"if {out} is not None:")
    return ind + 1
