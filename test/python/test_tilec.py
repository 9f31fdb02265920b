"""tilec: every --emit stage of the examples on each target, MLIR inputs
(hand-written, dumps of later stages, reproducers of failed compiles), the
mlir-opt debugging flags, and TILE_DUMP_DIR end to end.

tilec runs as a user runs it: tools/tilec/tilec (or $TILEC), a subprocess.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from tilehelp import ROOT

import tile
from tile import backend, tilec

TILEC = os.environ.get("TILEC") or os.path.join(ROOT, "tools", "tilec", "tilec")
EXAMPLES = os.path.join(ROOT, "examples")

needs_tile = pytest.mark.skipif(backend.find_module_file() is None,
                                reason="_tile module not built")

# Each example's kernel and a signature for it.
KERNELS = {
    "vector_add": ("vadd", "f32[98432], f32[98432], f32[98432]", ["BLOCK=1024"]),
    "softmax": ("softmax", "f32[128,781], f32[128,781]", ["BLOCK=1024"]),
    "layernorm": ("layernorm", "f32[64,1000], f32[1000], f32[1000], f32[64,1000], "
                  "i32, f32", ["BLOCK=256"]),
    "matmul": ("matmul", "f16[192,200], f16[200,160], f32[192,160], i32",
               ["BM=64", "BN=64", "BK=32"]),
}


def _env(tmp_path, **extra):
    env = dict(os.environ)
    env.pop("TILE_DUMP_DIR", None)
    env["TILE_CACHE_DIR"] = str(tmp_path / "cache")
    env.update(extra)
    return env


def run_tilec(args, tmp_path, ok=True, binary=False, **env):
    r = subprocess.run([TILEC, *args], capture_output=True, text=not binary,
                       env=_env(tmp_path, **env), timeout=300)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def example_args(name):
    kernel, sig, consts = KERNELS[name]
    args = [os.path.join(EXAMPLES, f"{name}.py") + "::" + kernel, "--args", sig]
    for c in consts:
        args += ["-D", c]
    return args


_gpu_ok = None


def gpu_backend():
    """Whether this _tile has the GPU backend and a ptxas to finish with."""
    global _gpu_ok
    if _gpu_ok is None:
        ptxas = [os.environ.get("TILE_PTXAS", ""),
                 os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"),
                 shutil.which("ptxas") or ""]
        try:  # a module without a kernel: only the target check runs
            backend.load().compile("module {}", "sm_90", {})
        except Exception as e:
            _gpu_ok = getattr(e, "stage", "") != "target" and \
                any(p and os.access(p, os.X_OK) for p in ptxas)
    return _gpu_ok


needs_gpu_backend = pytest.mark.skipif(
    backend.find_module_file() is None or not gpu_backend(),
    reason="needs _tile with the GPU backend and ptxas (no GPU needed)")


# -- abstract signatures (no _tile needed) ------------------------------------

def _kernel(name):
    return tilec._load_python(os.path.join(EXAMPLES, f"{name}.py"), "")


def test_signature_specializes_like_a_launch():
    sm = _kernel("softmax")
    ir = sm.trace(*tilec.parse_signature("f16[64,1024] strides=[1,64] align=2, f16[64,1000]"),
                  BLOCK=1024)
    assert "!tile.array<?x?xf16, strides = [1, ?], align = 2, div = 16>" in ir
    assert "!tile.array<?x?xf16, strides = [?, 1], align = 16>" in ir  # 1000 % 16 != 0


def test_signature_scalars():
    ln = _kernel("layernorm")
    x = "f32[64,1000], f32[1000], f32[1000], f32[64,1000]"
    assert "%n_cols: i32," in ln.trace(*tilec.parse_signature(x + ", i32, f32"), BLOCK=256)
    ir = ln.trace(*tilec.parse_signature(x + ", i32 div=16, f32"), BLOCK=256)
    assert "%n_cols: i32 {tile.divisibility = 16 : i32}" in ir
    assert "%n_cols: i64" in ln.trace(*tilec.parse_signature(x + ", i64, f32"), BLOCK=256)
    ir = ln.trace(*tilec.parse_signature(x + ", 1, 0.5"), BLOCK=256)
    assert "%n_cols = arith.constant 1 : i32" in ir  # 1 is specialized, as at a launch


@pytest.mark.parametrize("bad", ["f16[4,4] strides=[1]", "q16[4]", "f16[4] color=red",
                                 "i32 div=3", "hello"])
def test_signature_errors(bad):
    with pytest.raises(tilec.UsageError):
        tilec.parse_signature(bad)


def test_detect_stage():
    assert tilec.detect_stage("module {\n  func.func @k(%a: !tile.array<?xf32>)") == \
        ("tile", None)
    assert tilec.detect_stage("module attributes {tile.num_warps = 4 : i32} {") == \
        ("tiled", "sm_90")
    assert tilec.detect_stage("#blocked = #tile.blocked<{sizePerThread = [4]}>\n"
                              "module attributes {tile.num_warps = 4 : i32} {")[0] == "mapped"
    # tile-pipeline-mma's ops mark its stage.
    assert tilec.detect_stage("#blocked = #tile.blocked<{sizePerThread = [4]}>\n%r = "
                              "tilegpu.alloc_shared {offset = 0 : i64}")[0] == "pipelined"
    assert tilec.detect_stage("gpu.module @m { gpu.func @k() kernel {") == ("gpu", "sm_90")
    assert tilec.detect_stage("gpu.module @m { llvm.func @k() {") == ("nvvm", "sm_90")
    repro = ("// tile reproducer: the input of stage 'gpu' of kernel 'k', which failed.\n"
             "// Replay: tilec /tmp/r.mlir --emit gpu --target sm_80\n")
    assert tilec.detect_stage(repro) == ("pipelined", "sm_80")
    repro = ("// tile reproducer: the input of stage 'bufferized' of kernel 'k', which "
             "failed.\n// Replay: tilec /tmp/r.mlir --emit bufferized --target cpu\n")
    assert tilec.detect_stage(repro) == ("host", "cpu")
    # A lit test's CHECK lines name layouts the IR itself does not have yet.
    assert tilec.detect_stage("// CHECK: #[[$M:.*]] = #tile.mma<{version = 2}>\n"
                              "module attributes {tile.num_warps = 4 : i32} {") == \
        ("tiled", "sm_90")


UNMAPPED_MMA = """!A = !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>
!C = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>
module attributes {tile.num_warps = 4 : i32} {
  func.func @mm(%a: !A, %b: !A, %c: !C) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %x = tile.load %a[%c0, %c0] : !A -> tensor<64x32xf16>
    %y = tile.load %b[%c0, %c0] : !A -> tensor<32x64xf16>
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    %r = tile.mma %x, %y, %z : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    tile.store %c[%c0, %c0], %r : !C, tensor<64x64xf32>
    return
  }
}
"""


@needs_tile
def test_ir_taken_for_mapped_without_layouts_is_an_error(tmp_path):
    # The fuzzer's find: tile-tiling-map.mlir's CHECK lines made tilec take
    # it for mapped IR, and tile-stage-stores crashed on its unmapped store.
    f = tmp_path / "commented.mlir"
    f.write_text("// CHECK: #[[$M:.*]] = #tile.mma<{version = 2}>\n" + UNMAPPED_MMA)
    r = run_tilec([str(f), "--emit", "ptx", "--target", "sm_90"], tmp_path)
    assert "mma.sync" in r.stdout
    # Said to be mapped (an alias of a layout) while its tensors have none.
    f.write_text("#mma = #tile.mma<{version = 2, warpsPerCTA = [2, 2]}>\n" + UNMAPPED_MMA)
    r = run_tilec([str(f), "--emit", "ptx", "--target", "sm_90"], tmp_path, ok=False)
    assert r.returncode == 1 and "no thread layout after stage 'mapped'" in r.stderr, \
        r.stderr


# -- the CPU target ------------------------------------------------------------

CPU_CONTENT = {
    "tile": ["func.func @vadd(", "tile.bid 0", "tile.load %arg0", "arith.addf",
             "tile.store %arg2"],
    "fused": ["tile.load", "arith.addf", "tile.store"],
    "host": ["memref<?xf32", 'tile.grid = "bid_x"', "linalg."],
    "bufferized": ["memref.alloc", 'tile.grid = "bid_x"'],
    "llvm": ["llvm.func @vadd(", "llvm.load", "llvm.fadd", "llvm.store"],
    "llvm-ir": ["define void @vadd(", "fadd", "@_mlir_vadd"],
}


@needs_tile
@pytest.mark.parametrize("stage", list(CPU_CONTENT))
def test_cpu_stage(stage, tmp_path):
    out = run_tilec(example_args("vector_add") + ["--emit", stage, "--target", "cpu"],
                    tmp_path).stdout
    for text in CPU_CONTENT[stage]:
        assert text in out, f"{text!r} not in the {stage} stage:\n{out}"
    assert "=====" not in out  # one stage prints bare, ready for a pipe


@needs_tile
def test_cpu_all_to_a_directory(tmp_path):
    d = tmp_path / "out"
    r = run_tilec(example_args("softmax") + ["--emit", "all", "--target", "cpu",
                                             "-o", str(d)], tmp_path)
    assert set(os.listdir(d)) == {f"softmax.{s}.mlir" for s in
                                  ("tile", "fused", "host", "bufferized", "llvm")} | \
        {"softmax.llvm-ir.ll"}
    assert r.stdout == "" and str(d / "softmax.llvm-ir.ll") in r.stderr
    assert "tile.reduce" in (d / "softmax.fused.mlir").read_text()
    assert "define void @softmax(" in (d / "softmax.llvm-ir.ll").read_text()


@needs_tile
def test_several_stages_have_headers(tmp_path):
    out = run_tilec(example_args("vector_add") + ["--emit", "llvm-ir,tile",
                                                  "--target", "cpu"], tmp_path).stdout
    tile_at = out.index("// ===== vadd: stage 'tile' =====")
    llvm_at = out.index("; ===== vadd: stage 'llvm-ir' =====")
    assert tile_at < llvm_at  # pipeline order, whatever the order asked


@needs_tile
@pytest.mark.parametrize("stage", ["ptx", "cubin", "mapped", "tiled"])
def test_stage_a_target_lacks(stage, tmp_path):
    r = run_tilec(example_args("vector_add") + ["--emit", stage, "--target", "cpu"],
                  tmp_path, ok=False)
    assert r.returncode == 2 and r.stdout == ""
    assert f"target cpu has no stage '{stage}'" in r.stderr
    assert "the stages of cpu: tile, fused, host, bufferized, llvm, llvm-ir" in r.stderr
    assert "is a stage of sm_80 and sm_90" in r.stderr


# -- GPU targets (ptxas, no GPU) -----------------------------------------------

def _gpu_checks(kernel, target):
    return {
        "tile": [f"func.func @{kernel}(", "tile.load"],
        "fused": [f"func.func @{kernel}(", "tile.store"],
        "tiled": ["tile.num_warps = ", f"func.func @{kernel}("],
        "mapped": ["tile.num_warps = ", "#tile.blocked<{sizePerThread"],
        "gpu": ["gpu.module @", f"gpu.func @{kernel}(", "kernel", "nvvm.read.ptx.sreg.tid.x"],
        "nvvm": [f"llvm.func @{kernel}(", "nvvm.kernel"],
        "llvm": [f"define ptx_kernel void @{kernel}(", "nvptx64-nvidia-cuda"],
        "ptx": [f".visible .entry {kernel}(", f".target {target}", "ld.global", "st.global",
                "ret;"],
    }


@needs_gpu_backend
@pytest.mark.parametrize("name", list(KERNELS))
def test_gpu_all_stages(name, tmp_path):
    kernel = KERNELS[name][0]
    d = tmp_path / "out"
    # TILE_TMA=0: the cp.async ring, whose PTX reads operands with ld.global
    # where the tail needs it, and the threads' stores (TMA has test_tma.py
    # and test_tma_stores.py).
    run_tilec(example_args(name) + ["--emit", "all", "--target", "sm_90", "-o", str(d)],
              tmp_path, TILE_TMA="0", TILE_TMA_STORES="0")
    ext = {"llvm": "ll", "ptx": "ptx", "cubin": "cubin"}
    for stage, texts in _gpu_checks(kernel, "sm_90").items():
        text = (d / f"{kernel}.{stage}.{ext.get(stage, 'mlir')}").read_text()
        for t in texts:
            assert t in text, f"{t!r} not in the {stage} stage of {name}"
    cubin = (d / f"{kernel}.cubin.cubin").read_bytes()
    assert cubin[:4] == b"\x7fELF"
    assert int.from_bytes(cubin[18:20], "little") == 190  # e_machine: EM_CUDA
    if name == "matmul":  # f16 inputs, f32 accumulator: tensor cores
        # (wgmma with A from registers: B's 160-element rows stream through
        # the cp.async ring, A's 200-element ones do not)
        ptx = (d / "matmul.ptx.ptx").read_text()
        assert "wgmma.mma_async.sync.aligned.m64n64k16" in ptx and "fma.rn.f32" not in ptx


@needs_gpu_backend
def test_gpu_single_stages_to_stdout(tmp_path):
    ptx = run_tilec(example_args("softmax") + ["--emit", "ptx", "--target", "sm_80"],
                    tmp_path).stdout
    assert ptx.startswith("//") and ".visible .entry softmax(" in ptx
    assert ".target sm_80" in ptx
    cubin = run_tilec(example_args("softmax") + ["--emit", "cubin", "--target", "sm_80"],
                      tmp_path, binary=True).stdout
    assert cubin[:4] == b"\x7fELF"
    # Without --target, a GPU-only stage picks sm_90.
    ptx = run_tilec(example_args("softmax") + ["--emit", "ptx"], tmp_path).stdout
    assert ".target sm_90" in ptx


@needs_gpu_backend
def test_emit_tiled(tmp_path):
    # The matmul's mma is tiled over the block's warps: on sm_90 one
    # warpgroup computing m64n64k16 (wgmma), with TILE_WGMMA=0 a 2x2 warp
    # grid of m16n8k16 (mma.sync); mapping then follows it.
    out = run_tilec(example_args("matmul") + ["--emit", "tiled,mapped"], tmp_path).stdout
    tiled = out[out.index("stage 'tiled'"):out.index("stage 'mapped'")]
    mapped = out[out.index("stage 'mapped'"):]
    assert "tile.num_warps = 4" in tiled and "#blocked" not in tiled
    assert ("tiling = #tile.mma_tiling<{warps = [4, 1], warp_tile = [16, 64], "
            "instr = [64, 64, 16]}>") in tiled
    assert "#tile.mma<{version = 2, warpsPerCTA = [4, 1]}>" in mapped
    out = run_tilec(example_args("matmul") + ["--emit", "tiled,mapped"], tmp_path,
                    TILE_WGMMA="0").stdout
    tiled = out[out.index("stage 'tiled'"):out.index("stage 'mapped'")]
    mapped = out[out.index("stage 'mapped'"):]
    assert ("tiling = #tile.mma_tiling<{warps = [2, 2], warp_tile = [32, 32], "
            "instr = [16, 8, 16]}>") in tiled
    assert "#tile.mma<{version = 2, warpsPerCTA = [2, 2]}>" in mapped
    # A row longer than max-reduce-extent is summed chunk by chunk.
    src = tmp_path / "rowsum.py"
    src.write_text(
        "import tile\n\n"
        "@tile.kernel\n"
        "def rowsum(x, out, BLOCK: tile.Constant[int]):\n"
        "    r = tile.bid(0)\n"
        "    t = tile.load(x, index=(r, 0), shape=(1, BLOCK))\n"
        "    tile.store(out, index=(r,), tile=tile.sum(t * t, axis=1))\n")
    tiled = run_tilec([f"{src}::rowsum", "--args", "f32[8,32768], f32[8]", "-D",
                       "BLOCK=32768", "--emit", "tiled"], tmp_path).stdout
    assert "scf.for" in tiled and "tensor<1x8192xf32>" in tiled
    assert "tensor<1x32768xf32>" not in tiled


BATCHED = (
    "import tile\n\n"
    "@tile.kernel\n"
    "def bmm(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int],\n"
    "        BK: tile.Constant[int]):\n"
    "    z, pm, pn = tile.bid(2), tile.bid(0), tile.bid(1)\n"
    "    acc = tile.zeros((1, BM, BN), tile.float32)\n"
    "    for k in tile.range(tile.cdiv(a.shape[2], BK)):\n"
    "        x = tile.load(a, index=(z, pm, k), shape=(1, BM, BK))\n"
    "        y = tile.load(b, index=(z, k, pn), shape=(1, BK, BN))\n"
    "        acc = tile.mma(x, y, acc)\n"
    "    tile.store(c, index=(z, pm, pn), tile=acc.astype(c.dtype))\n")


@needs_gpu_backend
def test_batched_matmul_runs_on_tensor_cores(tmp_path):
    # A batch of one per block is a 2-d mma carried as (BM, BN) by the loop:
    # tensor-core instructions, no FMA code (a 3-d mma ran as FMA, 0.03x of
    # torch.bmm on the H200).
    src = tmp_path / "bmm.py"
    src.write_text(BATCHED)
    args = [f"{src}::bmm", "--args", "f16[8,512,512], f16[8,512,512], f16[8,512,512]",
            "-D", "BM=128", "-D", "BN=128", "-D", "BK=64", "--target", "sm_90"]
    tiled = run_tilec(args + ["--emit", "tiled"], tmp_path).stdout
    assert "iter_args(%arg4 = %cst) -> (tensor<128x128xf32>)" in tiled
    ptx = run_tilec(args + ["--emit", "ptx"], tmp_path).stdout
    assert "mma.sync" in ptx or "wgmma" in ptx
    assert "fma.rn.f32" not in ptx


@needs_gpu_backend
def test_num_warps(tmp_path):
    out = run_tilec(example_args("softmax") + ["--emit", "mapped", "--num-warps", "8"],
                    tmp_path).stdout
    assert "tile.num_warps = 8" in out


STAGED_MATMUL = """
import tile

@tile.kernel
def matmul(a, b, c, BM: tile.Constant[int], BN: tile.Constant[int], BK: tile.Constant[int]):
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(a.shape[1], BK)):
        acc = tile.mma(tile.load(a, index=(tile.bid(0), k), shape=(BM, BK)),
                       tile.load(b, index=(k, tile.bid(1)), shape=(BK, BN)), acc)
    tile.store(c, index=(tile.bid(0), tile.bid(1)), tile=acc.astype(c.dtype))

six = matmul.replace_hints(num_stages=6)
"""


@needs_gpu_backend
def test_kernel_num_stages_hint_is_followed(tmp_path):
    """tilec compiles a kernel as its launch does: its num_stages hint sets
    the ring (one full mbarrier per slot) unless --num-stages is given."""
    src = tmp_path / "staged.py"
    src.write_text(STAGED_MATMUL)
    args = ["--args", "f16[1024,1024], f16[1024,1024], f16[1024,1024]", "-D", "BM=64",
            "-D", "BN=128", "-D", "BK=64", "--target", "sm_90", "--emit", "ptx"]
    slots = lambda ptx: ptx.count("mbarrier.init.shared")  # noqa: E731
    assert slots(run_tilec([f"{src}::six"] + args, tmp_path).stdout) == 6
    assert slots(run_tilec([f"{src}::six", "--num-stages", "3"] + args, tmp_path).stdout) == 3
    assert slots(run_tilec([f"{src}::matmul"] + args, tmp_path).stdout) == 4


@needs_gpu_backend
def test_num_ctas_and_ws_registers_flags(tmp_path):
    """--num-ctas and --ws-registers compile a kernel as those hints would
    (without editing its source): clusters of two multicast the shared
    block by TMA, and the warp-specialized kernel's warpgroups take the
    register split asked for. Bad values are usage errors, naming the flag."""
    src = tmp_path / "staged.py"
    src.write_text(STAGED_MATMUL)
    args = [f"{src}::matmul", "--args", "f16[1024,1024], f16[1024,1024], f16[1024,1024]",
            "-D", "BM=64", "-D", "BN=128", "-D", "BK=64", "--target", "sm_90", "--emit", "ptx"]
    assert "multicast::cluster" not in run_tilec(args, tmp_path).stdout
    ptx = run_tilec(args + ["--num-ctas", "2", "--ws-registers", "56,224"], tmp_path).stdout
    assert "multicast::cluster" in ptx
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+56;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+224;", ptx)
    for flag, value in (("--num-ctas", "3"), ("--ws-registers", "20,240"),
                        ("--ws-registers", "24")):
        r = run_tilec(args + [flag, value], tmp_path, ok=False)
        assert r.returncode == 2 and f"argument {flag}" in r.stderr, r.stderr
    mlir = tmp_path / "k.mlir"
    mlir.write_text(run_tilec(args[:-1] + ["tile"], tmp_path).stdout)
    r = run_tilec([str(mlir), "--num-ctas", "2"], tmp_path, ok=False)
    assert r.returncode == 2 and "--num-ctas apply to a Python kernel" in r.stderr


# -- debugging flags -----------------------------------------------------------

def _line(path, needle):
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if needle in line:
                return i
    raise AssertionError(needle)


@needs_tile
def test_print_debuginfo_ties_ops_to_python_lines(tmp_path):
    src = os.path.join(EXAMPLES, "vector_add.py")
    line = _line(src, "a + b")
    out = run_tilec(example_args("vector_add") + ["--emit", "fused", "--target", "cpu",
                                                  "--mlir-print-debuginfo"], tmp_path).stdout
    assert re.search(rf'arith\.addf .* loc\(#loc\d+\)|arith\.addf .*loc\("{re.escape(src)}":'
                     rf'{line}:', out), out
    assert f'loc("{src}":{line}:' in out
    plain = run_tilec(example_args("vector_add") + ["--emit", "fused", "--target", "cpu"],
                      tmp_path).stdout
    assert "loc(" not in plain


@needs_gpu_backend
def test_ptx_line_info(tmp_path):
    src = os.path.join(EXAMPLES, "softmax.py")
    ptx = run_tilec(example_args("softmax") + ["--emit", "ptx", "--mlir-print-debuginfo"],
                    tmp_path).stdout
    m = re.search(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', ptx, re.M)
    assert m and m.group(2).endswith("softmax.py"), ptx[:2000]
    lines = {int(n) for n in re.findall(rf"^\s*\.loc\s+{m.group(1)}\s+(\d+)\s", ptx, re.M)}
    assert _line(src, "tile.exp(t)") in lines and _line(src, "tile.store(") in lines
    assert re.search(r"^\.target sm_90$", ptx, re.M)  # line info, not a debug build
    plain = run_tilec(example_args("softmax") + ["--emit", "ptx"], tmp_path).stdout
    assert ".loc" not in plain
    # ptxas -lineinfo keeps it in the cubin, for SASS listings.
    cubin = run_tilec(example_args("softmax") + ["--emit", "cubin", "--mlir-print-debuginfo"],
                      tmp_path, binary=True).stdout
    assert cubin[:4] == b"\x7fELF" and b".debug_line" in cubin
    plain = run_tilec(example_args("softmax") + ["--emit", "cubin"], tmp_path,
                      binary=True).stdout
    assert b".debug_line" not in plain


@needs_tile
def test_print_ir_after_all(tmp_path):
    r = run_tilec(example_args("vector_add") + ["--emit", "tile", "--target", "cpu",
                                                "--print-ir-after-all"], tmp_path)
    assert "// -----// IR Dump After TileFuse (tile-fuse) //----- //" in r.stderr
    assert "IR Dump After ConvertTileToHost (convert-tile-to-host)" in r.stderr
    assert "func.func @vadd" in r.stdout  # stdout keeps only the stage asked for
    assert "IR Dump" not in r.stdout


@needs_tile
def test_time_passes(tmp_path):
    r = run_tilec(example_args("vector_add") + ["--emit", "llvm", "--target", "cpu",
                                                "--time-passes"], tmp_path)
    for stage in ("fused", "host", "bufferized", "llvm"):
        assert f"// tile: pass timing of stage '{stage}'" in r.stderr
    assert r.stderr.count("Execution time report") == 4
    assert "Canonicalizer" in r.stderr and "TileFuse" in r.stderr


# -- MLIR inputs ---------------------------------------------------------------

HAND_WRITTEN = """\
// z = x + y on 256-element blocks, written by hand.
!A = !tile.array<?xf32, strides = [1], align = 16>
module {
  func.func @hand_add(%x: !A, %y: !A, %z: !A) attributes {tile.kernel} {
    %i = tile.bid 0 loc("hand.py":3:9)
    %a = tile.load %x[%i] : !A -> tensor<256xf32> loc("hand.py":4:9)
    %b = tile.load %y[%i] : !A -> tensor<256xf32> loc("hand.py":5:9)
    %c = arith.mulf %a, %b : tensor<256xf32> loc("hand.py":6:9)
    %d = arith.addf %c, %a : tensor<256xf32> loc("hand.py":6:9)
    tile.store %z[%i], %d : !A, tensor<256xf32> loc("hand.py":7:5)
    return
  }
}
"""


@needs_tile
def test_hand_written_mlir_cpu(tmp_path):
    f = tmp_path / "hand.mlir"
    f.write_text(HAND_WRITTEN)
    out = run_tilec([str(f), "--emit", "fused,llvm-ir", "--target", "cpu"], tmp_path).stdout
    assert "// ===== hand_add: stage 'fused' =====" in out
    assert "define void @hand_add(" in out and "@llvm.fma." in out  # mul + add


@needs_gpu_backend
def test_hand_written_mlir_gpu(tmp_path):
    f = tmp_path / "hand.mlir"
    f.write_text(HAND_WRITTEN)
    d = tmp_path / "out"
    run_tilec([str(f), "--emit", "all", "--target", "sm_90", "-o", str(d)], tmp_path)
    assert sorted(os.listdir(d)) == sorted(
        ["hand_add.tile.mlir", "hand_add.fused.mlir", "hand_add.tiled.mlir",
         "hand_add.mapped.mlir", "hand_add.pipelined.mlir",
         "hand_add.gpu.mlir", "hand_add.nvvm.mlir", "hand_add.llvm.ll",
         "hand_add.ptx.ptx", "hand_add.cubin.cubin"])
    ptx = (d / "hand_add.ptx.ptx").read_text()
    assert ".visible .entry hand_add(" in ptx and "fma.rn.f32" in ptx
    # From stdin too.
    r = subprocess.run([TILEC, "-", "--emit", "ptx", "--target", "sm_90"], input=HAND_WRITTEN,
                       capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    assert r.returncode == 0 and ".visible .entry hand_add(" in r.stdout, r.stderr


@needs_tile
def test_bad_mlir_is_a_parse_error_with_a_reproducer(tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_text(HAND_WRITTEN.replace("tile.bid 0", "tile.bid 3"))
    r = run_tilec([str(f), "--emit", "llvm", "--target", "cpu"], tmp_path, ok=False)
    assert r.returncode == 1
    assert "compilation failed in stage 'parse'" in r.stderr
    assert "hand.py:3:9: error: 'tile.bid' op" in r.stderr
    replay = re.search(r"replay it: (tilec .*)", r.stderr).group(1)
    assert replay.endswith("--emit tile --target cpu")
    r2 = subprocess.run(shlex.split(replay.replace("tilec", shlex.quote(TILEC), 1)),
                        capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    assert r2.returncode == 1 and "hand.py:3:9: error: 'tile.bid' op" in r2.stderr
    # Syntax errors point into the file.
    f.write_text(HAND_WRITTEN.replace("tile.bid 0", "tile.bid 0 0"))
    r = run_tilec([str(f), "--target", "cpu"], tmp_path, ok=False)
    assert r.returncode == 1 and re.search(rf"{re.escape(str(f))}:5:\d+: error:", r.stderr)


@needs_tile
@pytest.mark.parametrize("stage", ["fused", "host", "bufferized", "llvm"])
def test_cpu_resumes_from_a_dump(stage, tmp_path):
    d = tmp_path / "dump"
    run_tilec(example_args("softmax") + ["--emit", "tile", "--target", "cpu"], tmp_path,
              TILE_DUMP_DIR=str(d))
    dumped = d / f"softmax.{stage}.mlir"
    r = run_tilec([str(dumped), "--emit", "all"], tmp_path)  # the target is implied
    out = r.stdout
    first = re.search(r"// ===== softmax: stage '([^']+)' =====", out).group(1)
    # The input, recorded as the stage it is at (fused IR is tile IR: tilec
    # cannot tell them apart and runs the tile-level passes again).
    assert first == (stage if stage != "fused" else "tile")
    assert "define void @softmax(" in out
    if stage != "fused":
        r = run_tilec([str(dumped), "--emit", "tile"], tmp_path, ok=False)
        assert r.returncode == 2 and f"already at stage '{stage}'" in r.stderr


@needs_gpu_backend
# ids: a test id "gpu" would read as the gpu marker (conftest.py).
@pytest.mark.parametrize("stage", ["fused", "tiled", "mapped", "gpu", "nvvm"],
                         ids=lambda s: f"from_{s}")
def test_gpu_resumes_from_a_dump(stage, tmp_path):
    d = tmp_path / "dump"
    run_tilec(example_args("softmax") + ["--emit", "all", "--target", "sm_90", "-o", str(d)],
              tmp_path)
    want = (d / "softmax.ptx.ptx").read_text()
    target = [] if stage != "fused" else ["--target", "sm_90"]  # tile IR implies none
    out = run_tilec([str(d / f"softmax.{stage}.mlir"), "--emit", "ptx"] + target,
                    tmp_path).stdout
    assert out == want  # the same PTX, whichever stage it resumed from
    r = run_tilec([str(d / f"softmax.{stage}.mlir"), "--emit", "mapped,ptx", "--target",
                   "cpu"], tmp_path, ok=False)
    if stage != "fused":
        assert r.returncode == 2 and "cannot be compiled for --target cpu" in r.stderr


@needs_gpu_backend
def test_gpu_resumes_from_a_pipelined_matmul(tmp_path):
    # The pipelined stage holds the rings and copies of tile-pipeline-mma;
    # resuming from its dump gives the same PTX as compiling from source.
    d = tmp_path / "dump"
    # 16-byte copyable operands: a cp.async ring per operand, wgmma on sm_90.
    args = [os.path.join(EXAMPLES, "matmul.py") + "::matmul", "--args",
            "f16[512,512], f16[512,512], f32[512,512], i32", "-D", "BM=128", "-D", "BN=128",
            "-D", "BK=64"]
    run_tilec(args + ["--emit", "all", "--target", "sm_90", "-o", str(d)], tmp_path,
              TILE_TMA="0")  # the cp.async ring (TMA's stage: test_tma.py)
    pipelined = (d / "matmul.pipelined.mlir").read_text()
    assert "tilegpu.alloc_shared {offset = " in pipelined and "tilegpu.async_copy" in pipelined
    assert "tile.mma " not in pipelined and "tilegpu.mma " in pipelined
    out = run_tilec([str(d / "matmul.pipelined.mlir"), "--emit", "ptx"], tmp_path).stdout
    assert out == (d / "matmul.ptx.ptx").read_text()


# -- reproducers of failing compiles --------------------------------------------

FAILING = '''\
import tile


@tile.kernel
def three_warps(x, out, BLOCK: tile.Constant[int]):
    t = tile.load(x, index=(tile.bid(0),), shape=(BLOCK,))
    tile.store(out, index=(tile.bid(0),), tile=tile.exp(t))
'''


ERF = '''\
import tile


@tile.kernel
def erf_kernel(x, out, BLOCK: tile.Constant[int]):
    t = tile.load(x, index=(tile.bid(0),), shape=(BLOCK,))
    tile.store(out, index=(tile.bid(0),), tile=tile.erf(t))
'''


@needs_gpu_backend
def test_failing_compile_replays_from_its_reproducer(tmp_path, monkeypatch):
    """--num-warps 3 fails tiling (tile-tiling records the warps; the Python
    API refuses num_warps=3 before compiling): the error names the
    reproducer and the tilec command that replays it, and that command
    fails the same way."""
    src = tmp_path / "failing.py"
    src.write_text(FAILING)
    r = run_tilec([f"{src}::three_warps", "--args", "f32[4096], f32[4096]", "-D",
                   "BLOCK=1024", "--num-warps", "3", "--emit", "ptx", "--target", "sm_90"],
                  tmp_path, ok=False)
    assert r.returncode == 1
    assert f"kernel 'three_warps' at {src}:" in r.stderr
    assert "compilation failed in stage 'tiled'" in r.stderr
    assert "num_warps must be a power of two" in r.stderr
    m = re.search(r"reproducer: (tilec (\S+) --emit tiled --target sm_90 --num-warps 3)$",
                  r.stderr, re.M)
    assert m, r.stderr
    replay, repro = m.group(1), m.group(2)
    head = open(repro).read().splitlines()[:2]
    assert head == ["// tile reproducer: the input of stage 'tiled' of kernel "
                    "'three_warps', which failed.", "// Replay: " + replay]
    cmd = shlex.split(replay.replace("tilec", shlex.quote(TILEC), 1))
    r2 = subprocess.run(cmd, capture_output=True, text=True, env=_env(tmp_path), timeout=300)
    assert r2.returncode == 1
    assert "compilation failed in stage 'tiled'" in r2.stderr
    assert "num_warps must be a power of two <= 32, got 3" in r2.stderr
    # The reproducer resumes where it failed: with a valid option it goes on.
    r3 = run_tilec(cmd[1:] + ["--num-warps", "4"], tmp_path)
    assert "tile.num_warps = 4" in r3.stdout and "math.exp" in r3.stdout


@needs_gpu_backend
@pytest.mark.parametrize("failing", ["ptxas", "libdevice"])
def test_failures_after_the_mlir_stages_replay_from_nvvm(failing, tmp_path):
    """ptxas or libdevice missing: the reproducer is the nvvm IR, and tilec
    replays translation and assembly from it."""
    src = tmp_path / "erf.py"
    src.write_text(ERF)
    env = {"TILE_PTXAS": "/bin/false"} if failing == "ptxas" else \
        {"TILE_LIBDEVICE": str(tmp_path / "missing.bc")}
    stage = "cubin" if failing == "ptxas" else "llvm"
    r = run_tilec([str(src), "--args", "f32[4096], f32[4096]", "-D", "BLOCK=1024",
                   "--emit", "cubin", "--target", "sm_90", "-o", str(tmp_path / "out")],
                  tmp_path, ok=False, **env)
    assert r.returncode == 1 and f"compilation failed in stage '{stage}'" in r.stderr
    m = re.search(rf"(tilec (\S+) --emit {stage} --target sm_90)$", r.stderr, re.M)
    assert m, r.stderr
    assert "gpu.module" in open(m.group(2)).read()
    cmd = shlex.split(m.group(1))[1:]
    r2 = run_tilec(cmd, tmp_path, ok=False, **env)
    assert r2.returncode == 1 and f"compilation failed in stage '{stage}'" in r2.stderr
    out = run_tilec(cmd[:-4] + ["--emit", "all", "--target", "sm_90"], tmp_path).stdout
    assert re.findall(r"stage '([^']+)' =====", out) == ["nvvm", "llvm", "ptx", "cubin"]
    assert ".visible .entry erf_kernel(" in out


@needs_gpu_backend
def test_tile_compile_error_names_the_replay_command(tmp_path, monkeypatch):
    """The same failure through the Python API: TileCompileError's message has
    the tilec command."""
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_DUMP_DIR", raising=False)
    ns = {}
    exec(compile(FAILING, str(tmp_path / "failing.py"), "exec"), ns)
    k = ns["three_warps"]
    k.num_warps = 3  # past the API's check, as tilec --num-warps 3 passes it
    text = k.trace(*tilec.parse_signature("f32[4096], f32[4096]"), BLOCK=1024)
    with pytest.raises(tile.TileCompileError) as e:
        k._native_compile(backend.load(), text, "sm_90")
    err = e.value
    assert err.stage == "tiled" and os.path.exists(err.reproducer)
    assert f"tilec {err.reproducer} --emit tiled --target sm_90 --num-warps 3" in str(err)


# -- TILE_DUMP_DIR ---------------------------------------------------------------

@needs_tile
def test_dump_dir_end_to_end_on_the_cpu(tmp_path):
    """A program run with TILE_DUMP_DIR leaves every stage of every kernel it
    compiles; the dumps replay through tilec."""
    d = tmp_path / "dump"
    env = _env(tmp_path, TILE_DUMP_DIR=str(d), TILE_BACKEND="cpu",
               PYTHONPATH=os.path.join(ROOT, "python-frontend"))
    for ex in ("vector_add", "softmax"):
        r = subprocess.run([sys.executable, os.path.join(EXAMPLES, f"{ex}.py")],
                           capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr
    names = set(os.listdir(d))
    for kernel in ("vadd", "softmax"):
        for stage in ("tile", "fused", "host", "bufferized", "llvm"):
            assert f"{kernel}.{stage}.mlir" in names
        assert f"{kernel}.llvm-ir.ll" in names
    assert "tile.load" in (d / "vadd.tile.mlir").read_text()
    out = run_tilec([str(d / "vadd.tile.mlir"), "--emit", "llvm-ir", "--target", "cpu"],
                    tmp_path).stdout
    assert "define void @vadd(" in out


# -- the command line ------------------------------------------------------------

@needs_tile
def test_kernel_selection(tmp_path):
    src = tmp_path / "two.py"
    src.write_text("import tile\n\n@tile.kernel\ndef a(x):\n    pass\n\n"
                   "@tile.kernel\ndef b(x):\n    pass\n")
    r = run_tilec([str(src), "--args", "f32[16]"], tmp_path, ok=False)
    assert r.returncode == 2 and "defines 2 kernels (a, b)" in r.stderr
    r = run_tilec([f"{src}::c", "--args", "f32[16]"], tmp_path, ok=False)
    assert r.returncode == 2 and "no @tile.kernel named 'c' (kernels: a, b)" in r.stderr
    out = run_tilec([f"{src}::b", "--args", "f32[16]", "--target", "cpu"], tmp_path).stdout
    assert "func.func @b(" in out
    # One kernel: no name needed.
    out = run_tilec([os.path.join(EXAMPLES, "softmax.py"), "--args",
                     "f32[8,8], f32[8,8]", "-D", "BLOCK=8", "--target", "cpu"],
                    tmp_path).stdout
    assert "func.func @softmax(" in out


@needs_tile
def test_tracing_errors_name_the_line(tmp_path):
    r = run_tilec(example_args("vector_add")[:1] + ["--args", "f32[16,16], f32[16], f32[16]",
                                                    "-D", "BLOCK=16"], tmp_path, ok=False)
    assert r.returncode == 1
    assert f"kernel 'vadd' at {os.path.join(EXAMPLES, 'vector_add.py')}:" in r.stderr
    assert "needs 2 block indices" in r.stderr


def test_console_script_declared():
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        assert tomllib.load(f)["project"]["scripts"]["tilec"] == "tile.tilec:main"
    assert os.access(os.path.join(ROOT, "tools", "tilec", "tilec"), os.X_OK)


def test_help_lists_the_stages():
    r = subprocess.run([TILEC, "--list-stages", "--target", "sm_80"], capture_output=True,
                       text=True, timeout=60)
    assert r.stdout == "tile fused tiled mapped pipelined gpu nvvm llvm ptx cubin sass\n"
    r = subprocess.run([TILEC, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    assert "--print-ir-after-all" in r.stdout and "--mlir-print-debuginfo" in r.stdout
    assert "ptx" in r.stdout and "bufferized" in r.stdout
