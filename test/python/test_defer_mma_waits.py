"""TILE_DEFER_MMA_WAITS=1 (tile-defer-mma-waits): the attention backward's
wgmmas issued early and each waited for where its result is first read;
=in-place: only the waits move.
Off by default: on an H100 (2026-12-06) the two backward kernels ran no
faster with it and the fused one slower (ptxas spills the extra live
accumulators), see docs/performance.md.

Without a GPU: the PTX of attention_dq keeps a group in flight and ptxas
assembles it without spilling. With one: the split and fused backward
compiled with it, against float64 on ragged lengths."""

import re

import pytest

from test_fused_backward import EXAMPLE, _fresh_example, check_backward, dev  # noqa: F401 - the fixture
from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _ptxas_info, needs_sm90
from test_wgmma_fence import FENCE_ENV


@needs_sm90
def test_dq_kernel_keeps_a_group_in_flight(tmp_path):
    """attention_dq (d 128, 128 queries, 128 keys): S = Q K^T and
    dP = dO V^T issued back to back, S waited for with one group left
    (P's exponentials beside dP); without the option every product is
    waited for with none left."""
    blocks = "f16[128,4096,128]"
    sig = ", ".join([blocks] * 4 + ["f32[128,4096]"] * 2 + [blocks, "i32", "f32"])

    def ptx(defer):
        out = tmp_path / f"defer{defer}"
        run_tilec([EXAMPLE + "::attention_dq", "--args", sig, "-D", "BM=128", "-D", "BN=128",
                   "-D", "D=128", "-D", "CAUSAL=False", "--target", "sm_90", "--emit", "ptx",
                   "-o", str(out)], tmp_path, TILE_DEFER_MMA_WAITS=defer)
        return (out / "attention_dq.ptx.ptx").read_text()

    deferred, default = ptx("1"), ptx("0")
    waits = lambda text: re.findall(r"wgmma.wait_group.sync.aligned (\d+);", text)  # noqa: E731
    assert "1" in waits(deferred)
    assert set(waits(default)) == {"0"}
    assert NO_SPILLS in _ptxas_info(tmp_path, deferred, "dq")


@pytest.mark.gpu
@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_deferred_backward_matches_float64(dev, monkeypatch, d, causal, fused):  # noqa: F811
    """dQ, dK, dV of the split (attention_dkdv, attention_dq) and fused
    (attention_dkdvdq, dQ by bulk reductions) backward with every loop's
    wgmmas deferred, 333 keys (a ragged last block), gradients poisoned,
    against float64 NumPy."""
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("wgmma is sm_90 only")
    monkeypatch.setenv("TILE_DEFER_MMA_WAITS", "1")
    if fused:
        monkeypatch.setenv("TILE_STAGED_MMA", "1")
        monkeypatch.setenv("TILE_BULK_REDUCE", "1")
    check_backward(torch, _fresh_example(f"fab_defer{int(fused)}"), d, 333, causal, fused,
                   seed=d + causal)


def _dkdv_ptx(tmp_path, name, round_p, source=FENCE_ENV, **env):
    """attention_dkdv's PTX at d 128 as sm90_blocks runs it (64 queries a
    step, 128 keys), 24/240 registers; from fence_env_kernels.py (its fence
    as TILE_TIED_FENCE says) or `source`."""
    blocks = "f16[128,4096,128]"
    sig = ", ".join([blocks] * 4 + ["f32[128,4096]"] * 2 + [blocks] * 2 + ["i32", "f32"])
    out = tmp_path / name
    run_tilec([source + "::attention_dkdv", "--args", sig, "-D", "BM=64", "-D", "BN=128",
               "-D", "D=128", "-D", "CAUSAL=False", "-D", f"ROUND_P={round_p}",
               "--ws-registers", "24,240", "--target", "sm_90", "--emit", "ptx", "-o",
               str(out)], tmp_path, **env)
    return (out / "attention_dkdv.ptx.ptx").read_text()


@needs_sm90
def test_in_place_dkdv_waits_once_for_dv_and_dpt(tmp_path):
    """TILE_DEFER_MMA_WAITS=in-place with ROUND_P (d 128): the dK/dV loop
    waits three times an iteration instead of four (dV += P^T dO and
    dP^T = V dO^T share one wait) and ptxas keeps it in registers. Moving
    the mmas too (=1) spilled while the fence in front of dV's wgmmas was
    NVVM's plain one (TILE_TIED_FENCE=0); with the fence carrying P^T's
    fragments it fits as well."""
    waits = lambda text: len(re.findall(r"wgmma.wait_group.sync.aligned", text))  # noqa: E731
    default = _dkdv_ptx(tmp_path, "default", True, TILE_DEFER_MMA_WAITS="0")
    in_place = _dkdv_ptx(tmp_path, "in_place", True, TILE_DEFER_MMA_WAITS="in-place")
    moved = _dkdv_ptx(tmp_path, "moved", True, TILE_DEFER_MMA_WAITS="1")
    # Two consumer loops (tile-split-uniform-masks cuts off the masked
    # tail): 4 waits each, then 3.
    assert waits(default) == 8 and waits(in_place) == 6
    assert NO_SPILLS in _ptxas_info(tmp_path, in_place, "in_place")
    assert NO_SPILLS in _ptxas_info(tmp_path, moved, "moved")
    moved_plain = _dkdv_ptx(tmp_path, "moved_plain", True, TILE_DEFER_MMA_WAITS="1",
                            TILE_TIED_FENCE="0")
    assert NO_SPILLS not in _ptxas_info(tmp_path, moved_plain, "moved_plain")


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_in_place_backward_matches_float64(dev, d, causal):  # noqa: F811
    """The split backward with attention_dkdv_waits_in_place (ROUND_P, the
    defer_mma_waits="in-place" hint; backward's default at d 128, asked for
    at d 64), 333 keys, gradients poisoned, against float64."""
    torch = dev.torch
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("wgmma is sm_90 only")
    check_backward(torch, _fresh_example(f"fab_in_place{d}{int(causal)}"), d, 333, causal,
                   False, seed=d + causal, in_place=True)


@needs_sm90
def test_defer_mma_waits_hint_compiles_as_the_environment_does(tmp_path):
    """`replace_hints(defer_mma_waits="in-place")` (and `@tile.kernel`'s
    hint) compiles the dK/dV kernel as TILE_DEFER_MMA_WAITS=in-place does,
    whatever the environment says."""
    wrapper = tmp_path / "hinted.py"
    wrapper.write_text(
        "import importlib.util, os, sys\n"
        f"sys.path.insert(0, os.path.dirname({EXAMPLE!r}))\n"
        f"spec = importlib.util.spec_from_file_location('fab_hinted', {EXAMPLE!r})\n"
        "FAB = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(FAB)\n"
        "dkdv = FAB.attention_dkdv.replace_hints(defer_mma_waits='in-place',\n"
        "                                        ws_registers=(24, 240))\n")
    blocks = "f16[128,4096,128]"
    sig = ", ".join([blocks] * 4 + ["f32[128,4096]"] * 2 + [blocks] * 2 + ["i32", "f32"])
    out = tmp_path / "hinted"
    run_tilec([f"{wrapper}::dkdv", "--args", sig, "-D", "BM=64", "-D", "BN=128", "-D", "D=128",
               "-D", "CAUSAL=False", "-D", "ROUND_P=True", "--target", "sm_90", "--emit", "ptx",
               "-o", str(out)], tmp_path, TILE_DEFER_MMA_WAITS="1")
    hinted = (out / "attention_dkdv.ptx.ptx").read_text()
    assert hinted == _dkdv_ptx(tmp_path, "env", True, source=EXAMPLE,
                               TILE_DEFER_MMA_WAITS="in-place")


def test_defer_mma_waits_hint_is_checked():
    """A defer_mma_waits hint other than None, False, True or "in-place"
    is a TileValueError naming the hint."""
    import tile
    from tile.errors import TileValueError

    with pytest.raises(TileValueError, match="defer_mma_waits must be"):
        tile.kernel(defer_mma_waits="early")(lambda x: None)
    hinted = tile.kernel(defer_mma_waits="in-place")(lambda x: None)
    assert hinted.replace_hints(num_stages=2).defer_mma_waits == "in-place"
    with pytest.raises(TileValueError, match="defer_mma_waits must be"):
        hinted.replace_hints(defer_mma_waits=1)
    with pytest.raises(TileValueError, match="defer_mma_waits must be"):
        import numpy as np
        hinted.replace_hints(defer_mma_waits=np.array(["in-place", "in-place"]))


def test_backward_waits_in_place_at_head_dims_64_and_128_in_float16():
    """backward() picks attention_dkdv_waits_in_place at head dims 64 and
    128 in float16 without grouped K/V only (in bfloat16 ptxas spills it,
    grouped it measured slower; d 256 takes other blocks); asked for, it
    runs on the CPU backend too, where the hint means nothing, and its
    gradients match float64 NumPy."""
    import numpy as np

    fab = _fresh_example("fab_head_dims")  # puts examples/ on sys.path
    assert fab.dkdv_waits_in_place(128, np.dtype(np.float16))
    assert fab.dkdv_waits_in_place(128, "torch.float16")
    assert not fab.dkdv_waits_in_place(128, "torch.bfloat16")
    assert not fab.dkdv_waits_in_place(128, np.dtype(np.float32))
    assert fab.dkdv_waits_in_place(64, np.dtype(np.float16))
    assert not fab.dkdv_waits_in_place(256, np.dtype(np.float16))
    assert not fab.dkdv_waits_in_place(64, "torch.bfloat16")
    assert not fab.dkdv_waits_in_place(128, np.dtype(np.float16), group=4)
    device = fab.Device()
    if device.backend != "cpu":
        pytest.skip("the CPU backend's check (the GPU suite runs the CUDA one)")
    rng = np.random.default_rng(7)
    for d, in_place in ((128, True), (64, None)):
        q, k, v, dout = (rng.standard_normal((1, 40, d)).astype(np.float32) for _ in range(4))
        before = (fab.attention_dkdv_waits_in_place.compile_count,
                  fab.attention_dkdv.compile_count)
        out, lse = fab.forward(device, *(device.put(x) for x in (q, k, v)), False, 16, 16)
        grads = fab.backward(device, *(device.put(x) for x in (q, k, v)), out, lse,
                             device.put(dout), False, 16, 16, dkdv_in_place=in_place)
        after = (fab.attention_dkdv_waits_in_place.compile_count,
                 fab.attention_dkdv.compile_count)
        assert (after[0] > before[0], after[1] > before[1]) == (bool(in_place), not in_place)
        wide = [x.astype(np.float64) for x in (q, k, v, dout)]
        for g, want in zip(grads, fab.reference_grads(*wide, d ** -0.5, False)):
            np.testing.assert_allclose(device.get(g), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("value, defer, move", [("", False, True), ("0", False, True),
                                                ("1", True, True), ("in-place", True, False)])
def test_environment_switch(monkeypatch, value, defer, move):
    """TILE_DEFER_MMA_WAITS: unset or 0 off, 1 moves the mmas too,
    in-place only the waits."""
    from tile import backend

    monkeypatch.setenv("TILE_DEFER_MMA_WAITS", value)
    switches = backend.codegen_switches()
    assert (switches["defer_mma_waits"], switches["move_deferred_mmas"]) == (defer, move)
