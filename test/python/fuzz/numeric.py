"""The spec's dtypes and promotion rules, written from
/work/shared/spec/language.md (not from the frontend, which is what is
tested), and rounding to each float dtype in NumPy.

Float values of the model are float64 arrays holding values exactly
representable in their dtype: `round_to` rounds a float64 result to the
dtype (bfloat16, which NumPy lacks, by round-to-nearest-even on the float32
bit pattern)."""

import numpy as np

BOOL, INT, FLOAT = 0, 1, 2


class DT:
    """A tile dtype: `np` is its NumPy dtype (float32 for bfloat16, whose
    values are kept rounded)."""

    def __init__(self, name, kind, bits, signed=True, np_dtype=None, mant=0):
        self.name, self.kind, self.bits, self.signed = name, kind, bits, signed
        self.np = np.dtype(np_dtype or name)
        self.mant = mant  # significand bits, implicit one included

    def __repr__(self):
        return self.name

    def __reduce__(self):  # singletons, also in worker processes (`is` compares them)
        return (by_name, (self.name,))

    @property
    def lo(self):
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self):
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def eps(self):
        return 2.0 ** (1 - self.mant)

    @property
    def tiny(self):
        """The smallest normal number."""
        return 2.0 ** -126 if self.name == "bfloat16" else float(np.finfo(self.np).tiny)


bool_ = DT("bool_", BOOL, 1, signed=False, np_dtype="bool")
int8, int16, int32, int64 = (DT(f"int{b}", INT, b) for b in (8, 16, 32, 64))
uint8 = DT("uint8", INT, 8, signed=False)
uint32 = DT("uint32", INT, 32, signed=False)
float16 = DT("float16", FLOAT, 16, mant=11)
bfloat16 = DT("bfloat16", FLOAT, 16, np_dtype="float32", mant=8)
float32 = DT("float32", FLOAT, 32, mant=24)
float64 = DT("float64", FLOAT, 64, mant=53)
BY_NAME = {d.name: d for d in (bool_, int8, int16, int32, int64, uint8, uint32, float16,
                                bfloat16, float32, float64)}


def by_name(name):
    return BY_NAME[name]


# bfloat16's largest finite value (the float32 maximum is not one).
BF16_MAX = float(np.array([0x7F7F0000], np.uint32).view(np.float32)[0])


def max_finite(dt):
    return BF16_MAX if dt is bfloat16 else float(np.finfo(dt.np).max)


def default_of_kind(kind):
    return (bool_, int32, float32)[kind]


def promote(a, b):
    """Two tile dtypes, as in PyTorch (spec "Promotion")."""
    if a is b:
        return a
    if a.kind != b.kind:
        return a if a.kind > b.kind else b
    if a.kind == INT:
        if a.signed == b.signed:
            return a if a.bits >= b.bits else b
        s, u = (a, b) if a.signed else (b, a)
        return s if s.bits > u.bits else {8: int16, 16: int32, 32: int64, 64: int64}[u.bits]
    if a.bits == b.bits:  # float16 with bfloat16
        return float32
    return a if a.bits > b.bits else b


def weak(kind, strong):
    """The dtype a scalar of `kind` takes next to a tile of dtype `strong`."""
    return strong if kind <= strong.kind else default_of_kind(kind)


# ---------------------------------------------------------------------------
# Rounding
# ---------------------------------------------------------------------------

def _bf16_from_f32(x32):
    bits = np.ascontiguousarray(x32, np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(x32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(nan, np.float32(np.nan), out)


def round_to(x, dt):
    """float64 array `x` rounded to float dtype `dt`, back as float64."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        if dt is float64:
            return x.copy()
        if dt is bfloat16:
            return _bf16_from_f32(x.astype(np.float32)).astype(np.float64)
        return x.astype(dt.np).astype(np.float64)


def ulp(x, dt):
    """The spacing of dtype `dt` at |x| (subnormal spacing below tiny)."""
    x = np.abs(np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.where((x > 0) & np.isfinite(x), x, 1.0)))
    e = np.maximum(e, np.log2(dt.tiny))
    return np.exp2(e - (dt.mant - 1))


def widen(lo, hi, dt, slack):
    """[lo, hi] widened by `slack` (an absolute amount, array or number)."""
    if np.all(np.asarray(slack) == 0):
        return lo, hi
    with np.errstate(all="ignore"):
        lo2 = np.where(np.isfinite(lo), lo - slack, lo)
        hi2 = np.where(np.isfinite(hi), hi + slack, hi)
    return lo2, hi2
