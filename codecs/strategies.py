"""Hypothesis strategies derived from message declarations.

Every field of every version is covered without hand-written generators: the same `Field`
list that drives encoding says which values are legal (ranges, nullability, tagged fields).
Imported lazily by `Message.strategy`, so the codec does not pay for Hypothesis at import.
Each (struct class, version) strategy is built once: building and validating a nested strategy
costs more than drawing from it, and the same declaration always gives the same strategy.
"""

from __future__ import annotations

import uuid
from typing import Any, TypeVar, cast

from hypothesis import strategies as st

from kconform.codecs.structs import Field, Struct
from kconform.codecs.wire import ONE_UUID, ZERO_UUID
from kconform.errors import HarnessDefect

S = TypeVar("S", bound=Struct)

_INT_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

MAX_ARRAY = 4
"""Arrays stay short: the codec's per-element code is the same for element 2 and 2000."""

_STRATEGIES: dict[tuple[type[Struct], int], st.SearchStrategy[Any]] = {}

uuids: st.SearchStrategy[uuid.UUID] = st.one_of(
    st.sampled_from([ZERO_UUID, ONE_UUID]), st.uuids(allow_nil=True)
)


def _primitive(type_name: str) -> st.SearchStrategy[Any]:
    if type_name in _INT_RANGES:
        lo, hi = _INT_RANGES[type_name]
        return st.integers(lo, hi)
    if type_name == "bool":
        return st.booleans()
    if type_name == "float64":
        return st.floats(allow_nan=False)
    if type_name == "uuid":
        return uuids
    if type_name == "string":
        return st.text(max_size=24)
    if type_name in ("bytes", "records"):
        return st.binary(max_size=64)
    raise HarnessDefect(f"not a primitive type: {type_name}")


def field_strategy(cls: type[Struct], f: Field, version: int) -> st.SearchStrategy[Any]:
    if f.is_struct:
        element: st.SearchStrategy[Any] = st.deferred(
            lambda: struct_strategy(cls.structs[f.element_type], version)
        )
    else:
        element = _primitive(f.element_type)
    value = st.lists(element, max_size=MAX_ARRAY) if f.is_array else element
    if f.nullable(version):
        value = st.one_of(st.none(), value)
    return value


def struct_strategy(cls: type[S], version: int) -> st.SearchStrategy[S]:
    """Instances of `cls` valid at `version`, including unknown tagged fields when flexible."""
    cached = _STRATEGIES.get((cls, version))
    if cached is None:
        cached = _STRATEGIES[cls, version] = _build_struct_strategy(cls, version)
    return cast("st.SearchStrategy[S]", cached)


def _build_struct_strategy(cls: type[S], version: int) -> st.SearchStrategy[S]:
    kwargs = {
        f.attr: field_strategy(cls, f, version) for f in cls.schema_fields if f.present(version)
    }
    root_flexible = _flexible(cls, version)
    if root_flexible:
        known = {f.tag for f in cls.schema_fields if f.tagged(version)}
        kwargs["unknown_tagged_fields"] = st.dictionaries(
            st.integers(0, 2**31 - 1).filter(lambda t: t not in known),
            st.binary(max_size=8),
            max_size=2,
        )
    return st.builds(cls, **kwargs)


def _flexible(cls: type[Struct], version: int) -> bool:
    """A nested struct is flexible exactly when the message that declares it is."""
    owner = cls.owner
    return owner is not None and owner.is_flexible(version)
