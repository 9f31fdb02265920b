"""The code-generation switches are compile options (issue 14): the frontend
reads TILE_GPU_PIPELINE, TILE_WGMMA and TILE_NVPTX_SCHED into the options of
each compile, the passes take them as pass options (never the environment),
and the binary cache key is derived from the options alone, so a binary
built under one setting is never served under another."""
import os
import re
import sys

import pytest

import tile
from tile import backend

from test_tilec import EXAMPLES, gpu_backend, needs_tile, run_tilec

pytestmark = needs_tile

MATMUL = [os.path.join(EXAMPLES, "matmul.py") + "::matmul", "--args",
          "f16[512,512], f16[512,512], f32[512,512], i32",
          "-D", "BM=128", "-D", "BN=128", "-D", "BK=32", "--target", "sm_90"]


def test_switches_are_read_into_the_options(monkeypatch):
    for name in ("TILE_GPU_PIPELINE", "TILE_WGMMA", "TILE_NVPTX_SCHED", "TILE_TMA"):
        monkeypatch.delenv(name, raising=False)
    opts = backend.compile_options(4, 3, num_stages=3)
    assert (opts["mma_pipeline"], opts["warpgroup_mma"], opts["nvptx_register_scheduling"],
            opts["num_stages"]) == ("tma", True, True, 3)
    monkeypatch.setenv("TILE_GPU_PIPELINE", "regs")
    monkeypatch.setenv("TILE_WGMMA", "0")
    monkeypatch.setenv("TILE_NVPTX_SCHED", "source")
    opts = backend.compile_options(0, 3)
    assert (opts["mma_pipeline"], opts["warpgroup_mma"], opts["nvptx_register_scheduling"],
            opts["num_stages"]) == ("regs", False, False, 0)


def test_tma_is_the_default_and_tile_tma_0_turns_it_off(monkeypatch):
    for name in ("TILE_GPU_PIPELINE", "TILE_TMA"):
        monkeypatch.delenv(name, raising=False)
    assert backend.compile_options(0, 3)["mma_pipeline"] == "tma"
    monkeypatch.setenv("TILE_TMA", "1")
    assert backend.compile_options(0, 3)["mma_pipeline"] == "tma"
    monkeypatch.setenv("TILE_TMA", "0")
    assert backend.compile_options(0, 3)["mma_pipeline"] == "async"
    monkeypatch.setenv("TILE_TMA", "1")
    monkeypatch.setenv("TILE_GPU_PIPELINE", "regs")  # an explicit choice wins
    assert backend.compile_options(0, 3)["mma_pipeline"] == "regs"


def test_a_bad_pipeline_name_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TILE_GPU_PIPELINE", "fast")
    with pytest.raises(tile.TileValueError, match="TILE_GPU_PIPELINE='fast'.*off, regs, async"):
        backend.compile_options(0, 3)


def _loop_wait(ptx):
    """The cp.async.wait_group count inside the mma loop: slots - 2."""
    waits = re.findall(r"cp\.async\.wait_group\s+(\d+)", ptx)
    return max(int(w) for w in waits)


def test_num_stages_sets_the_ring_depth(tmp_path):
    if not gpu_backend():
        pytest.skip("no GPU backend or ptxas")
    args = MATMUL + ["--emit", "ptx"]
    chosen = run_tilec(args, tmp_path, TILE_WGMMA="0").stdout
    two = run_tilec(args + ["--num-stages", "2"], tmp_path, TILE_WGMMA="0").stdout
    three = run_tilec(args + ["--num-stages", "3"], tmp_path, TILE_WGMMA="0").stdout
    # 128x32 + 32x128 f16 slots: four fit (the compiler's choice), waits for
    # D - 1 = 2 copies in flight; two slots: none; three: one.
    assert (_loop_wait(chosen), _loop_wait(two), _loop_wait(three)) == (2, 0, 1)


def test_too_many_stages_is_an_error_at_the_users_mma(tmp_path):
    if not gpu_backend():
        pytest.skip("no GPU backend or ptxas")
    r = run_tilec(MATMUL + ["--emit", "ptx", "--num-stages", "16"], tmp_path, ok=False,
                  TILE_WGMMA="0")
    assert r.returncode != 0
    assert "num_stages=16 needs 16 shared-memory slots" in r.stderr
    assert re.search(r"matmul\.py:\d+", r.stderr), r.stderr


def test_env_switches_select_the_code(tmp_path):
    if not gpu_backend():
        pytest.skip("no GPU backend or ptxas")
    args = MATMUL + ["--emit", "ptx"]
    ring = run_tilec(args, tmp_path, TILE_WGMMA="0").stdout
    regs = run_tilec(args, tmp_path, TILE_WGMMA="0", TILE_GPU_PIPELINE="regs").stdout
    assert "cp.async" in ring and "cp.async" not in regs


def test_the_binary_cache_key_covers_the_options(tmp_path, monkeypatch):
    """One cache directory, the same IR: every setting gets its own binary."""
    if not gpu_backend():
        pytest.skip("no GPU backend or ptxas")
    import numpy as np
    mod = backend.require()
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_ALWAYS_COMPILE", raising=False)
    import importlib.util
    spec = importlib.util.spec_from_file_location("ex_matmul",
                                                  os.path.join(EXAMPLES, "matmul.py"))
    ex = importlib.util.module_from_spec(spec)
    sys.path.insert(0, EXAMPLES)  # the example imports its _common
    try:
        spec.loader.exec_module(ex)
    finally:
        sys.path.remove(EXAMPLES)
    a = np.zeros((512, 512), np.float16)
    c = np.zeros((512, 512), np.float32)
    text = str(ex.matmul.trace(a, a, c, 512, BM=128, BN=128, BK=32))
    ptx = {}
    for stages in (0, 2):
        for pipeline in ("async", "regs"):
            monkeypatch.setenv("TILE_GPU_PIPELINE", pipeline)
            opts = dict(backend.compile_options(0, 3, stages), warpgroup_mma=False)
            ptx[stages, pipeline] = mod.compile(text, "sm_90", opts).asm["ptx"]
    assert _loop_wait(ptx[0, "async"]) == 2 and _loop_wait(ptx[2, "async"]) == 0
    assert "cp.async" not in ptx[0, "regs"]


def test_the_binary_cache_key_covers_the_register_split(tmp_path, monkeypatch):
    """One cache directory, the same warp-specialized IR: the setmaxnreg
    split (TILE_WS_REGISTERS or a kernel's ws_registers) gets its own
    binary, never the default split's from the cache."""
    if not gpu_backend():
        pytest.skip("no GPU backend or ptxas")
    import numpy as np
    mod = backend.require()
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_ALWAYS_COMPILE", raising=False)
    monkeypatch.setenv("TILE_WARP_SPECIALIZE", "1")
    sys.path.insert(0, os.path.join(os.path.dirname(EXAMPLES), "bench"))
    try:
        import kernels as K
    finally:
        sys.path.pop(0)
    a = np.zeros((1024, 1024), np.float16)
    text = str(K.matmul.trace(a, a, a, BM=128, BN=256, BK=64, GROUP=8))
    ptx = {}
    for split in ((40, 232), (24, 240), (40, 232)):
        opts = dict(backend.compile_options(0, 3), ws_registers=split)
        ptx.setdefault(split, []).append(mod.compile(text, "sm_90", opts).asm["ptx"])
    for (producer, consumer), texts in ptx.items():
        for t in texts:
            assert f"setmaxnreg.dec.sync.aligned.u32 \t{producer};" in t
            assert f"setmaxnreg.inc.sync.aligned.u32 \t{consumer};" in t
