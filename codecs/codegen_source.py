"""What every part of the code generator shares: the source being written (its lines and the
namespace it will run in) and the table of fixed-width types."""

from __future__ import annotations

import struct
from typing import Any

from kconform.codecs.codegen_runtime import NS_BASE
from kconform.codecs.structs import NULL, Field, Struct

__all__ = ["FIXED", "Source", "fresh_default", "is_fixed"]

FIXED: dict[str, tuple[str, int]] = {
    "bool": ("?", 1), "int8": ("b", 1), "int16": ("h", 2), "uint16": ("H", 2),
    "int32": ("i", 4), "uint32": ("I", 4), "int64": ("q", 8), "float64": ("d", 8),
}  # fmt: skip


class Source:
    """One generated module being written: its lines, and the namespace its constants, bound
    `struct` methods and nested-struct functions are put in under short names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = dict(NS_BASE)
        self._n = 0
        self._bound: dict[tuple[str, str], str] = {}
        self.nested: dict[tuple[type[Struct], int, bool], tuple[str, str]] = {}

    def tmp(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def const(self, value: Any, prefix: str = "K") -> str:
        name = self.tmp(prefix)
        self.ns[name] = value
        return name

    def struct_method(self, fmt: str, method: str) -> str:
        """A name bound to `struct.Struct(fmt).<method>`: one global lookup per call, no
        attribute lookup."""
        key = (fmt, method)
        if key not in self._bound:
            self._bound[key] = self.const(getattr(struct.Struct(fmt), method), "P")
        return self._bound[key]

    def __call__(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


def fresh_default(src: Source, cls: type[Struct], f: Field) -> str:
    """An expression giving a new default value (never a shared mutable one)."""
    if f.default is not NULL and f.is_array:
        return "[]"
    if f.default is not NULL and f.is_struct:
        return f"{src.const(cls.structs[f.element_type], 'T')}()"
    return src.const(f.default_value(), "D")


def is_fixed(f: Field) -> bool:
    return not f.is_array and f.type in FIXED
