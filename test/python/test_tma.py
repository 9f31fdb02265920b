"""TMA loads of mma operands on sm_90 (issue 17), the default (TILE_TMA=0 or
TILE_GPU_PIPELINE=async turns it off): the bench matmul's A and B stream through TMA into
128-byte-swizzled rings guarded by mbarriers; the launch encodes one tensor
map per operand (cuTensorMapEncodeTiled) and passes it as a 128-byte
__grid_constant__ parameter after the others.

Without a GPU: the PTX (compiled for sm_90, ptxas only), which arrays the
specialization key lets TMA read (tile.tma_ok: the others keep the cp.async
ring), and a launch on the fake libcuda (what is encoded and passed). On an
H200 (marker gpu): results against float64 on ragged shapes, K shorter than
one tile, a transposed operand (the cp.async fallback), f16 and bf16, with
the output poisoned first."""

import importlib
import importlib.util
import re
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tile
from tile import backend, interop

from test_cuda_launch import _fake_cuda, _have_ptxas, _run_on_fake_driver, ptxas_path
from test_tilec import gpu_backend, run_tilec
from tilehelp import Device, assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench", "kernels.py")
CONFIG = ["-D", "BM=128", "-D", "BN=256", "-D", "BK=64", "-D", "GROUP=8"]

needs_sm90 = pytest.mark.skipif("not gpu_backend()", reason="no GPU backend or ptxas")


def _bench_kernels():
    spec = importlib.util.spec_from_file_location("bench_kernels_tma", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _ptx(tmp_path, sig, **env):
    return run_tilec([BENCH + "::matmul", "--args", sig, *CONFIG, "--target", "sm_90",
                      "--emit", "ptx"], tmp_path, **env).stdout


def _ptxas_info(tmp_path, ptx, name):
    """ptxas -v's report on `ptx` (sm_90a), after checking it assembles."""
    src = tmp_path / f"{name}.ptx"
    src.write_text(ptx)
    info = subprocess.run([ptxas_path(), "-arch=sm_90a", "-v", str(src), "-o",
                           str(tmp_path / f"{name}.cubin")], capture_output=True,
                          text=True, timeout=300)
    assert info.returncode == 0, info.stderr
    return info.stderr


NO_SPILLS = "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"


# -- the specialization key -------------------------------------------------

def test_key_marks_what_tma_can_describe():
    """interop.TMA in the alignment slot of an array's key part exactly when
    runtime/TensorMap.h's tmaCanDescribe holds (and the base is aligned)."""
    f16 = interop.D.float16

    def part(shape, strides, aligned=True):
        return interop._array_parts("x", f16, shape, strides)[0 if aligned else 1][4]

    assert part((200, 136), (136, 1)) == interop.TMA
    assert part((8, 520, 104), (520 * 104, 104, 1)) == interop.TMA
    assert part((200, 136), (136, 1), aligned=False) is False
    assert part((64, 64), (1, 64)) is True       # a transpose: 16-byte rows, inner stride 64
    assert part((64, 64), (0, 1)) is True        # broadcast rows
    assert part((64, 64), (-64, 1)) is True      # reversed rows
    assert part((0, 64), (64, 1)) is True        # empty
    assert part((1, 1, 1, 1, 1, 8), (8, 8, 8, 8, 8, 1)) is True  # rank 6
    assert part((64, 65), (65, 1)) is False      # 130-byte rows: not aligned


# -- the PTX (no GPU) -------------------------------------------------------

@needs_sm90
def test_tma_ptx_of_the_bench_matmul(tmp_path):
    sig = "f16[4096,4096], f16[4096,4096], f16[4096,4096]"
    tma = _ptx(tmp_path, sig, TILE_TMA="1")
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" \
        in tma
    assert "mbarrier.try_wait.parity" in tma
    assert "mbarrier.arrive.expect_tx" in tma
    # A's and B's tensor maps, and C's for the TMA store of the result.
    assert tma.count(".param .align 64 .b8 matmul_param_") == 3
    assert "cp.async.cg" not in tma  # no cp.async left for the operands
    # TMA is the default; with TILE_TMA=0, the cp.async ring as before.
    assert _ptx(tmp_path, sig) == tma
    plain = _ptx(tmp_path, sig, TILE_TMA="0")
    # (Its result still leaves by a TMA store: test_tma_stores.py.)
    assert "cp.async.bulk.tensor.2d.shared::cluster" not in plain and "mbarrier" not in plain
    assert "cp.async.cg.shared.global" in plain


@needs_sm90
def test_tensor_map_prefetch_is_an_option(tmp_path):
    """TILE_PREFETCH_TMAPS=1: thread 0 prefetches each of the kernel's
    three tensor maps from the parameter space before anything else (one
    prefetch.param.tensormap each, not a generic duplicate); off by default
    (no device run has measured it yet)."""
    sig = "f16[4096,4096], f16[4096,4096], f16[4096,4096]"
    assert "prefetch" not in _ptx(tmp_path, sig)
    ptx = _ptx(tmp_path, sig, TILE_PREFETCH_TMAPS="1")
    assert ptx.count("prefetch.param.tensormap") == 3
    assert "prefetch.tensormap" not in ptx
    first_prefetch = ptx.index("prefetch.param.tensormap")
    assert first_prefetch < ptx.index("mbarrier.init")


@needs_sm90
@pytest.mark.skipif("ptxas_path() is None", reason="needs ptxas")
def test_warpgroup_register_split_is_an_option(tmp_path):
    """TILE_WS_REGISTERS=24,240 (FlashAttention-3's split): the producer
    keeps 24 registers a thread, the two consumer warpgroups ask for 240,
    the block still launches with 168 (.maxnreg), and ptxas fits the
    producer's loop and the consumers' 128x256 accumulators without
    spills."""
    sig = "f16[4096,4096], f16[4096,4096], f16[4096,4096]"
    ptx = _ptx(tmp_path, sig, TILE_WARP_SPECIALIZE="1", TILE_WS_REGISTERS="24,240")
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+24;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+240;", ptx)
    assert re.search(r"\.maxnreg\s+168\b", ptx)
    report = _ptxas_info(tmp_path, ptx, "matmul")
    assert NO_SPILLS in report, report


@needs_sm90
def test_matmul_result_leaves_in_16_byte_stores(tmp_path):
    """tile-stage-stores: the 128x256 f16 result goes through the dead
    ring's bytes (no more shared memory: the same 192 KB ring plus its
    barriers) and out in 16 st.global.v4 per thread, where the fragments
    gave 64 st.global.b32; TILE_STAGE_STORES=0 keeps the fragments' stores.
    (By default TMA bulk copies store it: test_tma_stores.py.)"""
    sig = "f16[4096,4096], f16[4096,4096], f16[4096,4096]"
    staged = _ptx(tmp_path, sig, TILE_TMA_STORES="0")
    assert staged.count("st.global.v4.b32") == 16
    assert "st.global.b32" not in staged
    assert "ld.shared.v4.b32" in staged
    direct = _ptx(tmp_path, sig, TILE_STAGE_STORES="0")
    assert direct.count("st.global.b32") == 64 and "st.global.v4" not in direct


@needs_sm90
def test_warp_specialized_ptx(tmp_path):
    """TILE_WARP_SPECIALIZE=1: 384 threads, the producer warpgroup's
    setmaxnreg.dec and the consumers' setmaxnreg.inc, empty barriers the
    consumers arrive on, the consumers' barriers named (1, 256 threads);
    ptxas fits it in 168 registers without spills."""
    ptx = _ptx(tmp_path, "f16[4096,4096], f16[4096,4096], f16[4096,4096]",
               TILE_WARP_SPECIALIZE="1")
    assert ".maxntid 384, 1, 1" in ptx
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+40;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)
    assert "mbarrier.arrive.shared.b64" in ptx
    assert re.search(r"bar\.sync\s+1, 256;", ptx)
    assert "cp.async.bulk.tensor" in ptx


@needs_sm90
@pytest.mark.skipif("ptxas_path() is None", reason="needs ptxas")
@pytest.mark.parametrize("tiles,env", [
    ((128, 256), {}),                                 # the bench's large tiles
    ((64, 128), {}),                                  # its small ones
    ((128, 256), {"TILE_WARP_SPECIALIZE": "1"}),      # the producer warpgroup
    ((128, 256), {"TILE_TMA": "0"}),                  # the cp.async ring
])
def test_bench_matmuls_do_not_spill(tmp_path, tiles, env):
    """ptxas -v on the bench matmul's PTX: no spill stores or loads, no stack
    (issue 17's acceptance: the accumulators and the rings' addresses fit)."""
    bm, bn = tiles
    ptx = run_tilec([BENCH + "::matmul", "--args",
                     "f16[4096,4096], f16[4096,4096], f16[4096,4096]",
                     "-D", f"BM={bm}", "-D", f"BN={bn}", "-D", "BK=64", "-D", "GROUP=8",
                     "--target", "sm_90", "--emit", "ptx"], tmp_path, **env).stdout
    report = _ptxas_info(tmp_path, ptx, "matmul")
    assert NO_SPILLS in report, report


ATTENTION_SIG = ", ".join(["f16[128,4096,128]"] * 4) + ", f32"


@needs_sm90
@pytest.mark.skipif("ptxas_path() is None", reason="needs ptxas")
@pytest.mark.parametrize("env,specialized", [
    ({}, True),                           # the default: a producer warpgroup
    ({"TILE_WARP_SPECIALIZE": "0"}, False),
    ({"TILE_PING_PONG": "1"}, True),      # consumers taking turns
    ({"TILE_TMA": "0"}, False),           # the cp.async ring
])
def test_attention_streams_k_and_v_through_tma(tmp_path, env, specialized):
    """bench's attention at D=128: K and V through 3-d TMA boxes into
    mbarrier rings (pipelineTmaB), by default from a producer warpgroup of
    their own (tile-warp-specialize rings=attention: 384 threads, the
    consumers at 240 registers: the kernel's ws_registers hint, which
    tilec follows as a launch does); ping-pong adds named-barrier turns around
    each rotated iteration's two wgmmas; TILE_TMA=0 keeps the cp.async
    ring. ptxas: no spills."""
    ptx = run_tilec([BENCH + "::attention", "--args", ATTENTION_SIG, "-D", "BM=128",
                     "-D", "BN=128", "-D", "D=128", "-D", "CAUSAL=True", "--target", "sm_90",
                     "--emit", "ptx"], tmp_path, **env).stdout
    tma = env.get("TILE_TMA") != "0"
    assert ("cp.async.bulk.tensor.3d" in ptx) == tma
    assert ("cp.async.cg.shared.global" in ptx) == (not tma)
    # With the producer the loop is rotated (tile-overlap-mma-chain, on its
    # ring of 3 slots at D 128 since the epilogue's scratch reuses the
    # ring): the two wgmmas also sit in the prologue and the epilogue.
    overlapped = specialized
    # tile-split-uniform-masks: the blocks below the diagonal run a second
    # copy of the loop (16 wgmmas), without the mask; TMA rings only.
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16") == \
        (32 if overlapped else 16) + (16 if tma else 0)
    assert (".maxntid 384, 1, 1" in ptx) == specialized
    # bench's attention asks for FlashAttention-3's split, ws_registers=(24, 240).
    assert bool(re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+24;", ptx)) == specialized
    assert bool(re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+240;", ptx)) == specialized
    # One turn passed per iteration of each of the two loops; warpgroup 1
    # gives the first (barrier 3), warpgroup 0 takes the last.
    turns = re.findall(r"bar\.arrive %r\d+, 256;", ptx)
    assert len(turns) == (2 if "TILE_PING_PONG" in env else 0)
    assert ("bar.arrive 3, 256;" in ptx) == ("TILE_PING_PONG" in env)
    assert len(re.findall(r"bar\.sync\s+%r\d+, 256;", ptx)) == (3 if "TILE_PING_PONG" in env else 0)
    report = _ptxas_info(tmp_path, ptx, "attention")
    assert NO_SPILLS in report, report


@needs_sm90
@pytest.mark.skipif("ptxas_path() is None", reason="needs ptxas")
def test_ping_pong_hint_compiles_as_the_switch(tmp_path):
    """A kernel's ping_pong hint (as an autotuner config sets it) gives the
    binary TILE_PING_PONG=1 gives, and ping_pong=False keeps the kernel
    from taking turns under TILE_PING_PONG=1."""
    script = tmp_path / "turns.py"
    script.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
        "from tilehelp import load_script\n"
        "attention = load_script('bench', 'kernels.py')['attention']\n"
        "attention_turns = attention.replace_hints(ping_pong=True)\n"
        "attention_no_turns = attention.replace_hints(ping_pong=False)\n")

    def ptx(name, **env):
        return run_tilec([f"{script}::{name}", "--args", ATTENTION_SIG, "-D", "BM=128",
                          "-D", "BN=128", "-D", "D=128", "-D", "CAUSAL=True", "--target",
                          "sm_90", "--emit", "ptx"], tmp_path, **env).stdout
    switched = ptx("attention", TILE_PING_PONG="1")
    assert "bar.arrive 3, 256;" in switched
    hinted = ptx("attention_turns")
    assert hinted.replace("attention_turns", "attention") == switched
    assert "bar.arrive 3, 256;" not in ptx("attention_no_turns", TILE_PING_PONG="1")


@needs_sm90
@pytest.mark.skipif("ptxas_path() is None", reason="needs ptxas")
@pytest.mark.parametrize("causal", ["False", "True"])
@pytest.mark.parametrize("overlap", ["1", "0"])
def test_attention_softmax_overlaps_the_previous_pv(tmp_path, overlap, causal):
    """tile-overlap-mma-chain at D=64 (a ring of 4 slots): the consumer loop
    issues S_j = Q K_j^T and P_{j-1} V_{j-1} back to back, waits for the
    first (wait_group 1), runs the softmax, then waits for the second
    (wait_group 0); the first iteration's S runs before the loop and the
    last iteration's P V after it, so each wgmma has two copies.
    TILE_MMA_OVERLAP=0: one loop, each wgmma waited for. ptxas: no
    spills."""
    sig = ", ".join(["f16[128,4096,64]"] * 4) + ", f32"
    ptx = run_tilec([BENCH + "::attention", "--args", sig, "-D", "BM=128", "-D", "BN=128",
                     "-D", "D=64", "-D", f"CAUSAL={causal}", "--target", "sm_90",
                     "--emit", "ptx"], tmp_path, TILE_MMA_OVERLAP=overlap).stdout
    # S (m64n128) is D / 16 = 4 k-steps, P V (m64n64) BN / 16 = 8.
    copies = 2 if overlap == "1" else 1
    if causal == "True":  # the unmasked copy of the loop (tile-split-uniform-masks)
        copies += 1
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16") == 4 * copies
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n64k16") == 8 * copies
    assert ("wgmma.wait_group.sync.aligned 1;" in ptx) == (overlap == "1")
    report = _ptxas_info(tmp_path, ptx, "attention")
    assert NO_SPILLS in report, report


@needs_sm90
@pytest.mark.parametrize("causal", ["False", "True"])
def test_attention_epilogue_reuses_the_ring(tmp_path, causal):
    """D=128, 128x128 blocks: K and V rings of 3 slots (96 KB each) and Q
    (32 KB) fill the block's 227 KB. That fits because tile-allocate-shared
    counts time through the consumers' ops of the warp-specialized kernel:
    after their loop the rings are dead, so the output store is staged
    (tile-stage-stores) on the K ring's bytes and the epilogue's scratch
    starts at a tilegpu.scratch_base below the rings."""
    args = [BENCH + "::attention", "--args", ATTENTION_SIG, "-D", "BM=128", "-D", "BN=128",
            "-D", "D=128", "-D", f"CAUSAL={causal}", "--target", "sm_90"]
    pipelined = run_tilec(args + ["--emit", "pipelined"], tmp_path).stdout
    rings = re.findall(r"alloc_shared \{offset = (\d+) : i64\} : "
                       r"!tilegpu.shared<128x128xf16, slots = 3, swizzle = 128>", pipelined)
    assert len(rings) == 2, pipelined
    staged = re.search(r"alloc_shared \{offset = (\d+) : i64\} : "
                       r"!tilegpu.shared<128x128xf16, slots = 1, row_stride = 136>", pipelined)
    assert staged and int(staged.group(1)) < 3 * 128 * 128 * 2, pipelined
    assert "tilegpu.stage_layout" in pipelined
    nvvm = run_tilec(args + ["--emit", "nvvm"], tmp_path).stdout
    shared = int(re.search(r"tile.shared_mem = (\d+)", nvvm).group(1))
    assert 2 * 3 * 128 * 128 * 2 + 128 * 128 * 2 <= shared <= 227 * 1024


BACKWARD = os.path.join(ROOT, "examples", "flash_attention_backward.py")
BACKWARD_SIG = {
    "attention_dkdv": ", ".join(["f16[128,4096,128]"] * 4 + ["f32[128,4096]"] * 2 +
                                ["f32[128,4096,128]"] * 2) + ", i32, f32",
    "attention_dq": ", ".join(["f16[128,4096,128]"] * 4 + ["f32[128,4096]"] * 2 +
                              ["f32[128,4096,128]"]) + ", i32, f32",
}


@needs_sm90
@pytest.mark.skipif("ptxas_path() is None", reason="needs ptxas")
@pytest.mark.parametrize("tma", ["1", "0"])
@pytest.mark.parametrize("kernel,bm,bn,wide,narrow,copies", [
    # dV += P^T dO, dK += dS^T Q: n = D = 128. tile-split-uniform-masks: the
    # masked diagonal, the unmasked blocks, the masked blocks past `seq`.
    ("attention_dkdv", 64, 128, 8, 16, 3),
    ("attention_dq", 128, 64, 4, 16, 2),  # dQ += dS K; unmasked, then masked
])
def test_attention_backward_runs_on_wgmma(tmp_path, kernel, bm, bn, wide, narrow, copies, tma):
    """The backward's gradient kernels at D=128: every product a wgmma of
    128 rows; the block loaded in front of the loop (K and V, or Q and dO)
    read by wgmma from shared memory, copied there once by TMA, and the
    loop's blocks (Q and dO, or K and V) streamed through TMA rings that
    the two wgmmas reading each block share, from a producer warpgroup
    (dK/dV's lse and delta rows with them, through rings of their own).
    ptxas: under 128 bytes of spills (mma.sync from registers spilled 2 KB).
    TILE_TMA=0: the same wgmmas from cp.async rings (one per block too), the
    invariant blocks in registers, no producer; under 256 bytes of spills."""
    ptx = run_tilec([BACKWARD + "::" + kernel, "--args", BACKWARD_SIG[kernel],
                     "-D", f"BM={bm}", "-D", f"BN={bn}", "-D", "D=128", "-D", "CAUSAL=True",
                     "--target", "sm_90", "--emit", "ptx"], tmp_path, TILE_TMA=tma).stdout
    assert "mma.sync" not in ptx
    # Without TMA the loop stays whole (its copies spilled there).
    copies = copies if tma == "1" else 1
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16") == wide * copies
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n64k16") == narrow * copies
    assert ("cp.async.bulk.tensor.3d" in ptx) == (tma == "1")
    assert ("cp.async.cg" in ptx) == (tma == "0")
    assert (".maxntid 384, 1, 1" in ptx) == (tma == "1")
    if kernel == "attention_dkdv" and tma == "1":
        # The lse and delta rows of each query block come with Q and dO:
        # 2-d TMA copies in the producer (both in each loop), no global
        # loads left in the consumers' loops.
        assert ptx.count("cp.async.bulk.tensor.2d") >= 2 * copies
        assert "ld.global" not in ptx
    report = _ptxas_info(tmp_path, ptx, "k")
    spilled = re.search(r"(\d+) bytes spill stores", report)
    assert spilled and int(spilled.group(1)) < (128 if tma == "1" else 256), report


@needs_sm90
@pytest.mark.parametrize("tma", ["1", "0"])
def test_batched_matmul_streams_through_the_rings(tmp_path, tma):
    """bench's bmm (3-d loads of one batch, reshaped to 2-d for the mma):
    wgmma from rings, filled by 3-d TMA boxes (1 x rows x 64) or, with
    TILE_TMA=0, by cp.async; no mma.sync from registers."""
    ptx = run_tilec([BENCH + "::bmm", "--args",
                     "f16[8,2048,2048], f16[8,2048,2048], f16[8,2048,2048]",
                     "-D", "BM=128", "-D", "BN=128", "-D", "BK=64",
                     "--target", "sm_90", "--emit", "ptx"], tmp_path, TILE_TMA=tma).stdout
    assert "wgmma.mma_async.sync.aligned.m64n128k16" in ptx
    assert "mma.sync" not in ptx
    if tma == "1":
        assert "cp.async.bulk.tensor.3d" in ptx and "cp.async.cg" not in ptx
    else:
        assert "cp.async.cg.shared.global" in ptx and "cp.async.bulk.tensor" not in ptx


@needs_sm90
def test_tma_for_bf16_and_ragged_shapes(tmp_path):
    ptx = _ptx(tmp_path, "bf16[1000,520], bf16[520,1000], bf16[1000,1000]", TILE_TMA="1")
    assert "cp.async.bulk.tensor" in ptx


@needs_sm90
def test_operands_tma_cannot_describe_keep_the_cp_async_ring(tmp_path):
    """Rows that are not 16-byte multiples (B's 1004 f16): no tile.tma_ok,
    so the loop keeps the cp.async ring; a transposed B (inner stride not
    1): no TMA either (the path without TILE_TMA for such a B)."""
    ptx = _ptx(tmp_path, "f16[4096,4096], f16[4096,1004], f16[4096,1004]", TILE_TMA="1")
    assert "cp.async.bulk.tensor" not in ptx
    assert ptx == _ptx(tmp_path, "f16[4096,4096], f16[4096,1004], f16[4096,1004]")
    sig = "f16[4096,4096], f16[4096,4096] strides=[1,4096], f16[4096,4096]"
    ptx = _ptx(tmp_path, sig, TILE_TMA="1")
    assert "cp.async.bulk.tensor" not in ptx
    assert ptx == _ptx(tmp_path, sig)


@needs_sm90
def test_pipelined_stage_shows_the_tensor_maps(tmp_path):
    out = run_tilec([BENCH + "::matmul", "--args",
                     "f16[4096,4096], f16[4096,4096], f16[4096,4096]", *CONFIG,
                     "--target", "sm_90", "--emit", "pipelined"], tmp_path,
                    TILE_TMA="1").stdout
    assert "{tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}" in out
    assert "!tilegpu.tensor_map<128x64xf16, swizzle = 128>" in out
    assert "!tilegpu.tensor_map<64x64xf16, swizzle = 128>" in out
    assert "tilegpu.tma_load" in out and "tilegpu.mbarrier_wait" in out


# -- a launch on the fake driver (no GPU) -----------------------------------

FAKE_SCRIPT = textwrap.dedent("""
    import ctypes, importlib.util, json, sys
    import tile
    from tile import backend
    from tile.tilec import AbstractArray

    spec = importlib.util.spec_from_file_location("k", sys.argv[2])
    K = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(K)
    M, N, Kd = 1000, 520, 136
    a = AbstractArray("float16", (M, Kd))
    b = AbstractArray("float16", (Kd, N))
    c = AbstractArray("float16", (M, N))
    ir = K.matmul.trace(a, b, c, BM=128, BN=256, BK=64, GROUP=8)
    _tile = backend.load()
    k = _tile.compile(ir, "sm_90", backend.compile_options(0, 3))
    fake = ctypes.CDLL(sys.argv[1])
    fake.fake_cuda_param.restype = ctypes.c_uint64
    fake.fake_cuda_encode.restype = ctypes.c_char_p
    nparams = 15 + len(k.tensor_maps)
    fake.fake_cuda_reset(nparams)
    A, B, C = 0x7f00_0001_0000, 0x7f00_0002_0000, 0x7f00_0003_0000
    args = (A, M, Kd, Kd, 1, B, Kd, N, N, 1, C, M, N, N, 1)
    k.launch((32, 1, 1), args, 0)
    k.launch((32, 1, 1), args, 0)  # the maps come from the cache
    params = [fake.fake_cuda_param(i) for i in range(nparams)]
    refused = None
    try:  # a transposed A under the same binary: the launch refuses it
        k.launch((32, 1, 1), (A, M, Kd, 1, M) + args[5:], 0)
    except Exception as e:
        refused = str(e)
    print(json.dumps({
        "maps": list(k.tensor_maps),
        "encodes": [fake.fake_cuda_encode(i).decode()
                    for i in range(fake.fake_cuda_encodes())],
        "launches": fake.fake_cuda_launches(),
        "params": params, "A": A, "B": B, "refused": refused,
    }))
""")


@pytest.mark.skipif(_fake_cuda() is None, reason="fake libcuda not built")
@pytest.mark.skipif(not _have_ptxas(), reason="needs ptxas")
def test_launch_encodes_and_passes_the_tensor_maps(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_TMA", "1")
    monkeypatch.setenv("TILE_TMA_STORES", "0")  # the operands' maps only
    r = _run_on_fake_driver(FAKE_SCRIPT.replace("sys.argv[2]", repr(BENCH)), tmp_path)
    assert r["maps"] == ["array=0;box=128x64;type=f16;swizzle=128",
                         "array=1;box=64x64;type=f16;swizzle=128"]
    # Two maps, each encoded once for both launches: dims innermost first,
    # strides in bytes, 128B swizzle (3), L2 promotion 128B (2), zeros
    # out of bounds (0).
    assert r["encodes"] == [
        f"type=6 rank=2 address={r['A']} dims=136,1000 strides=272 box=64,128 "
        "elementStrides=1,1 interleave=0 swizzle=3 l2=2 oob=0",
        f"type=6 rank=2 address={r['B']} dims=520,136 strides=1040 box=64,64 "
        "elementStrides=1,1 interleave=0 swizzle=3 l2=2 oob=0",
    ]
    assert r["launches"] == 2
    # The maps follow the 15 flat parameters (the fake writes the address
    # into a map's first word).
    assert r["params"][15:] == [r["A"], r["B"]]
    assert r["params"][0] == r["A"]
    assert "through TMA, which cannot describe it: its inner stride is" in r["refused"]


# -- on the GPU -------------------------------------------------------------

@pytest.fixture(scope="module")
def dev():
    return Device()


CASES = [  # M, N, K
    (256, 256, 256),
    (200, 328, 136),   # ragged everywhere
    (130, 296, 520),   # many K steps, ragged M and N
    (130, 300, 520),   # B's 600-byte rows: not TMA-able, the cp.async ring
    (64, 256, 8),      # K shorter than one tile: one 16-byte row of A
    (300, 264, 40),    # K shorter than one tile
]


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,K", CASES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("specialized", [False, True])
def test_tma_matmul_matches_float64(dev, monkeypatch, M, N, K, dtype, transposed, specialized):
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("TMA wgmma rings are sm_90 only")
    monkeypatch.setenv("TILE_TMA", "1")
    # A producer warpgroup issuing the copies (tile-warp-specialize).
    monkeypatch.setenv("TILE_WARP_SPECIALIZE", "1" if specialized else "0")
    K_ = _bench_kernels()
    tdt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(M * N + K)
    a = torch.randn(M, K, generator=gen).to(tdt).cuda()
    if transposed:  # B^T stored row-major: B has strides (1, K), the fallback
        b = torch.randn(N, K, generator=gen).to(tdt).cuda().t()
    else:
        b = torch.randn(K, N, generator=gen).to(tdt).cuda()
    c = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    cfg = dict(BM=128, BN=256, BK=64, GROUP=8)
    grid = (tile.cdiv(M, 128) * tile.cdiv(N, 256),)
    K_.matmul[grid](a, b, c, **cfg)
    ck = K_.matmul.compile(a, b, c, **cfg)
    ptx = ck.asm["ptx"]
    # TMA takes rows of whole 16-byte units (A's K, B's N) and B unit-strided.
    want_tma = not transposed and (K * 2) % 16 == 0 and (N * 2) % 16 == 0
    assert ("cp.async.bulk.tensor" in ptx) == want_tma
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    got = c.cpu().numpy()
    assert not np.isnan(got).any()
    assert_close(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(K) + 1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("Z,M,N,K", [(3, 256, 256, 128), (2, 200, 328, 136), (3, 130, 264, 40)])
@pytest.mark.parametrize("tma", ["1", "0"])
def test_batched_matmul_matches_float64(dev, monkeypatch, Z, M, N, K, tma):
    """bench's bmm on the wgmma rings (TMA's 3-d boxes or cp.async), ragged
    in M, N and K, against float64; the output poisoned first."""
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("wgmma rings are sm_90 only")
    monkeypatch.setenv("TILE_TMA", tma)
    K_ = _bench_kernels()
    gen = torch.Generator().manual_seed(Z * M + N * K)
    a = torch.randn(Z, M, K, generator=gen).half().cuda()
    b = torch.randn(Z, K, N, generator=gen).half().cuda()
    c = torch.full((Z, M, N), float("nan"), dtype=torch.float16, device="cuda")
    cfg = dict(BM=128, BN=128, BK=64)
    K_.bmm[(tile.cdiv(M, 128), tile.cdiv(N, 128), Z)](a, b, c, **cfg)
    ptx = K_.bmm.compile(a, b, c, **cfg).asm["ptx"]
    # wgmma where both operands' rows are whole 16-element runs (the rings
    # take them either way); else mma.sync from registers.
    rings = K % 16 == 0 and N % 16 == 0
    assert ("wgmma.mma_async" in ptx) == rings
    assert ("cp.async.bulk.tensor.3d" in ptx) == (tma == "1" and rings)
    want = np.matmul(a.double().cpu().numpy(), b.double().cpu().numpy())
    got = c.float().cpu().numpy()
    assert not np.isnan(got).any()
    # f16 output: rounding of the result dominates.
    assert_close(got, want, rtol=2e-3, atol=2e-3 * np.sqrt(K) + 2e-3)


@pytest.mark.gpu
def test_tma_persistent_matmul(dev, monkeypatch):
    """The persistent schedule: the loop's barriers are initialized and
    invalidated once per output tile."""
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("TMA wgmma rings are sm_90 only")
    monkeypatch.setenv("TILE_TMA", "1")
    K_ = _bench_kernels()
    # Ragged against the 128x256x64 tiles, every row a multiple of 16 bytes
    # (N = 1100 would leave B's rows 2200 bytes: the cp.async fallback).
    M, N, K = 1000, 1112, 520
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    K_.matmul[(8,)](a, b, c, BM=128, BN=256, BK=64, GROUP=8, PERSISTENT=True)
    assert "cp.async.bulk.tensor" in K_.matmul.compile(
        a, b, c, BM=128, BN=256, BK=64, GROUP=8, PERSISTENT=True).asm["ptx"]
    want = a.double() @ b.double()
    assert_close(c.double().cpu().numpy(), want.cpu().numpy(), rtol=2e-3, atol=2e-2)
