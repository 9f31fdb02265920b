"""tilec: compile one kernel and print (or write) its IR at every stage.

    tilec examples/softmax.py::softmax --args "f32[128,781], f32[128,781]" \\
          -D BLOCK=1024 --emit fused --target sm_90
    tilec softmax.mapped.mlir --emit ptx          # resume from a dump
    tilec /tmp/tile-softmax-gpu-1234.mlir --emit gpu --target sm_90  # a reproducer

A Python input is traced for an abstract signature (`--args`, see
`parse_signature`; no memory is allocated), then compiled by `_tile.compile`
exactly as a launch would compile it. An MLIR input (hand-written, a
TILE_DUMP_DIR dump, or a reproducer) resumes the pipeline after the stage it
is at. `docs/debugging.md` walks through it.
"""

import argparse
import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import backend as _backend
from . import dtypes as D
from .errors import TileError, replay_command
from .hints import check_hints, for_target, with_target_hints

__all__ = ["main", "parse_signature", "AbstractArray", "STAGES", "detect_stage"]

# The stages of each pipeline, in order (compiler/Driver.cpp records them).
# "llvm" is the LLVM dialect on the CPU and LLVM IR text on GPUs; the CPU's
# LLVM IR text is "llvm-ir".
STAGES = {
    "cpu": ("tile", "fused", "host", "bufferized", "llvm", "llvm-ir"),
    "gpu": ("tile", "fused", "tiled", "mapped", "pipelined", "gpu", "nvvm", "llvm", "ptx",
            "cubin", "sass"),
}
TARGETS = ("cpu", "sm_80", "sm_90")
# The stages whose IR is MLIR, which tilec can resume from.
MLIR_STAGES = {"cpu": STAGES["cpu"][:5], "gpu": STAGES["gpu"][:7]}


class UsageError(Exception):
    """A bad command line: printed with the usage, exit status 2."""


class BadInput(Exception):
    """An input file tilec cannot read (not UTF-8, not Python): exit status 1."""


def stages_of(target):
    return STAGES["cpu" if target == "cpu" else "gpu"]


# -- abstract signatures -------------------------------------------------------

class AbstractArray:
    """An array that only describes itself: dtype, shape, strides (elements)
    and whether its base is 16-byte aligned. It exposes
    `__cuda_array_interface__` with a fake pointer, which is all tracing
    reads; it must never be launched."""

    def __init__(self, dtype, shape, strides=None, aligned=True):
        self.dtype = D.to_dtype(dtype)
        if self.dtype is None:
            raise UsageError(f"unknown dtype {dtype!r}")
        self.shape = tuple(int(n) for n in shape)
        if strides is None:
            strides, acc = [], 1
            for n in reversed(self.shape):
                strides.append(acc)
                acc *= max(n, 1)
            strides.reverse()
        self.strides = tuple(int(s) for s in strides)
        if len(self.strides) != len(self.shape):
            raise UsageError(f"{len(self.shape)} extents but {len(self.strides)} strides")
        self.aligned = aligned

    @property
    def __cuda_array_interface__(self):
        size = self.dtype.itemsize
        # A fake base: 16-byte aligned, or one element past that (no dtype
        # has 16-byte elements).
        ptr = 1 << 16 if self.aligned else (1 << 16) + size
        return {"shape": self.shape, "typestr": _typestr(self.dtype),
                "strides": tuple(s * size for s in self.strides),
                "data": (ptr, False), "version": 3}

    def __repr__(self):
        text = f"{self.dtype.name}[{','.join(map(str, self.shape))}]"
        return text + f" strides=[{','.join(map(str, self.strides))}]" + \
            ("" if self.aligned else f" align={self.dtype.itemsize}")


def _typestr(dt):
    """A typestr NumPy reads back as `dt` (or, for dtypes NumPy lacks, the
    dtype's name, which the interop falls back to)."""
    np_names = {"bool_": "|b1", "int8": "|i1", "int16": "<i2", "int32": "<i4",
                "int64": "<i8", "uint8": "|u1", "uint16": "<u2", "uint32": "<u4",
                "uint64": "<u8", "float16": "<f2", "float32": "<f4", "float64": "<f8"}
    return np_names.get(dt.name, dt.name)


def _split_top(text, sep=","):
    """Splits at `sep` outside brackets."""
    parts, depth, cur = [], 0, ""
    for c in text:
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        if c == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return [p.strip() for p in parts]


_ARRAY = re.compile(r"^(?P<dtype>[A-Za-z_][A-Za-z0-9_]*)\s*\[(?P<shape>[^\]]*)\]\s*(?P<rest>.*)$")
_SCALARS = {"i32": 3, "int32": 3, "int": 3, "i64": (1 << 33) + 3, "int64": (1 << 33) + 3,
            "f32": 0.5, "float32": 0.5, "float": 0.5, "bool": True}


def _ints(text, what):
    text = text.strip().strip("[]()")
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"bad {what} {text!r}: expected integers") from None


def parse_argument(text):
    """One abstract argument:

      f16[4096,1024]                      a contiguous, 16-byte aligned array
      f32[64,64] strides=[1,64]           strides in elements (a transpose)
      f32[1000] align=4                   a base aligned to 4 bytes only
      i32 | i64 | f32 | bool              a runtime scalar
      i32 div=16 | i64 div=16             an int known divisible by 16
      4096 | 1 | 0.5 | True               a scalar of that value (an int equal
                                          to 1 is specialized away, as at a
                                          launch)
    """
    m = _ARRAY.match(text)
    if m:
        shape = _ints(m.group("shape"), "shape")
        strides, aligned = None, True
        for opt in m.group("rest").split():
            key, _, val = opt.partition("=")
            if key == "strides":
                strides = _ints(val, "strides")
            elif key == "align":
                try:
                    aligned = int(val) % 16 == 0
                except ValueError:
                    raise UsageError(f"bad align {val!r}") from None
            else:
                raise UsageError(f"unknown array option {opt!r} in {text!r} "
                                 "(use strides=[..] and align=N)")
        return AbstractArray(m.group("dtype"), shape, strides, aligned)
    words = text.split()
    if not words:
        raise UsageError("an empty argument in --args")
    if words[0] in _SCALARS:
        value = _SCALARS[words[0]]
        for opt in words[1:]:
            if opt == "div=16" and isinstance(value, int) and value is not True:
                value = value - 3 + 16  # a multiple of 16 (16 or 2**33 + 16)
            else:
                raise UsageError(f"unknown scalar option {opt!r} in {text!r}")
        return value
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, (bool, int, float)):
        return value
    raise UsageError(f"cannot read the argument {text!r}: expected e.g. f16[4096,1024], "
                     "i32, f32, bool, i32 div=16 or a number")


def parse_signature(text):
    """The abstract arguments of `--args`, split at top-level commas."""
    if not text or not text.strip():
        return []
    return [parse_argument(p) for p in _split_top(text)]


def parse_constant(text):
    """`-D NAME=VALUE`: a Python literal, a tile dtype name, or a string."""
    name, eq, value = text.partition("=")
    if not eq or not name.strip().isidentifier():
        raise UsageError(f"-D expects NAME=VALUE, got {text!r}")
    value = value.strip()
    try:
        return name.strip(), ast.literal_eval(value)
    except (ValueError, SyntaxError):
        dt = D.to_dtype(value)
        return name.strip(), dt if dt is not None else value


# -- MLIR inputs: where do they resume? -----------------------------------------

_REPRO = re.compile(r"^// tile reproducer: the input of stage '(?P<stage>[^']+)'")
_REPLAY_TARGET = re.compile(r"^// Replay: tilec .* --target (?P<target>\S+)", re.MULTILINE)


def _is_mlir(stage, target):
    return stage in MLIR_STAGES["cpu" if target == "cpu" else "gpu"]


def detect_stage(text):
    """(stage the IR is at, target it implies or None). A reproducer says
    which stage failed on it; other IR is recognized by what it holds."""
    first = text.lstrip().split("\n", 1)[0]
    m = _REPRO.match(first)
    if m:
        failed = m.group("stage")
        t = _REPLAY_TARGET.search(text)
        target = t.group("target") if t else None
        gpu = failed in STAGES["gpu"] and failed not in STAGES["cpu"]
        t = target or ("sm_90" if gpu else "cpu")
        order = stages_of(t)
        # It holds the IR of the last MLIR stage before the one that failed
        # (a failure in llvm, ptx or cubin reproduces from nvvm).
        before = [s for s in order[:order.index(failed)] if _is_mlir(s, t)] \
            if failed in order else []
        return (before[-1] if before else "tile"), target
    # Comments (a lit test's CHECK lines) name what the IR may not hold.
    text = "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("//"))
    if "gpu.module" in text:
        if "gpu.func" in text:
            return "gpu", "sm_90"
        return "nvvm", "sm_90"
    if "tilegpu." in text:  # tile-pipeline-mma's rings and copies
        return "pipelined", "sm_90"
    if any(layout in text for layout in ("#tile.blocked", "#blocked", "#tile.mma<", "#mma")):
        return "mapped", "sm_90"
    if "tile.num_warps" in text:  # tile-tiling records it; layouts come later
        return "tiled", "sm_90"
    if "tile.grid" in text:  # the CPU kernel's block-id arguments
        if "llvm.func" in text:
            return "llvm", "cpu"
        return ("host" if "tensor<" in text else "bufferized"), "cpu"
    return "tile", None


# -- compiling -----------------------------------------------------------------

def _read_mlir(path):
    """The text of an MLIR input ('-': stdin), which must be UTF-8."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        name = "<stdin>" if path == "-" else path
        raise BadInput(f"{name}:{line}:{column}: byte 0x{data[e.start]:02x} is not UTF-8 "
                       "text: tilec reads MLIR as UTF-8") from None


def _load_python(path, name):
    """The tile.Kernel `name` of the Python file (the only one if not named)."""
    from .kernel import Kernel
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)  # its own imports, as `python FILE.py`
    modname = "__tilec__." + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:  # a traceback into importlib would say nothing more
        where = f"{e.filename or path}:{e.lineno}" if e.lineno else (e.filename or path)
        raise BadInput(f"{where}: {type(e).__name__}: {e.msg}") from None
    kernels = {k: v for k, v in vars(module).items() if isinstance(v, Kernel)}
    if name:
        kern = getattr(module, name, None)
        if not isinstance(kern, Kernel):
            raise UsageError(f"{path} has no @tile.kernel named {name!r} (kernels: "
                             f"{', '.join(sorted(kernels)) or 'none'})")
        return kern
    if len(kernels) != 1:
        raise UsageError(f"{path} defines {len(kernels)} kernels "
                         f"({', '.join(sorted(kernels)) or 'none'}): "
                         f"name one as {path}::KERNEL")
    return next(iter(kernels.values()))


def _options(args, num_warps, opt_level, skip, num_stages):
    from .backend import compile_options
    return {**compile_options(num_warps, opt_level, num_stages), "always_compile": True,
            "print_ir_after_all": args.print_ir_after_all,
            "time_passes": args.time_passes,
            "print_debuginfo": args.mlir_print_debuginfo,
            "skip_stages": list(skip)}


class CompileFailed(Exception):
    """A compile error, already formatted for the terminal."""


def _compile(mod, ir_text, target, options, kern=None, path=None):
    """`_tile.compile` with the cubin cache bypassed: the passes must run for
    the debugging options to print anything. `path`: the MLIR file the IR
    came from, which parse errors name."""
    os.environ["TILE_ALWAYS_COMPILE"] = "1"
    try:
        return mod.compile(ir_text, target, options)
    except Exception as e:
        if type(e).__name__ != "CompileError":
            raise
        if kern is not None:
            raise CompileFailed(str(kern._compile_error(e, target))) from None
        diags = str(e).strip()
        if path:  # "<tile ir>" is the buffer parsed from the file, at every stage
            diags = diags.replace("<tile ir>:", f"{path}:")
        msg = f"compilation failed in stage '{getattr(e, 'stage', '?')}':\n{diags}"
        repro = getattr(e, "reproducer", "") or ""
        if repro:
            replay = replay_command(repro, getattr(e, "stage", ""), target)
            msg += f"\n  reproducer: {repro}\n  replay it: {replay}"
        raise CompileFailed(msg) from None


def _disassembler():
    """The command that prints a cubin's SASS: nvdisasm (-c: code only, -g:
    one label per basic block) or cuobjdump -sass, from PATH or the CUDA
    toolkit; None when neither is here (the build machine has ptxas only)."""
    dirs = [os.environ.get("PATH", "")]
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home:
            dirs.append(os.path.join(home, "bin"))
    search = os.pathsep.join(dirs)
    for tool, flags in (("nvdisasm", ["-c", "-g"]), ("cuobjdump", ["-sass"])):
        found = shutil.which(tool, path=search)
        if found:
            return [found, *flags]
    return None


def _disassemble(cubin):
    """The SASS of `cubin` (bytes), as the disassembler prints it."""
    command = _disassembler()
    if command is None:
        raise CompileFailed("--emit sass needs nvdisasm or cuobjdump on PATH or in "
                            "$CUDA_HOME/bin; PyPI has nvdisasm as a wheel "
                            "(pip download --no-deps nvidia-cuda-nvdisasm; see "
                            "docs/debugging.md, section 8)")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        r = subprocess.run([*command, path], capture_output=True, text=True)
    if r.returncode != 0:
        raise CompileFailed(f"{os.path.basename(command[0])} failed:\n{r.stderr.strip()}")
    return r.stdout


def _extension(stage, text):
    if stage in ("ptx", "cubin", "sass"):
        return stage
    if isinstance(text, str) and (text.startswith("; ModuleID") or stage == "llvm-ir"):
        return "ll"
    return "mlir"


def _emit_names(emit):
    names = [s.strip() for s in emit.split(",") if s.strip()]
    if not names:
        raise UsageError("--emit needs a stage")
    return names


def _pick_target(args, implied):
    """--target, else the input's own, else sm_90 when only GPUs have the
    stages asked for, else the backend a launch would use here."""
    if args.target:
        return args.target
    if implied:
        return implied
    names = _emit_names(args.emit)
    if any(n in STAGES["gpu"] and n not in STAGES["cpu"] for n in names):
        return "sm_90"
    return _default_target()


def _requested(emit, target, start):
    """The stages `--emit` names, in pipeline order, checked against the
    target and the stage the input starts at."""
    order = stages_of(target)
    names = _emit_names(emit)
    avail = order[order.index(start):]
    if "all" in names:  # SASS only where a disassembler is
        return [n for n in avail if n != "sass" or _disassembler() is not None]
    out = []
    for n in names:
        if n not in order:
            other = [t for t in TARGETS if n in stages_of(t)]
            why = f" ('{n}' is a stage of {' and '.join(other)})" if other else ""
            raise UsageError(f"target {target} has no stage '{n}'{why}; the stages of "
                             f"{target}: {', '.join(order)}, or all")
        if n not in avail:
            raise UsageError(f"the input is already at stage '{start}'; --emit one of "
                             f"{', '.join(avail)}, or all")
        out.append(n)
    return sorted(set(out), key=order.index)


def _emit(kernel_name, asm, stages, outdir, out):
    """Prints the stages (with a header each when there are several) or
    writes DIR/<kernel>.<stage>.<ext>; returns the paths written."""
    written = []
    if outdir:
        os.makedirs(outdir, exist_ok=True)
    for stage in stages:
        if stage not in asm:
            raise CompileFailed(f"the compiler recorded no stage '{stage}' "
                                f"(recorded: {', '.join(asm)})")
        text = asm[stage]
        if outdir:
            # As compiler/Driver.cpp names dumps: the name is the input's, and
            # "../../x" must not write outside DIR.
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", kernel_name[:128]) or "_"
            safe = "_" + safe if safe.startswith(".") else safe
            path = os.path.join(outdir, f"{safe}.{stage}.{_extension(stage, text)}")
            with open(path, "wb") as f:
                f.write(text if isinstance(text, bytes) else text.encode())
            written.append(path)
            continue
        if len(stages) > 1:
            c = ";" if _extension(stage, text) == "ll" else "//"
            out.write(f"{c} ===== {kernel_name}: stage '{stage}' =====\n")
        if isinstance(text, bytes):
            if len(stages) > 1:  # no binary amid text
                out.write(f"// {len(text)} bytes of ELF: write them with -o DIR\n")
            elif out.isatty():
                raise UsageError("cubin is binary: write it with -o DIR, or redirect stdout")
            else:
                out.flush()
                out.buffer.write(text)
            continue
        out.write(text if text.endswith("\n") else text + "\n")
    return written


def _parser():
    p = argparse.ArgumentParser(
        prog="tilec",
        description="Compile one tile kernel and print (or write) its IR at any stage.",
        epilog="Stages: cpu: " + ", ".join(STAGES["cpu"]) + "; sm_80/sm_90: " +
               ", ".join(STAGES["gpu"]) + ". See docs/debugging.md.")
    p.add_argument("input", nargs="?",
                   help="FILE.py::KERNEL (traced for --args), or FILE.mlir (tile IR, a "
                        "dump of a later stage, or a reproducer); '-' reads MLIR from stdin")
    p.add_argument("--args", default="", metavar="SIG",
                   help='abstract arguments, e.g. "f16[4096,1024], f16[4096,1024], i32"; '
                        "arrays take strides=[..] and align=N, ints div=16")
    p.add_argument("-D", dest="constants", action="append", default=[],
                   metavar="NAME=VALUE", help="a tile.Constant parameter")
    p.add_argument("--emit", default="tile",
                   help="stage(s) to print, comma-separated, or all (default: tile)")
    p.add_argument("-o", dest="outdir", metavar="DIR",
                   help="write DIR/<kernel>.<stage>.<ext> instead of printing")
    p.add_argument("--target", choices=TARGETS,
                   help="default: an MLIR input's own target when it implies one, else "
                        "sm_90 for GPU-only stages (tiled, mapped, pipelined, gpu, nvvm, ptx, "
                        "cubin), else "
                        "the backend a launch would use here")
    p.add_argument("--num-warps", type=int, default=None,
                   help="warps per block (GPU; default: the kernel's, else chosen)")
    p.add_argument("--opt-level", type=int, default=None, help="default: the kernel's (3)")
    p.add_argument("--num-stages", type=int, default=None, metavar="N",
                   help="slots of an mma loop's ring (default: the kernel's num_stages, "
                        "else 0: the compiler chooses)")
    p.add_argument("--num-ctas", type=_cluster_size, default=None, metavar="N",
                   help="thread-block clusters of N (cuTile's num_ctas hint; a Python "
                        "kernel's own hint otherwise)")
    p.add_argument("--ws-registers", type=_register_split, default=None, metavar="P,C",
                   help="registers per thread of a warp-specialized kernel's producer and "
                        "consumer warpgroups (default: the kernel's ws_registers, else "
                        "40,232)")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="print the IR after every pass to stderr (as mlir-opt)")
    p.add_argument("--time-passes", action="store_true",
                   help="print pass timings to stderr, one report per stage")
    p.add_argument("--mlir-print-debuginfo", action="store_true",
                   help="print locations in MLIR stages; line info (.loc) in LLVM IR/PTX")
    p.add_argument("--list-stages", action="store_true",
                   help="print the stages of --target and exit")
    return p


def _cluster_size(text):
    """--num-ctas N, checked as the num_ctas hint is."""
    try:
        check_hints({"num_ctas": int(text)})
    except (ValueError, TileError):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a power of two from 1 to 16") from None
    return int(text)


def _register_split(text):
    """--ws-registers P,C as (P, C), checked as TILE_WS_REGISTERS is."""
    split = _backend.parse_register_split(text)
    if split is None:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected P,C, two multiples of 8 from 24 to 256 (e.g. 24,240)")
    return split


def _default_target():
    try:
        return _backend.target_for(_backend.default_backend())
    except TileError:
        return "cpu"


def run(argv=None, out=None):
    """tilec's work; returns the exit status."""
    out = out or sys.stdout
    args = _parser().parse_args(argv)
    if args.list_stages:
        out.write(" ".join(stages_of(args.target or _default_target())) + "\n")
        return 0
    if not args.input:
        raise UsageError("no input: give FILE.py::KERNEL or FILE.mlir (see --help)")
    mod = _backend.require("tilec")
    path, _, kname = args.input.partition("::")
    if path.endswith(".py"):
        kern = _load_python(path, kname)
        if args.num_ctas is not None:
            kern = kern.replace_hints(num_ctas=args.num_ctas)
        constants = dict(parse_constant(c) for c in args.constants)
        ir_text = kern.trace(*parse_signature(args.args), **constants)
        target = _pick_target(args, None)
        start, skip = "tile", ()
        num_warps = kern.num_warps if args.num_warps is None else args.num_warps
        opt_level = for_target(kern.opt_level, target, 3) if args.opt_level is None \
            else args.opt_level
        # @tile.kernel(occupancy=..., num_ctas=...), as a launch compiles
        ir_text = with_target_hints(ir_text, kern.hints, target)
    else:
        if args.args or args.constants or args.num_ctas is not None:
            raise UsageError("--args, -D and --num-ctas apply to a Python kernel "
                             "(FILE.py::KERNEL); an MLIR kernel carries tile.num_ctas")
        if kname:
            raise UsageError("FILE::KERNEL is for Python files; an MLIR file holds one kernel")
        if path.endswith((".ll", ".ptx", ".cubin")):
            raise UsageError(f"{path}: tilec resumes from MLIR only (LLVM IR and PTX go "
                             "to llc/ptxas directly)")
        kern = None
        ir_text = _read_mlir(path)
        start, implied = detect_stage(ir_text)
        target = _pick_target(args, implied)
        if implied and (implied == "cpu") != (target == "cpu"):
            raise UsageError(f"the input is at stage '{start}' of the "
                             f"{'CPU' if implied == 'cpu' else 'GPU'} pipeline; it cannot "
                             f"be compiled for --target {target}")
        order = stages_of(target)
        skip = order[:order.index(start) + 1] if start != "tile" else ()
        num_warps = args.num_warps or 0
        opt_level = 3 if args.opt_level is None else args.opt_level
    stages = _requested(args.emit, target, start)
    # The kernel's num_stages, ws_registers, defer_mma_waits and
    # tied_wgmma_fence hints apply, as a launch compiles.
    num_stages = args.num_stages
    if num_stages is None:
        num_stages = (kern.num_stages if kern is not None else None) or 0
    options = _options(args, num_warps, opt_level, skip, num_stages)
    if kern is not None:
        options.update(kern.codegen_hint_options())
    if args.ws_registers is not None:
        options["ws_registers"] = args.ws_registers
    binary = _compile(mod, ir_text, target, options, kern,
                      None if kern is not None else ("<stdin>" if path == "-" else path))
    asm = dict(binary.asm)
    if kern is not None:
        asm.setdefault("tile", ir_text)
    if "sass" in stages and "cubin" in asm:
        asm["sass"] = _disassemble(asm["cubin"])
    for path in _emit(binary.name, asm, stages, args.outdir, out):
        print(path, file=sys.stderr)
    return 0


def main(argv=None):
    """The `tilec` console script."""
    try:
        return run(argv)
    except UsageError as e:
        print(f"tilec: error: {e}", file=sys.stderr)
        return 2
    except (CompileFailed, TileError, BadInput) as e:
        print(f"tilec: error: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except OSError as e:
        print(f"tilec: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
