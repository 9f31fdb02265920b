"""TILE_DELAY_STAGED_MMA=1 (tile-delay-staged-mma): the fused attention
backward's dQ product one iteration late, dS's two staging slots handed
between the consumer warpgroups by mbarriers instead of a barrier of both
every iteration. Off by default: correct on an H100 (2026-12-06), but no
faster than the fused kernel without it (docs/performance.md).

Without a GPU: the pipelined IR, the PTX's wgmmas and ptxas. With one:
the gradients against float64 on ragged lengths."""

import re

import pytest

from test_fused_backward import (EXAMPLE, _fresh_example, _sig, check_backward,  # noqa: F401
                                 dev)
from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import _ptxas_info, needs_sm90


@needs_sm90
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_delayed_dq_product(tmp_path, d, causal):
    """The staging is unsynchronized between an mbarrier wait (empty) and
    arrive (full); dQ's product and reduction sit in an scf.if of the
    loop and once more after it: one more loop's worth of dQ wgmmas (8
    m64n64k16) than the loop copies of tile-split-uniform-masks have.
    ptxas assembles it; without the option the staging keeps its barrier."""
    bm = 64 if d == 128 else 128  # sm90_blocks
    out = tmp_path / "out"
    run_tilec([EXAMPLE + "::attention_dkdvdq", "--args", _sig(d), "-D", f"BM={bm}", "-D",
               "BN=128", "-D", f"D={d}", "-D", f"CAUSAL={causal}", "--target", "sm_90",
               "--emit", "all", "-o", str(out)], tmp_path, TILE_STAGED_MMA="1",
              TILE_BULK_REDUCE="1", TILE_DELAY_STAGED_MMA="1")
    pipelined = (out / "attention_dkdvdq.pipelined.mlir").read_text()
    ptx = (out / "attention_dkdvdq.ptx.ptx").read_text()
    assert re.search(r"tilegpu.mbarrier_wait .*\n\s*tilegpu.stage_operand .*"
                     r"\{unsynchronized\}.*\n\s*tilegpu.mbarrier_arrive", pipelined)
    assert re.search(r"tilegpu.mbarrier_wait .*\n\s*%\S+ = tilegpu.mma .*a_transposed.*\n"
                     r"\s*tilegpu.mbarrier_arrive .*\n\s*tilegpu.bulk_reduce_add", pipelined)
    copies = 3 if causal else 2
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n64k16") == 3 * 8 * copies + 8
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16") == 2 * 4 * copies
    report = _ptxas_info(tmp_path, ptx, "delayed")
    spills = int(re.search(r"(\d+) bytes spill stores", report).group(1))
    assert spills <= 160, report
    run_tilec([EXAMPLE + "::attention_dkdvdq", "--args", _sig(d), "-D", f"BM={bm}", "-D",
               "BN=128", "-D", f"D={d}", "-D", f"CAUSAL={causal}", "--target", "sm_90",
               "--emit", "pipelined", "-o", str(tmp_path / "plain")], tmp_path,
              TILE_STAGED_MMA="1", TILE_BULK_REDUCE="1")
    assert "unsynchronized" not in (tmp_path / "plain" /
                                    "attention_dkdvdq.pipelined.mlir").read_text()


@pytest.mark.gpu
@pytest.mark.parametrize("seq", [256, 333])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_delayed_backward_matches_float64(dev, monkeypatch, d, causal, seq):  # noqa: F811
    """dQ, dK, dV of the fused backward with dQ one iteration late, a whole
    and a ragged last block, gradients poisoned, against float64 NumPy."""
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the fused backward's staged wgmma is sm_90 only")
    for name in ("TILE_DELAY_STAGED_MMA", "TILE_STAGED_MMA", "TILE_BULK_REDUCE"):
        monkeypatch.setenv(name, "1")
    check_backward(torch, _fresh_example("fab_delayed"), d, seq, causal, fused=True,
                   seed=seq + d + causal)
