"""bench's attention in the autotune space's small-block config (issue 19):
64 query rows, one consumer warpgroup beside the producer, 3 ring slots and
the setmaxnreg split (24, 232), so that two blocks share an SM as cuDNN's
D64 forward does (64x128 blocks of one warpgroup).

Without a GPU: on sm_90 the block launches with 128 registers a thread
(.maxnreg: (24 + 232) / 2) and needs at most half an SM's shared memory at
D 64, with no spills. Numbers against float64 on whatever backend runs
kernels (the CPU ignores the register split)."""

import math
import re

import numpy as np
import pytest

from test_split_masks import BENCH, _reference
from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _bench_kernels, _ptxas_info, needs_sm90
from tilehelp import Device, assert_close

SM90_SHARED_PER_SM = 233472  # 228 KB; each block also reserves 1 KB
HINTS = dict(ws_registers=(24, 232), num_stages=3)

SMALL = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("bench_kernels", {BENCH!r})
K = importlib.util.module_from_spec(spec)
spec.loader.exec_module(K)
small = K.attention.replace_hints(**{HINTS!r})
"""


def test_the_config_is_in_the_benchs_space():
    import tile
    space = _bench_kernels().ATTENTION_SPACE
    assert tile.Config(dict(BM=64, BN=128), **HINTS) in space


@needs_sm90
@pytest.mark.parametrize("d,causal", [(64, False), (64, True), (128, True)])
def test_two_blocks_fit_an_sm(tmp_path, d, causal):
    src = tmp_path / "small.py"
    src.write_text(SMALL)
    sig = ", ".join([f"f16[128,4096,{d}]"] * 4) + ", f32"
    args = [f"{src}::small", "--args", sig, "-D", "BM=64", "-D", "BN=128", "-D", f"D={d}",
            "-D", f"CAUSAL={causal}", "--target", "sm_90"]
    ptx = run_tilec(args + ["--emit", "ptx"], tmp_path).stdout
    assert ".maxntid 256, 1, 1" in ptx and re.search(r"\.maxnreg\s+128\b", ptx)
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+24;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)
    assert NO_SPILLS in _ptxas_info(tmp_path, ptx, f"small_{d}_{causal}")
    gpu = run_tilec(args + ["--emit", "gpu"], tmp_path).stdout
    shared = int(re.search(r"tile\.shared_mem = (\d+)", gpu).group(1))
    if d == 64:  # two to an SM
        assert 2 * (shared + 1024) <= SM90_SHARED_PER_SM, shared


@pytest.mark.numerics
@pytest.mark.parametrize("causal", [False, True])
def test_small_blocks_match_float64(causal):
    dev = Device()
    gpu = dev.backend == "cuda"
    L, d = (640, 64) if gpu else (256, 32)
    dtype = np.float16 if gpu else np.float32
    heads = 3
    rng = np.random.default_rng(11 + causal)
    q, k, v = (rng.standard_normal((heads, L, d)).astype(dtype) for _ in range(3))
    out = dev.poisoned((heads, L, d), dtype)
    scale = 1.0 / math.sqrt(d)
    small = _bench_kernels().attention.replace_hints(**HINTS)
    small[(L // 64, heads)](dev.put(q), dev.put(k), dev.put(v), out, scale, BM=64, BN=128,
                            D=d, CAUSAL=causal)
    got = dev.get(out)
    assert not np.isnan(got).any()
    tol = 2e-2 if gpu else 1e-4
    assert_close(got, _reference(q, k, v, scale, causal), rtol=tol, atol=tol)
