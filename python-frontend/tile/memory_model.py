"""cuTile's memory keywords: PaddingMode, MemoryOrder, MemoryScope and the
load/store hints (check_bounds, latency, allow_tma), checked here and turned
into tile-dialect attributes by memory.py.

What tile does with each (docs/cutile.md, "Memory"):
- padding_mode: the value out-of-bounds elements read; UNDETERMINED reads 0.
- memory_order/memory_scope: attributes the GPU lowering turns into PTX
  orderings and scopes (ld.acquire, st.release, atom.relaxed.cta, fences).
  On the CPU backend atomics are sequentially consistent and ordered loads
  and stores are plain accesses (synchronize blocks through atomics there).
- check_bounds=False, latency, allow_tma: accepted and checked, not acted on
  (tile always bounds-checks, which is one of the behaviours check_bounds=False
  allows; it has no TMA path and no latency model).
"""

import enum
import math
import numbers

from . import language as _L  # language imports PaddingMode from here
from .errors import TileTypeError, TileValueError


class PaddingMode(enum.Enum):
    """The value elements of a load outside the array read."""
    UNDETERMINED = "undetermined"  # tile reads zero
    ZERO = "zero"
    NEG_ZERO = "neg_zero"
    NAN = "nan"
    POS_INF = "pos_inf"
    NEG_INF = "neg_inf"


class MemoryOrder(enum.Enum):
    """Ordering of a memory access (cuTile's memory model)."""
    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"


class MemoryScope(enum.Enum):
    """The threads a non-weak ordering synchronizes with."""
    NONE = "none"
    BLOCK = "block"
    CLUSTER = "cluster"  # cuTile reserves it for cuda.lang; tile ops reject it
    DEVICE = "device"
    SYS = "sys"


_PADDING = {PaddingMode.ZERO: 0.0, PaddingMode.NEG_ZERO: -0.0, PaddingMode.NAN: math.nan,
            PaddingMode.POS_INF: math.inf, PaddingMode.NEG_INF: -math.inf}


def padding_number(fn, padding, padding_mode):
    """The Python number a load pads with, from tile's `padding` and
    cuTile's `padding_mode` (one of them may be given)."""
    if not isinstance(padding_mode, PaddingMode):
        raise TileValueError(f"{fn} padding_mode must be a tile.PaddingMode, got "
                             f"{padding_mode!r}", "e.g. padding_mode=tile.PaddingMode.ZERO")
    if padding_mode is PaddingMode.UNDETERMINED:
        return padding
    mode = _PADDING[padding_mode]
    if not isinstance(padding, _L.Value) and isinstance(padding, numbers.Number) and \
            padding == 0 and not math.copysign(1.0, padding) < 0:
        return mode
    raise TileValueError(f"{fn} got both padding={padding!r} and padding_mode={padding_mode}",
                         "give one of them")


def check_hints(fn, check_bounds=True, latency=None, allow_tma=None):
    """cuTile's hints tile accepts but does not act on: checked only."""
    if not isinstance(check_bounds, bool):
        raise TileValueError(f"{fn} check_bounds must be a constant bool, got "
                             f"{check_bounds!r}")
    if latency is not None:
        if isinstance(latency, bool) or not isinstance(latency, numbers.Integral):
            raise TileValueError(f"{fn} latency must be a constant int from 1 to 10 "
                                 f"or None, got {latency!r}")
        if not 1 <= int(latency) <= 10:
            raise TileValueError(f"{fn} latency must be between 1 and 10, got {latency}")
    if allow_tma is not None and not isinstance(allow_tma, bool):
        raise TileValueError(f"{fn} allow_tma must be a constant bool or None, got "
                             f"{allow_tma!r}")


_VALID = {
    "load": (MemoryOrder.WEAK, MemoryOrder.RELAXED, MemoryOrder.ACQUIRE),
    "store": (MemoryOrder.WEAK, MemoryOrder.RELAXED, MemoryOrder.RELEASE),
    "atomic": (MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.RELEASE,
               MemoryOrder.ACQ_REL),
}
_DEFAULT = {"load": (MemoryOrder.WEAK, MemoryScope.NONE),
            "store": (MemoryOrder.WEAK, MemoryScope.NONE),
            "atomic": (MemoryOrder.ACQ_REL, MemoryScope.DEVICE)}


def memory_attrs(fn, kind, memory_order, memory_scope):
    """The tile-dialect attributes (a list of `name = value` texts) of an
    access of `kind` ("load", "store", "atomic") with cuTile's ordering and
    scope; empty for the defaults."""
    if not isinstance(memory_order, MemoryOrder):
        raise TileValueError(f"{fn} memory_order must be a tile.MemoryOrder, got "
                             f"{memory_order!r}")
    if not isinstance(memory_scope, MemoryScope):
        raise TileValueError(f"{fn} memory_scope must be a tile.MemoryScope, got "
                             f"{memory_scope!r}")
    valid = _VALID[kind]
    if memory_order not in valid:
        raise TileValueError(f"{fn} cannot have memory_order={memory_order}",
                             "use one of " + ", ".join(str(o) for o in valid))
    if memory_scope is MemoryScope.CLUSTER:
        raise TileValueError(f"{fn} cannot have memory_scope=MemoryScope.CLUSTER",
                             "use BLOCK, DEVICE or SYS")
    if memory_order is MemoryOrder.WEAK and memory_scope is not MemoryScope.NONE:
        raise TileValueError(f"{fn} with memory_order=MemoryOrder.WEAK cannot have a "
                             "memory_scope", "give memory_order too, e.g. RELAXED")
    if memory_order is not MemoryOrder.WEAK and memory_scope is MemoryScope.NONE:
        raise TileValueError(f"{fn} with memory_order={memory_order} needs a memory_scope",
                             "e.g. memory_scope=tile.MemoryScope.DEVICE")
    if (memory_order, memory_scope) == _DEFAULT[kind]:
        return []
    return [f"memory_order = #tile.memory_order<{memory_order.value}>",
            f"memory_scope = #tile.memory_scope<{memory_scope.value}>"]


def axis_order(fn, order, ndim):
    """cuTile's `order` ("C", "F" or a permutation of the array's axes) as a
    tuple, or None for the identity."""
    from .errors import TileShapeError
    if order is None or (isinstance(order, str) and order == "C"):
        return None
    if isinstance(order, str):
        if order != "F":
            raise TileValueError(f"{fn} order must be 'C', 'F' or a tuple of axes, "
                                 f"got {order!r}")
        perm = tuple(reversed(range(ndim)))
    else:
        if isinstance(order, _L.Value) or not isinstance(order, (tuple, list)) or \
                not all(isinstance(o, numbers.Integral) and not isinstance(o, bool)
                        for o in order):
            raise TileTypeError(f"{fn} order must be 'C', 'F' or a tuple of constant "
                                f"ints, got {order!r}")
        perm = tuple(int(o) for o in order)
        if sorted(perm) != list(range(ndim)):
            raise TileShapeError(f"{fn} order {perm} is not a permutation of the "
                                 f"array's axes range({ndim})")
    return None if perm == tuple(range(ndim)) else perm
