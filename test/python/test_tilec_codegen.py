"""tilec's code-generation checks: what the PTX and SASS of a kernel hold on
sm_90 (wgmma, ftz special functions, deterministic output, --emit sass).
Helpers come from test_tilec.py (tilec runs as a user runs it, a
subprocess)."""

import os
import re
import shutil
import sys

import pytest

from test_tilec import (EXAMPLES, KERNELS, ROOT, example_args, gpu_backend, needs_gpu_backend,
                        needs_tile, run_tilec)

@needs_tile
@pytest.mark.parametrize("wgmma", ["1", "0"])
def test_matmul_ptx_uses_wgmma_on_sm90(tmp_path, wgmma):
    # A 128x128x64 f16 matmul loop on sm_90: warpgroup mma from a swizzled
    # shared-memory ring (sm_90a PTX); TILE_WGMMA=0 keeps mma.sync.
    if not gpu_backend():
        pytest.skip("no GPU backend or ptxas")
    kernel, _, _ = KERNELS["matmul"]
    args = [os.path.join(EXAMPLES, "matmul.py") + "::" + kernel, "--args",
            "f16[512,512], f16[512,512], f32[512,512], i32",
            "-D", "BM=128", "-D", "BN=128", "-D", "BK=64",
            "--emit", "ptx", "--target", "sm_90"]
    ptx = run_tilec(args, tmp_path, TILE_WGMMA=wgmma, TILE_TMA="0").stdout
    if wgmma == "1":
        assert re.search(r"^\.target sm_90a$", ptx, re.M)
        assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
        assert "fence.proxy.async.shared::cta" in ptx
        assert "mma.sync" not in ptx
    else:
        assert re.search(r"^\.target sm_90$", ptx, re.M)
        assert "wgmma" not in ptx
        assert "mma.sync.aligned.m16n8k16" in ptx


@needs_gpu_backend
def test_sm90_ptx_is_the_same_from_run_to_run(tmp_path):
    """Six processes compile the one-loop attention of bench/kernels.py with
    the runtime `if`: the same PTX each time. tile-overlap-mma-chain
    ordered the values its rotated loop carries by pointer, so the carried
    values and the registers changed between runs (two forms, about one run
    in three)."""
    bench = os.path.join(ROOT, "bench", "kernels.py")
    sig = ", ".join(["f16[128,4096,128]"] * 4) + ", f32"
    outs = {run_tilec([bench + "::attention_diag_if", "--args", sig, "-D", "BM=128", "-D",
                       "BN=128", "-D", "D=128", "-D", "CAUSAL=False", "--target", "sm_90",
                       "--emit", "ptx"], tmp_path, TILE_CACHE_DIR=str(tmp_path / f"c{i}")).stdout
            for i in range(6)}
    assert len(outs) == 1


EXP2_KERNELS = '''
import tile

@tile.kernel
def exp2s(x, flushed, kept, BLOCK: tile.Constant[int]):
    i = tile.bid(0)
    a = tile.load(x, index=(i,), shape=(BLOCK,))
    tile.store(flushed, index=(i,), tile=tile.exp2(a * 2.0 - 1.0, flush_to_zero=True))
    tile.store(kept, index=(i,), tile=tile.exp2(a))


@tile.kernel
def rsqrts(x, flushed, kept, BLOCK: tile.Constant[int]):
    i = tile.bid(0)
    a = tile.load(x, index=(i,), shape=(BLOCK,))
    tile.store(flushed, index=(i,), tile=tile.rsqrt(a + 1.0, flush_to_zero=True))
    tile.store(kept, index=(i,), tile=tile.rsqrt(a))
'''


@needs_gpu_backend
def test_exp2_flush_to_zero_is_one_ftz_instruction(tmp_path):
    """exp2(x, flush_to_zero=True) lowers to ex2.approx.ftz.f32 alone (the
    flushes of its input and result are the instruction's own), plain exp2
    to ex2.approx.f32; no f32 compare or select is left for the flushes.
    rsqrt the same with rsqrt.approx.ftz.f32."""
    src = tmp_path / "exp2s.py"
    src.write_text(EXP2_KERNELS)
    ptx = run_tilec([f"{src}::exp2s", "--args", "f32[512], f32[512], f32[512]", "-D",
                     "BLOCK=128", "--target", "sm_90", "--emit", "ptx"], tmp_path).stdout
    assert len(re.findall(r"ex2\.approx\.ftz\.f32", ptx)) == 4
    assert len(re.findall(r"ex2\.approx\.f32", ptx)) == 4
    assert not re.search(r"setp\.\w+\.f32|selp\.f32|abs\.f32", ptx)
    ptx = run_tilec([f"{src}::rsqrts", "--args", "f32[512], f32[512], f32[512]", "-D",
                     "BLOCK=128", "--target", "sm_90", "--emit", "ptx"], tmp_path).stdout
    assert len(re.findall(r"rsqrt\.approx\.ftz\.f32", ptx)) == 4
    assert len(re.findall(r"rsqrt\.approx\.f32", ptx)) == 4
    assert not re.search(r"setp\.\w+\.f32|selp\.f32|abs\.f32", ptx)


@needs_gpu_backend
def test_emit_sass_runs_the_disassembler_on_the_cubin(tmp_path):
    """--emit sass hands the cubin to nvdisasm (-c -g) from PATH and prints
    what it prints; here a stand-in nvdisasm that shows its flags and the
    file's first bytes (the build machine has no disassembler)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nvdisasm"
    fake.write_text('#!/bin/sh\necho "flags: $1 $2"\nhead -c 4 "$3" | od -An -c\n')
    fake.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    out = run_tilec(example_args("softmax") + ["--emit", "sass", "--target", "sm_90"],
                    tmp_path, PATH=path).stdout
    assert "flags: -c -g" in out
    assert re.search(r"177\s+E\s+L\s+F", out), out
    d = tmp_path / "out"
    run_tilec(example_args("softmax") + ["--emit", "all", "--target", "sm_90", "-o", str(d)],
              tmp_path, PATH=path)
    assert "flags: -c -g" in (d / "softmax.sass.sass").read_text()


@needs_gpu_backend
def test_emit_sass_without_a_disassembler_says_where_to_get_one(tmp_path):
    """No nvdisasm or cuobjdump: --emit sass fails with a message naming
    them and the wheel, exit status 1; --emit all leaves the stage out."""
    path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    cuda = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin")
    if any(shutil.which(t, path=os.pathsep.join([path, cuda, "/usr/local/cuda/bin"]))
           for t in ("nvdisasm", "cuobjdump")):
        pytest.skip("a disassembler is installed here")
    r = run_tilec(example_args("softmax") + ["--emit", "sass", "--target", "sm_90"],
                  tmp_path, ok=False, PATH=path)
    assert r.returncode == 1
    assert "nvdisasm or cuobjdump" in r.stderr and "nvidia-cuda-nvdisasm" in r.stderr
    d = tmp_path / "out"
    run_tilec(example_args("softmax") + ["--emit", "all", "--target", "sm_90", "-o", str(d)],
              tmp_path, PATH=path)
    assert (d / "softmax.cubin.cubin").exists() and not (d / "softmax.sass.sass").exists()
