"""A list of arrays as a kernel parameter (cuTile's grouped GEMM).

The launch passes a Python list (or tuple) of N arrays of one dtype and rank;
the kernel is specialized on N and on one array type for all of them
(interop.array_list_part) and takes N array arguments. While tracing, the
parameter is an `ArrayList`: `len()` is the Python int N, iteration yields
the arrays, and indexing gives an `Array` usable wherever an array argument
is: with a Python int that element directly (checked against N), with a
runtime integer (a loop index, `tile.bid`, a 0-d tile) a `tile.array_select`
of the N arrays, whose index is clamped into [0, N) (docs/cutile.md).
"""

import numbers

from .errors import TileTypeError
from .interop import list_length
from .ir import builder
from .language import Array, Tile, Value

__all__ = ["ArrayList"]


class ArrayList:
    """The traced value of a list-of-arrays parameter."""

    __slots__ = ("arrays", "param")

    def __init__(self, arrays, param):
        self.arrays = tuple(arrays)
        self.param = param

    def __len__(self):
        return len(self.arrays)

    def __iter__(self):
        return iter(self.arrays)

    def __bool__(self):
        return True  # never empty: an empty list is refused at launch

    def __getitem__(self, index):
        n = len(self.arrays)
        if isinstance(index, Value):
            return self._select(index)
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise TileTypeError(f"list argument '{self.param}' is indexed with "
                                f"{type(index).__name__} {index!r}",
                                "index it with an int, a runtime integer scalar "
                                "(tile.bid, a tile.range index) or a 0-d integer tile")
        i = int(index)
        if not -n <= i < n:
            raise TileTypeError(f"index {i} is out of range for list argument "
                                f"'{self.param}' of {n} arrays",
                                f"use an index from {-n} to {n - 1}")
        return self.arrays[i]

    def _select(self, index):
        from .arith import to_i32_scalar
        if isinstance(index, Tile) and index.shape != ():
            raise TileTypeError(f"list argument '{self.param}' is indexed with a tile of "
                                f"shape {index.shape}", "index with a 0-d tile or a scalar")
        i = to_i32_scalar(index, f"the index of list argument '{self.param}'")
        first = self.arrays[0]
        if len(self.arrays) == 1:
            return first
        names = ", ".join(a.name for a in self.arrays)
        name = builder().emit(f"tile.array_select {i.name}, {names} : i32, {first.type}")
        return Array(name, first.dtype, first.ndim, first.type, first.unit_strides,
                     f"{self.param}[...]")

    def __setitem__(self, index, value):
        raise TileTypeError(f"list argument '{self.param}' cannot be assigned to in a "
                            "kernel", "its arrays come from the launch")

    def __repr__(self):
        return f"ArrayList({self.param}: {len(self.arrays)} x {self.arrays[0].type})"


# The parameter space of a CUDA kernel in the PTX tile emits (ISA 8.0): ptxas
# refuses an entry whose parameters take more bytes.
PTX_PARAM_BYTES = 4352


def _param_bytes(part):
    """(bytes, alignment) of one non-Constant parameter's kernel arguments."""
    if part.__class__ is tuple:  # pointer, extents and strides: 8 bytes each
        return (list_length(part) or 1) * (8 + 16 * part[2]), 8
    return {"one": (0, 1), "i64": (8, 8), "i64d16": (8, 8)}.get(part, (4, 4))


def check_parameter_space(name, params, key):
    """A TileTypeError when the kernel's arguments for `key` do not fit in a
    CUDA kernel's parameter space (long lists of arrays)."""
    total, lists = 0, []
    for (pname, const), part in zip(params, key):
        if const:
            continue
        size, align = _param_bytes(part)
        total = -(-total // align) * align + size
        if list_length(part) is not None:
            lists.append(f"'{pname}' ({list_length(part)} arrays, {size} bytes)")
    if total <= PTX_PARAM_BYTES:
        return
    raise TileTypeError(
        f"the kernel's arguments take {total} bytes, more than the {PTX_PARAM_BYTES} "
        "bytes of a CUDA kernel's parameters" + (f"; the lists: {', '.join(lists)}"
                                                 if lists else ""),
        "each array of rank r takes 8 + 16 r bytes: launch the groups in several "
        "launches of fewer arrays, or stack equal-shaped groups into one array of "
        "higher rank", kernel=name)
