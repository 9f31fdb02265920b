"""tile: a tile-based GPU kernel language, traced to MLIR.

    import tile

    @tile.kernel
    def vadd(x, y, out, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        b = tile.load(y, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=a + b)

    vadd[(tile.cdiv(n, 1024),)](x, y, out, BLOCK=1024)

The C++ module `tile._tile` is loaded lazily, so `import tile` works
without it and without a GPU.
"""

from .dtypes import (DType, bfloat16, bool_, float8_e4m3fn, float8_e5m2, float16,
                     float32, float64, int8, int16, int32, int64, uint8, uint16,
                     uint32, uint64)
from .errors import (TileCompileError, TileCompilerExecutionError, TileCompilerTimeoutError,
                     TileError, TileInternalError, TileLaunchError, TileRecursionError,
                     TileShapeError, TileStaticAssertionError, TileStaticEvalError,
                     TileSyntaxError, TileTypeError, TileUnsupportedFeatureError,
                     TileValueError)
from .kernel import CompiledKernel, Kernel, kernel, launch
from .language import (Array, Constant, Scalar, Tile, broadcast_to, constexpr,
                       expand_dims, permute, reshape)
from .loops import range, static_iter
from .memory import (atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min,
                     atomic_or, atomic_xchg, atomic_xor, gather, load, scatter, store)
from .ops import (abs, arange, bid, cdiv, ceil, cos, device_assert, device_print, erf,
                  fma, floor, full, inf, log, log2, nan, num_blocks, ones, sigmoid, sin,
                  where, zeros)
from .reduce import (argmax, argmin, cumprod, cumsum, matmul, max, min, mma, prod,
                     reduce, scan, sum)

# cuTile's names (issue 16, docs/cutile.md); named.py's exp, exp2, sqrt, rsqrt,
# tanh, maximum, minimum and astype wrap ops' with cuTile's keywords.
from .annotations import (ArrayAnnotation, ConstantAnnotation, IndexedWithInt64,  # noqa: E402
                          ListAnnotation, ScalarAnnotation, ScalarInt64)
from .debug import assert_, print, printf  # noqa: E402
from .dtypes import float4_e2m1fn, float8_e5m3fnu, float8_e8m0fnu  # noqa: E402
from .named import (RoundingMode, add, astype, atan2, bitwise_and, bitwise_lshift,  # noqa: E402
                    bitwise_not, bitwise_or, bitwise_rshift, bitwise_xor, cosh, divmod,
                    equal, exp, exp2, floordiv, greater, greater_equal, isnan, less,
                    less_equal, maximum, minimum, mma_scaled, mod, mul, negative,
                    not_equal, pow, rsqrt, sinh, sqrt, sub, tan, tanh, truediv)
from .static import ensure_constant, static_assert, static_eval  # noqa: E402

# cuTile's memory names (issue 16): padding and memory-model enums, views,
# advanced indexing (memory_model.py, views.py)
from .memory import num_tiles  # noqa: E402
from .memory_model import MemoryOrder, MemoryScope, PaddingMode  # noqa: E402
from .views import (RawArrayMemory, Slice, TiledView, assume_divisible_by,  # noqa: E402
                    load_advanced_indexing, store_advanced_indexing)

# cuTile's tile ops (issue 16): subtiles, concatenation, bits, tfloat32
from .dtypes import tfloat32  # noqa: E402
from .shapes import (astile, bitcast, cat, extract, insert, pack_to_bytes,  # noqa: E402
                     transpose, unpack_from_bytes)

# cuTile's kernel hints and launch names (issue 16): hints.py, tune.py, compilation.py
from . import compilation, tune  # noqa: E402
from .hints import (ByTarget, compiler_timeout, function,  # noqa: E402
                    grid_dependency_control_launch_dependents, grid_dependency_control_wait)

# Autotuning (issue 18): autotune.py, autotune_configs.py, tune.py
from . import autotune_configs  # noqa: E402
from .autotune import Config, autotune  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    # kernels
    "kernel", "launch", "Kernel", "CompiledKernel", "Constant", "constexpr", "range", "static_iter",
    "cdiv", "default_backend",
    # values and dtypes
    "Tile", "Scalar", "Array", "DType", "bool_", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16", "float32", "float64",
    "float8_e4m3fn", "float8_e5m2", "inf", "nan",
    # blocks, creation, memory
    "bid", "num_blocks", "zeros", "ones", "full", "arange", "load", "store", "gather",
    "scatter", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas",
    "atomic_and", "atomic_or", "atomic_xor",
    # elementwise
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "sigmoid",
    "abs", "floor", "ceil", "maximum", "minimum", "where", "fma", "astype",
    # shapes, reductions, products
    "expand_dims", "broadcast_to", "reshape", "permute", "transpose", "sum", "max", "min",
    "prod", "argmax", "argmin", "cumsum", "cumprod", "reduce", "scan", "mma", "matmul",
    # debugging and errors
    "device_print", "device_assert", "TileError", "TileTypeError", "TileShapeError",
    "TileCompileError", "TileLaunchError", "TileValueError", "TileSyntaxError",
    "TileStaticAssertionError", "TileStaticEvalError", "TileUnsupportedFeatureError",
    "TileRecursionError", "TileInternalError", "TileCompilerExecutionError",
    "TileCompilerTimeoutError",
    # cuTile's names: named arithmetic, comparisons, math, hints, static checks, printing
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "divmod", "negative",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_lshift",
    "bitwise_rshift", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "tan", "sinh", "cosh", "atan2", "isnan", "RoundingMode", "mma_scaled",
    "float4_e2m1fn", "float8_e8m0fnu", "float8_e5m3fnu", "static_eval", "static_assert",
    "ensure_constant", "printf", "print", "assert_", "ArrayAnnotation", "ConstantAnnotation",
    "ScalarAnnotation", "ListAnnotation", "IndexedWithInt64", "ScalarInt64",
]


__all__ += ["PaddingMode", "MemoryOrder", "MemoryScope", "num_tiles", "TiledView", "Slice",
            "RawArrayMemory", "load_advanced_indexing", "store_advanced_indexing",
            "assume_divisible_by"]

__all__ += ["extract", "insert", "cat", "astile", "bitcast", "pack_to_bytes",
            "unpack_from_bytes", "tfloat32"]


__all__ += ["autotune", "Config", "autotune_configs"]

__all__ += ["ByTarget", "function", "compiler_timeout", "compilation", "tune",
            "grid_dependency_control_wait", "grid_dependency_control_launch_dependents"]


def default_backend():
    """The backend kernels run on by default: "cuda" or "cpu"."""
    from .backend import default_backend as _default
    return _default()


def __getattr__(name):
    if name == "_tile":  # `from tile import _tile`, found lazily
        from .backend import load
        mod = load()
        if mod is None:
            raise ImportError("tile._tile is not built")
        return mod
    raise AttributeError(f"module 'tile' has no attribute {name!r}")
