"""cuTile's parameter annotations (`typing.Annotated` metadata).

- `ConstantAnnotation()`: the parameter is a compile-time constant, as
  `tile.Constant[T]` (which cuTile spells `Annotated[T, ConstantAnnotation()]`).
- `ArrayAnnotation(index_dtype=, static_shape_dims=, static_stride_dims=)`,
  `ScalarAnnotation(dtype=)`, `ListAnnotation(element=)`, and the aliases
  `IndexedWithInt64` and `ScalarInt64`: checked when created, accepted on
  parameters and otherwise ignored (docs/cutile.md says what tile does instead).
"""

import typing
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from . import dtypes as D

__all__ = ["ConstantAnnotation", "ArrayAnnotation", "ScalarAnnotation", "ListAnnotation",
           "IndexedWithInt64", "ScalarInt64", "constant_metadata"]


class ConstantAnnotation:
    """`Annotated[T, ConstantAnnotation()]` marks a compile-time parameter."""

    def __repr__(self):
        return "ConstantAnnotation()"

    def __eq__(self, other):
        return isinstance(other, ConstantAnnotation)

    def __hash__(self):
        return hash(ConstantAnnotation)


def _index_dtype(dt, what):
    d = D.to_dtype(dt)
    if d not in (D.int32, D.int64):
        raise ValueError(f"`{what}` must be int32 or int64, got {dt!r}")
    return d


def _dims(value, what):
    if not isinstance(value, tuple):
        raise TypeError(f"`{what}` must be a tuple of ints, got {value!r}")
    for i, d in enumerate(value):
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"element {i} of `{what}` must be an int, got {d!r}")


@dataclass(frozen=True, kw_only=True)
class ArrayAnnotation:
    """Metadata of an array parameter. tile indexes with int32 shapes and
    strides and specializes on divisibility and unit strides by itself; the
    fields are checked and otherwise ignored."""

    index_dtype: Any = D.int32
    static_shape_dims: tuple = ()
    static_stride_dims: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "index_dtype", _index_dtype(self.index_dtype, "index_dtype"))
        _dims(self.static_shape_dims, "static_shape_dims")
        _dims(self.static_stride_dims, "static_stride_dims")


@dataclass(frozen=True, kw_only=True)
class ScalarAnnotation:
    """Metadata of an integer scalar parameter: its dtype (int32 or int64).
    tile passes an int as int32 when it fits and int64 otherwise."""

    dtype: Any

    def __post_init__(self):
        object.__setattr__(self, "dtype", _index_dtype(self.dtype, "dtype"))


@dataclass(frozen=True, kw_only=True)
class ListAnnotation:
    """Metadata of a list-of-arrays parameter: `element` is an
    ArrayAnnotation, or an Annotated type holding exactly one."""

    element: Any

    def __post_init__(self):
        element = self.element
        if typing.get_origin(element) is Annotated:
            found = [m for m in element.__metadata__ if isinstance(m, ArrayAnnotation)]
            if len(found) != 1:
                raise TypeError(f"`element` must hold exactly one ArrayAnnotation, "
                                f"found {len(found)} in {element!r}")
            element = found[0]
            object.__setattr__(self, "element", element)
        if not isinstance(element, ArrayAnnotation):
            raise TypeError(f"`element` must be an ArrayAnnotation, got "
                            f"{type(element).__name__}")


T = TypeVar("T")
IndexedWithInt64 = Annotated[T, ArrayAnnotation(index_dtype=D.int64)]
ScalarInt64 = Annotated[T, ScalarAnnotation(dtype=D.int64)]


def constant_metadata(ann):
    """True when `ann` is `Annotated[..., ConstantAnnotation()]` (also a
    generic alias of one, `Annotated[T, ...][int]`)."""
    meta = getattr(ann, "__metadata__", None)
    if meta is None:
        return False
    from .language import Constant
    return any(isinstance(m, (ConstantAnnotation, Constant)) or m is Constant for m in meta)
