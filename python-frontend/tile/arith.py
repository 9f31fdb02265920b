"""Elementwise arithmetic on traced values: casts, binary operators with the
spec's promotion, comparisons, Python's `//` and `%`, `**`."""

from . import dtypes as D
from .errors import TileTypeError
from .ir import builder, tensor_type
from .language import (Scalar, Tile, Value, as_operand, broadcast_shapes, common_dtype,
                       constant, materialize, shape_of)


# ---------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------

def _emit_cast(op, v, dt):
    return builder().emit(f"arith.{op} {v.name} : {v.type} to {_retype(v, dt)}")


def _retype(v, dt):
    return dt.mlir if isinstance(v, Scalar) else tensor_type(v.shape, dt.mlir)


def _like(v, name, dt):
    return Scalar(name, dt) if isinstance(v, Scalar) else Tile(name, v.shape, dt)


def _zero_like(v, dt):
    return constant(0, dt, None if isinstance(v, Scalar) else v.shape)


def cast(v, dt):
    """`v` converted to dtype `dt` with arith casts (C semantics)."""
    if not isinstance(v, Value):
        return v
    src = v.dtype
    if src is dt:
        return v
    if src.mlir == dt.mlir and src.kind == dt.kind:  # int8 <-> uint8: same bits
        return _like(v, v.name, dt)
    b = builder()
    if dt.kind == D.KIND_BOOL:
        z = _zero_like(v, src)
        if src.kind == D.KIND_FLOAT:
            name = b.emit(f"arith.cmpf une, {v.name}, {z.name} : {v.type}")
        else:
            name = b.emit(f"arith.cmpi ne, {v.name}, {z.name} : {v.type}")
        return _like(v, name, dt)
    if src.kind == D.KIND_BOOL:
        op = "uitofp" if dt.kind == D.KIND_FLOAT else "extui"
        return _like(v, _emit_cast(op, v, dt), dt)
    if src.kind == D.KIND_INT and dt.kind == D.KIND_INT:
        if dt.bits > src.bits:
            op = "extsi" if src.signed else "extui"
        elif dt.bits < src.bits:
            op = "trunci"
        else:
            return _like(v, v.name, dt)
        return _like(v, _emit_cast(op, v, dt), dt)
    if src.kind == D.KIND_INT:
        op = "sitofp" if src.signed else "uitofp"
        return _like(v, _emit_cast(op, v, dt), dt)
    if dt.kind == D.KIND_INT:
        return _float_to_int(v, dt)
    # float -> float
    if dt.bits == src.bits:  # f16 <-> bf16, e4m3 <-> e5m2: through f32
        return cast(cast(v, D.float32), dt)
    op = "extf" if dt.bits > src.bits else "truncf"
    return _like(v, _emit_cast(op, v, dt), dt)


def _float_to_int(v, dt):
    """Truncation toward zero that saturates at `dt`'s range, NaN giving 0
    (PTX's cvt.rzi, LLVM's fptosi.sat). arith's fptosi/fptoui give poison
    there, which a later select or division guard does not stop: the CPU
    trapped on `x.astype(uint8) // y` (SIGFPE). The cast's poison is left in
    the arms not selected, as LLVM's own expansion of fptosi.sat does."""
    if v.dtype.bits < 32:  # f16, bf16, fp8: exact in f32, where the bounds are
        v = cast(v, D.float32)
    shape = None if isinstance(v, Scalar) else v.shape
    lo = -(1 << (dt.bits - 1)) if dt.signed else 0
    hi = 1 << (dt.bits - (1 if dt.signed else 0))  # the first value too large

    def bound(x):
        return materialize(float(x), v.dtype, shape)
    r = _like(v, _emit_cast("fptosi" if dt.signed else "fptoui", v, dt), dt)
    r = _select(_cmp("olt", v, bound(lo)), materialize(lo, dt, shape), r)
    r = _select(_cmp("oge", v, bound(hi)), materialize(_wrapped(hi - 1, dt), dt, shape), r)
    return _select(_cmp("uno", v, v), materialize(0, dt, shape), r)


# ---------------------------------------------------------------------------
# Elementwise arithmetic
# ---------------------------------------------------------------------------

# op -> (float, signed int, unsigned int) arith op names
_ARITH = {
    "add": ("addf", "addi", "addi"),
    "sub": ("subf", "subi", "subi"),
    "mul": ("mulf", "muli", "muli"),
    "truediv": ("divf", None, None),
    "and": (None, "andi", "andi"),
    "or": (None, "ori", "ori"),
    "xor": (None, "xori", "xori"),
    "lshift": (None, "shli", "shli"),
    "rshift": (None, "shrsi", "shrui"),
    "max": ("maximumf", "maxsi", "maxui"),
    "min": ("minimumf", "minsi", "minui"),
}
_PYOPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b, "lshift": lambda a, b: a << b,
    "rshift": lambda a, b: a >> b, "max": max, "min": min,
}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
           "mod": "%", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
           "rshift": ">>", "max": "maximum", "min": "minimum"}
_ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod")


def _emit_binary(op, a, b, dt, shape):
    """`arith.<op>` on two values already of dtype dt and shape `shape`."""
    t = dt.mlir if shape is None else tensor_type(shape, dt.mlir)
    name = builder().emit(f"{op} {a.name}, {b.name} : {t}")
    return Scalar(name, dt) if shape is None else Tile(name, shape, dt)


def _arith_name(op, dt):
    f, s, u = _ARITH[op]
    if dt.kind == D.KIND_FLOAT:
        name = f
    else:  # bools compare and shift as unsigned
        name = s if dt.kind == D.KIND_INT and dt.signed else u
    return name and "arith." + name


def binary(op, a, b):
    """`a <op> b` with promotion and broadcasting."""
    a, b = as_operand(a), as_operand(b)
    if not isinstance(a, Value) and not isinstance(b, Value):
        return _PYOPS[op](a, b)
    dt = common_dtype([a, b])
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    if op in _ARITHMETIC and dt.kind == D.KIND_BOOL:
        dt = D.int32  # arithmetic on bools counts in int32
    if op == "truediv" and dt.kind != D.KIND_FLOAT:
        dt = D.float32  # `/` on integers gives float32
    if op in ("and", "or", "xor", "lshift", "rshift") and dt.kind == D.KIND_FLOAT:
        raise TileTypeError(f"`{_SYMBOL[op]}` needs integer or bool operands, got {dt.name}",
                            "cast with .astype(tile.int32) first")
    if op in ("lshift", "rshift") and dt.kind == D.KIND_BOOL:
        dt = D.int32
    A = materialize(a, dt, shape)
    B = materialize(b, dt, shape)
    if op in ("floordiv", "mod", "lshift", "rshift"):
        # NumPy's results where MLIR and LLVM have undefined behaviour.
        known = None if isinstance(b, Value) else _wrapped(b, dt)
        if dt.kind == D.KIND_FLOAT:
            return _float_divmod(op, A, B, dt, shape)
        if op in ("lshift", "rshift"):
            return _shift(op, A, B, dt, shape, known)
        return _int_divide(op, A, B, dt, shape, known)
    return _emit_binary(_arith_name(op, dt), A, B, dt, shape)


# ---------------------------------------------------------------------------
# `//`, `%` and shifts: defined for every operand (see docs/numerics.md)
# ---------------------------------------------------------------------------
#
# arith's integer division and remainder are undefined for a zero divisor and
# for INT_MIN / -1, and its shifts for an amount of at least the bit width:
# constants fold to poison and the CPU traps. The frontend never emits them
# with such operands; it selects NumPy's results instead.

def _wrapped(v, dt):
    """Python number `v` as the value it has in integer dtype `dt` (None
    when `dt` is not an integer type)."""
    if dt.kind != D.KIND_INT:
        return None
    v = int(v) & ((1 << dt.bits) - 1)
    return v - (1 << dt.bits) if dt.signed and v >> (dt.bits - 1) else v


def _select(cond, A, B):
    types = A.type if isinstance(A, Scalar) else f"{cond.type}, {A.type}"
    name = builder().emit(f"arith.select {cond.name}, {A.name}, {B.name} : {types}")
    return _like(A, name, A.dtype)


def _cmp(pred, A, B):
    cmp = "arith.cmpf" if A.dtype.kind == D.KIND_FLOAT else "arith.cmpi"
    return _like(A, builder().emit(f"{cmp} {pred}, {A.name}, {B.name} : {A.type}"), D.bool_)


def _logic(op, p, q):
    return _emit_binary(f"arith.{op}", p, q, D.bool_, shape_of(p))


def _int_divide(op, A, B, dt, shape, known):
    """Integer `//`, `%` and tile.cdiv (op "ceildiv") as NumPy: a zero
    divisor gives 0, INT_MIN // -1 wraps to INT_MIN, INT_MIN % -1 is 0."""
    signed = dt.signed
    if known is not None:
        if known == 0 or (signed and known == -1 and op == "mod"):
            return materialize(0, dt, shape)
        if signed and known == -1:  # a // -1 == -a, wrapping
            return _emit_binary("arith.subi", materialize(0, dt, shape), A, dt, shape)
        return _plain_divide(op, A, B, dt, shape)
    zero, one = materialize(0, dt, shape), materialize(1, dt, shape)
    by_zero = _cmp("eq", B, zero)
    if not signed:
        q = _plain_divide(op, A, _select(by_zero, one, B), dt, shape)
        # x % 1 is already 0
        return q if op == "mod" else _select(by_zero, zero, q)
    by_minus_one = _cmp("eq", B, materialize(-1, dt, shape))
    if op == "mod":  # x % 1 == x % -1 == 0 == NumPy's x % 0
        return _plain_divide(op, A, _select(_logic("ori", by_zero, by_minus_one), one, B),
                             dt, shape)
    # INT_MIN // 1 is INT_MIN, the wrapped INT_MIN // -1
    int_min = materialize(-(1 << (dt.bits - 1)), dt, shape)
    overflow = _logic("andi", _cmp("eq", A, int_min), by_minus_one)
    q = _plain_divide(op, A, _select(_logic("ori", by_zero, overflow), one, B), dt, shape)
    return _select(by_zero, zero, q)


_INT_DIVIDE = {"floordiv": ("arith.floordivsi", "arith.divui"),
               "ceildiv": ("arith.ceildivsi", "arith.ceildivui")}


def _plain_divide(op, A, B, dt, shape):
    """The arith op for a divisor that is neither 0 nor (signed) -1."""
    if op == "mod":
        return _int_mod(A, B, dt, shape)
    return _emit_binary(_INT_DIVIDE[op][0 if dt.signed else 1], A, B, dt, shape)


def _int_mod(A, B, dt, shape):
    """Python's integer `%`: the remainder takes the divisor's sign."""
    if not dt.signed:
        return _emit_binary("arith.remui", A, B, dt, shape)
    r = _emit_binary("arith.remsi", A, B, dt, shape)
    zero = materialize(0, dt, shape)
    signs = _logic("xori", _cmp("slt", r, zero), _cmp("slt", B, zero))
    fix = _logic("andi", _cmp("ne", r, zero), signs)
    return _select(fix, _emit_binary("arith.addi", r, B, dt, shape), r)


def _shift(op, A, B, dt, shape, known):
    """`<<` and `>>` as NumPy: the amount is compared as unsigned with the
    bit width; beyond it `<<` gives 0 and `>>` the sign (0 or -1)."""
    width = dt.bits
    name = _arith_name(op, dt)
    arithmetic = op == "rshift" and dt.signed
    if known is not None:
        if known & ((1 << width) - 1) < width:
            return _emit_binary(name, A, B, dt, shape)
        if arithmetic:
            return _emit_binary(name, A, materialize(width - 1, dt, shape), dt, shape)
        return materialize(0, dt, shape)
    amount = _emit_binary("arith.minui", B, materialize(width - 1, dt, shape), dt, shape)
    shifted = _emit_binary(name, A, amount, dt, shape)
    if arithmetic:  # by width - 1: the sign
        return shifted
    in_range = _cmp("ult", B, materialize(width, dt, shape))
    return _select(in_range, shifted, materialize(0, dt, shape))


def _float_divmod(op, A, B, dt, shape):
    """Float `//` and `%` as NumPy's npy_divmod (Python's divmod): the
    quotient (a - fmod(a, b)) / b snapped to the integer it should be,
    the remainder with the divisor's sign. Halves and fp8 compute in f32 and
    round once, as NumPy does for float16."""
    if dt.bits < 32:
        out = _float_divmod(op, cast(A, D.float32), cast(B, D.float32), D.float32, shape)
        return cast(out, dt)

    def f(x):
        return materialize(x, dt, shape)

    def arith(name, x, y):
        return _emit_binary(f"arith.{name}", x, y, dt, shape)

    mod = arith("remf", A, B)
    mod_nonzero = _cmp("une", mod, f(0.0))  # NaN counts as nonzero, as in C
    signs = _logic("xori", _cmp("olt", B, f(0.0)), _cmp("olt", mod, f(0.0)))
    fix = _logic("andi", mod_nonzero, signs)
    if op == "mod":
        fixed = _select(fix, arith("addf", mod, B), mod)
        return _select(mod_nonzero, fixed, _copysign(f(0.0), B))
    div = _exact_quotient(arith("subf", A, mod), B, dt, shape)
    div = _select(fix, arith("subf", div, f(1.0)), div)
    floor = _unary_math("floor", div)
    round_up = _cmp("ogt", arith("subf", div, floor), f(0.5))
    snapped = _select(round_up, arith("addf", floor, f(1.0)), floor)
    quotient = arith("divf", A, B)
    q = _select(_cmp("une", div, f(0.0)), snapped, _copysign(f(0.0), quotient))
    return _select(_cmp("oeq", B, f(0.0)), quotient, q)  # x // 0 is x / 0


def _exact_quotient(A, B, dt, shape):
    """A / B correctly rounded, as npy_divmod's quotient needs: the GPU's f32
    `/` is div.full (within 2 ulp), which moved huge quotients' floors by an
    ulp. An f32 quotient is written f32(f64(A) / f64(B)): a double rounding
    that is exact for division (53 >= 2 * 24 + 2 bits). The CPU runs it as
    written; the GPU lowering makes that form one div.rn.f32
    (RoundedQuotientPattern), since LLVM would narrow it to div.full."""
    if dt.bits != 32:
        return _emit_binary("arith.divf", A, B, dt, shape)
    wide = _emit_binary("arith.divf", cast(A, D.float64), cast(B, D.float64), D.float64, shape)
    return cast(wide, dt)


def _copysign(magnitude, sign):
    name = builder().emit(f"math.copysign {magnitude.name}, {sign.name} : {magnitude.type}")
    return _like(magnitude, name, magnitude.dtype)


_CMPF = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_CMPI_S = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_CMPI_U = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}
_PYCMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
          "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


def compare(op, a, b):
    """Elementwise comparison; gives a bool (i1) tile or scalar."""
    a, b = as_operand(a), as_operand(b)
    if not isinstance(a, Value) and not isinstance(b, Value):
        return _PYCMP[op](a, b)
    dt = common_dtype([a, b])
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    A, B = materialize(a, dt, shape), materialize(b, dt, shape)
    if dt.kind == D.KIND_FLOAT:
        pred, cmp = _CMPF[op], "arith.cmpf"
    else:
        pred = (_CMPI_S if dt.signed and dt.kind == D.KIND_INT else _CMPI_U)[op]
        cmp = "arith.cmpi"
    name = builder().emit(f"{cmp} {pred}, {A.name}, {B.name} : {A.type}")
    return _like(A, name, D.bool_)


def negate(v):
    v = as_operand(v)
    if not isinstance(v, Value):
        return -v
    if v.dtype.kind == D.KIND_FLOAT:
        return _like(v, builder().emit(f"arith.negf {v.name} : {v.type}"), v.dtype)
    if v.dtype.kind == D.KIND_BOOL:
        v = cast(v, D.int32)
    return binary("sub", 0, v)


def invert(v):
    v = as_operand(v)
    if not isinstance(v, Value):
        return ~v
    if v.dtype.kind == D.KIND_FLOAT:
        raise TileTypeError("`~` needs an integer or bool operand, got " + v.dtype.name,
                            "for a logical not of a comparison use `~(a < b)` on the "
                            "comparison itself, or `x == 0`")
    ones = materialize(True if v.dtype.kind == D.KIND_BOOL else -1, v.dtype, shape_of(v))
    return _emit_binary("arith.xori", v, ones, v.dtype, shape_of(v))


def _unary_math(fn, v):
    """`math.<fn>` on a float value."""
    return _like(v, builder().emit(f"math.{fn} {v.name} : {v.type}"), v.dtype)


def float_operand(x, what):
    """A float value for a math function: ints and bools become float32."""
    x = as_operand(x, what)
    if not isinstance(x, Value):
        return x
    if x.dtype.kind != D.KIND_FLOAT:
        x = cast(x, D.float32)
    return x


def power(a, b):
    """`a ** b`: repeated multiplication for small constant integer
    exponents, math.powf or squaring over the exponent's bits otherwise."""
    a, b = as_operand(a), as_operand(b)
    if not isinstance(a, Value) and not isinstance(b, Value):
        return a ** b
    if isinstance(b, float) and b.is_integer() and abs(b) <= 64:
        if isinstance(a, Value) and a.dtype.kind == D.KIND_FLOAT:
            b = int(b)
    if isinstance(a, Value) and isinstance(b, int) and not isinstance(b, bool) \
            and abs(b) <= 64:
        if a.dtype.kind == D.KIND_BOOL:
            a = cast(a, D.int32)
        if b < 0:
            a = float_operand(a, "base")
            return binary("truediv", 1, power(a, -b))
        if b == 0:
            return materialize(1, a.dtype, shape_of(a))
        result, base = None, a
        while b:  # exponentiation by squaring
            if b & 1:
                result = base if result is None else binary("mul", result, base)
            b >>= 1
            if b:
                base = binary("mul", base, base)
        return result
    dt = common_dtype([a, b])
    shape = broadcast_shapes(shape_of(a), shape_of(b))
    if dt.kind == D.KIND_BOOL:
        dt = D.int32
    A, B = materialize(a, dt, shape), materialize(b, dt, shape)
    if dt.kind != D.KIND_FLOAT:
        return _integer_power(A, B, dt, shape)
    return _emit_binary("math.powf", A, B, dt, shape)


def _integer_power(A, B, dt, shape):
    """`A ** B` on integers by squaring over every bit of B, wrapping as NumPy
    does. Not math.ipowi: the GPU has no lowering of it. A negative exponent
    gives 1 for a base of 1, +-1 for -1 and 0 otherwise (1 / A**-B in integers,
    with 1 // 0 = 0 as everywhere in tile)."""
    b = builder()
    t = A.type
    bt = "i1" if shape is None else tensor_type(shape, "i1")
    sel_type = t if shape is None else f"{bt}, {t}"

    def select(c, x, y):
        return _like(A, b.emit(f"arith.select {c}, {x.name}, {y.name} : {sel_type}"), dt)

    def bit_set(k):
        shifted = _emit_binary("arith.shrui", B, materialize(k, dt, shape), dt, shape)
        low = _emit_binary("arith.andi", shifted, materialize(1, dt, shape), dt, shape)
        return b.emit(f"arith.cmpi ne, {low.name}, {materialize(0, dt, shape).name} : {t}")

    one = materialize(1, dt, shape)
    result, base = one, A
    width = dt.bits
    for k in range(width):
        result = select(bit_set(k), _emit_binary("arith.muli", result, base, dt, shape), result)
        if k + 1 < width:
            base = _emit_binary("arith.muli", base, base, dt, shape)
    if not dt.signed or dt.kind == D.KIND_BOOL:
        return result
    zero = materialize(0, dt, shape)
    minus_one = materialize(-1, dt, shape)
    negative = b.emit(f"arith.cmpi slt, {B.name}, {zero.name} : {t}")
    is_one = b.emit(f"arith.cmpi eq, {A.name}, {one.name} : {t}")
    is_minus_one = b.emit(f"arith.cmpi eq, {A.name}, {minus_one.name} : {t}")
    sign = select(bit_set(0), minus_one, one)
    reciprocal = select(is_one, one, select(is_minus_one, sign, zero))
    return select(negative, reciprocal, result)


def to_i32_scalar(x, what):
    """A runtime i32 Scalar from an int, Scalar or rank-0 tile."""
    x = as_operand(x, what)
    if isinstance(x, bool) or isinstance(x, float):
        raise TileTypeError(f"{what} must be an integer, got {x!r}")
    if isinstance(x, int):
        return constant(x, D.int32)
    if isinstance(x, Tile):
        if x.shape != ():
            raise TileTypeError(f"{what} must be a scalar, got a tile of shape {x.shape}")
        name = builder().emit(f"tensor.extract {x.name}[] : {x.type}")
        x = Scalar(name, x.dtype)
    if x.dtype.kind == D.KIND_FLOAT:
        raise TileTypeError(f"{what} must be an integer, got a {x.dtype.name} value",
                            "convert with .astype(tile.int32)")
    return cast(x, D.int32) if x.dtype is not D.int32 else x
