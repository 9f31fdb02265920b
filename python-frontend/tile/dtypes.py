"""Element types of tiles and arrays, and the promotion rules of the spec."""

import math

__all__ = [
    "DType", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "bfloat16", "float32", "float64",
    "float8_e4m3fn", "float8_e5m2", "tfloat32", "float4_e2m1fn", "float8_e8m0fnu",
    "float8_e5m3fnu",
    "ALL_DTYPES", "to_dtype", "promote",
    "KIND_BOOL", "KIND_INT", "KIND_FLOAT",
]

KIND_BOOL, KIND_INT, KIND_FLOAT = 0, 1, 2


class DType:
    """A tile element type. `mlir` is the element type of tiles; `mem_mlir`
    the element type of arrays in memory (bool is stored as a byte)."""

    __slots__ = ("name", "mlir", "mem_mlir", "kind", "bits", "signed",
                 "itemsize", "_limits", "needs")

    def __init__(self, name, mlir, kind, bits, signed=True, mem_mlir=None,
                 limits=None, needs=None):
        self.name = name
        self.mlir = mlir
        self.mem_mlir = mem_mlir or mlir
        self.kind = kind
        self.bits = bits
        self.signed = signed
        self.itemsize = max(1, bits // 8)
        # floats: (max finite, hex of +inf or None, hex of -inf, hex of nan)
        self._limits = limits
        # the target a dtype tile cannot compile needs ("sm_100"), or None
        self.needs = needs

    is_floating = property(lambda self: self.kind == KIND_FLOAT)
    is_integer = property(lambda self: self.kind == KIND_INT)
    is_bool = property(lambda self: self.kind == KIND_BOOL)
    is_unsigned = property(lambda self: self.kind == KIND_INT and not self.signed)

    def __repr__(self):
        return f"tile.{self.name}"

    def __reduce__(self):  # dtypes are singletons, also across pickling
        return (to_dtype, (self.name,))

    def __call__(self, value, /):
        """In a kernel, `tile.int16(5)` is an int16 scalar (`x` converted for a
        traced value)."""
        from .named import dtype_call
        return dtype_call(self, value)


def _f(name, mlir, bits, max_finite, pinf, ninf, nan):
    return DType(name, mlir, KIND_FLOAT, bits, limits=(max_finite, pinf, ninf, nan))


bool_ = DType("bool_", "i1", KIND_BOOL, 1, signed=False, mem_mlir="i8")
int8 = DType("int8", "i8", KIND_INT, 8)
int16 = DType("int16", "i16", KIND_INT, 16)
int32 = DType("int32", "i32", KIND_INT, 32)
int64 = DType("int64", "i64", KIND_INT, 64)
uint8 = DType("uint8", "i8", KIND_INT, 8, signed=False)
uint16 = DType("uint16", "i16", KIND_INT, 16, signed=False)
uint32 = DType("uint32", "i32", KIND_INT, 32, signed=False)
uint64 = DType("uint64", "i64", KIND_INT, 64, signed=False)
float16 = _f("float16", "f16", 16, 65504.0, "0x7C00", "0xFC00", "0x7E00")
bfloat16 = _f("bfloat16", "bf16", 16, 3.3895313892515355e38, "0x7F80", "0xFF80", "0x7FC0")
float32 = _f("float32", "f32", 32, 3.4028234663852886e38, "0x7F800000",
             "0xFF800000", "0x7FC00000")
float64 = _f("float64", "f64", 64, 1.7976931348623157e308, "0x7FF0000000000000",
             "0xFFF0000000000000", "0x7FF8000000000000")
# e4m3fn has no infinity: +-inf saturate to +-448 (its largest finite values).
float8_e4m3fn = _f("float8_e4m3fn", "f8E4M3FN", 8, 448.0, "0x7E", "0xFE", "0x7F")
float8_e5m2 = _f("float8_e5m2", "f8E5M2", 8, 57344.0, "0x7C", "0xFC", "0x7E")
# tfloat32 (cuTile's): an mma operand type. Its tiles hold float32 bits;
# mma/matmul of tfloat32 inputs run as tf32 (tensor cores round the inputs).
tfloat32 = _f("tfloat32", "f32", 32, 3.4028234663852886e38, "0x7F800000", "0xFF800000",
              "0x7FC00000")

# Blackwell-only types (cuTile's): names that exist, but using one is an
# error naming sm_100 (language.dtype_arg); never in ALL_DTYPES.
float4_e2m1fn = DType("float4_e2m1fn", "f4E2M1FN", KIND_FLOAT, 4, needs="sm_100")
float8_e8m0fnu = DType("float8_e8m0fnu", "f8E8M0FNU", KIND_FLOAT, 8, needs="sm_100")
float8_e5m3fnu = DType("float8_e5m3fnu", "f8E5M3FNU", KIND_FLOAT, 8, needs="sm_100")
BLACKWELL_DTYPES = (float4_e2m1fn, float8_e8m0fnu, float8_e5m3fnu)

ALL_DTYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2)

_BY_NAME = {d.name: d for d in ALL_DTYPES}
_ALIASES = {
    "bool": bool_, "b1": bool_, "?": bool_, "half": float16, "float": float32,
    "double": float64, "f16": float16, "f32": float32, "f64": float64,
    "bf16": bfloat16, "i8": int8, "i16": int16, "i32": int32, "i64": int64,
    "u8": uint8, "u16": uint16, "u32": uint32, "u64": uint64, "int": int32,
    "long": int64, "short": int16, "float8_e4m3fn": float8_e4m3fn,
    "float8_e5m2": float8_e5m2,
}
_BY_NAME.update(_ALIASES)
_BY_NAME.update({"tfloat32": tfloat32, "tf32": tfloat32})


def to_dtype(x):
    """A DType from a DType, a name, a Python type, or a NumPy/torch dtype.
    Returns None when `x` names no supported dtype."""
    if isinstance(x, DType):
        return x
    if x is bool:
        return bool_
    if x is int:
        return int32
    if x is float:
        return float32
    if isinstance(x, str):
        return _BY_NAME.get(x.rsplit(".", 1)[-1])
    # numpy dtype / scalar type, torch dtype ("torch.float16"), ml_dtypes...
    name = getattr(x, "name", None)
    if name is None and isinstance(x, type):
        name = x.__name__
    if name is None:
        name = str(x)
    return _BY_NAME.get(str(name).rsplit(".", 1)[-1])


def default_of_kind(kind):
    return (bool_, int32, float32)[kind]


def _promote_int(a, b):
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.signed else (b, a)
    if s.bits > u.bits:
        return s
    return {8: int16, 16: int32, 32: int64, 64: int64}[u.bits]


def promote(a, b):
    """Two tile dtypes combine as in PyTorch: the higher kind wins; within a
    kind the wider type; float16 with bfloat16 (or two float8s) gives float32."""
    if a is b:
        return a
    if a.kind != b.kind:
        return a if a.kind > b.kind else b
    if a.kind == KIND_INT:
        return _promote_int(a, b)
    if a.kind == KIND_FLOAT:
        if a.bits == b.bits:  # f16/bf16 or e4m3/e5m2: no common narrow type
            return float32 if a.bits < 32 else a
        return a if a.bits > b.bits else b
    return a


def python_kind(v):
    if isinstance(v, bool):
        return KIND_BOOL
    if isinstance(v, int):
        return KIND_INT
    return KIND_FLOAT


def weak_dtype(kind, strong):
    """The dtype a scalar of `kind` takes next to a tile of dtype `strong`."""
    if kind <= strong.kind:
        return strong
    return default_of_kind(kind)


def int_range(dt):
    if dt.kind == KIND_BOOL:
        return 0, 1
    if dt.signed:
        return -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
    return 0, (1 << dt.bits) - 1


def float_literal(v, dt):
    """An MLIR literal for float `v` in dtype `dt` (hex for inf/nan/overflow)."""
    max_finite, pinf, ninf, nan = dt._limits
    if math.isnan(v):
        return nan
    if math.isinf(v) or abs(v) > max_finite:
        return pinf if v > 0 else ninf
    s = repr(float(v))
    if "e" in s and "." not in s:  # MLIR wants a '.' in a float literal
        m, e = s.split("e")
        s = f"{m}.0e{e}"
    return s


def int_literal(v, dt):
    """An MLIR literal for int `v`; values of unsigned types above the signed
    range are written in their two's-complement (signless) form."""
    if dt.kind == KIND_BOOL:
        return "true" if v else "false"
    lo, hi = -(1 << (dt.bits - 1)), (1 << dt.bits) - 1
    if not lo <= v <= hi:
        raise OverflowError(f"{v} does not fit in {dt.name}")
    if v >= (1 << (dt.bits - 1)):
        v -= 1 << dt.bits
    return str(v)
