"""The fence in front of a wgmma whose A comes from registers (attention's
P V, the backward's dV += P^T dO and dK += dS^T Q) carries the A
fragments (tile.ptx.wgmma_fence), so every fragment is computed before
it: the compiler's default. The example's backward kernels ask for the
plain fence (tied_wgmma_fence=False: tied, they measured up to 14% slower on an
H100, 2026-12-07); fence_env_kernels.py gives them back to
TILE_TIED_FENCE here. With NVVM's plain fence (TILE_TIED_FENCE=0, as before 2026-12-07)
LLVM sank fragment arithmetic between the wgmmas and ptxas injected a
warpgroup.arrive before each (C7519: 6 to 18 of them in the backward's
kernels, 20 bytes of spills in the causal dK/dV kernel), and in the
persistent attention kernel, where one landed on a divergent path,
serialized every wgmma of the kernel (C7520).

Without a GPU: ptxas -v on the PTX of each kernel. The GPU suite runs these
kernels against float64 elsewhere (test_example_kernels.py,
test_persistent_attention.py, test_fused_backward.py)."""

import os

import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import NO_SPILLS, _ptxas_info, needs_sm90

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
BENCH = os.path.join(ROOT, "bench", "kernels.py")
FENCE_ENV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fence_env_kernels.py")

ARRAY = "f16[64,2048,128]"
ROWS = "f32[64,2048]"
KERNELS = {
    "example": (os.path.join(EXAMPLES, "flash_attention.py"), "attention",
                ", ".join([ARRAY] * 4) + ", i32, f32", ["BM=128", "BN=128", "D=128"]),
    "persistent": (BENCH, "attention_persistent", ", ".join([ARRAY] * 4) + ", f32",
                   ["BM=128", "BN=128", "D=128"]),
    "dkdv": (FENCE_ENV, "attention_dkdv",
             ", ".join([ARRAY] * 4 + [ROWS] * 2 + [ARRAY] * 2) + ", i32, f32",
             ["BM=64", "BN=128", "D=128"]),
    "dq": (FENCE_ENV, "attention_dq",
           ", ".join([ARRAY] * 4 + [ROWS] * 2 + [ARRAY]) + ", i32, f32",
           ["BM=128", "BN=64", "D=128"]),
}


def _ptxas(tmp_path, name, causal, **env):
    path, kernel, sig, consts = KERNELS[name]
    args = [f"{path}::{kernel}", "--args", sig, "--target", "sm_90", "--emit", "ptx"]
    for c in consts + [f"CAUSAL={causal}"]:
        args += ["-D", c]
    ptx = run_tilec(args, tmp_path, **env).stdout
    assert "wgmma.mma_async" in ptx and "setmaxnreg.dec" in ptx
    return _ptxas_info(tmp_path, ptx, f"{name}_{causal}_{len(env)}")


@needs_sm90
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_no_fence_left_to_ptxas(tmp_path, name, causal):
    info = _ptxas(tmp_path, name, causal)
    assert "C7519" not in info and "C7520" not in info and "serialized" not in info
    assert NO_SPILLS in info


@needs_sm90
def test_the_plain_fence_left_them_to_ptxas(tmp_path):
    """TILE_TIED_FENCE=0 brings the plain fence back, and what ptxas did
    with it: this is what test_no_fence_left_to_ptxas guards against."""
    assert "C7519" in _ptxas(tmp_path, "dq", False, TILE_TIED_FENCE="0")
    # Causal: the non-causal persistent kernel's rotated loop (2026-12-07)
    # no longer puts ptxas's fence on a divergent path.
    assert "C7520" in _ptxas(tmp_path, "persistent", True, TILE_TIED_FENCE="0")


@needs_sm90
def test_the_backward_kernels_ask_for_the_plain_fence(tmp_path):
    """examples/flash_attention_backward.py's attention_dkdv carries
    tied_wgmma_fence=False: compiled as the example defines it, its fence is
    the plain one (ptxas injects its own) whatever TILE_TIED_FENCE says."""
    _, kernel, sig, consts = KERNELS["dkdv"]
    args = [os.path.join(EXAMPLES, "flash_attention_backward.py") + "::" + kernel, "--args",
            sig, "--target", "sm_90", "--emit", "ptx"]
    for c in consts + ["CAUSAL=False"]:
        args += ["-D", c]
    ptx = run_tilec(args, tmp_path, TILE_TIED_FENCE="1").stdout
    assert "C7519" in _ptxas_info(tmp_path, ptx, "dkdv_hinted")


def test_tied_wgmma_fence_hint_is_checked():
    """tied_wgmma_fence takes None, False or True, and replace_hints keeps it."""
    import tile
    from tile.errors import TileValueError

    with pytest.raises(TileValueError, match="tied_wgmma_fence must be"):
        tile.kernel(tied_wgmma_fence=1)(lambda x: None)
    hinted = tile.kernel(tied_wgmma_fence=False)(lambda x: None)
    assert hinted.replace_hints(num_stages=2).tied_wgmma_fence is False
    assert hinted.codegen_hint_options() == {"tied_fence": False}
    assert hinted.replace_hints(tied_wgmma_fence=None).codegen_hint_options() == {}
    # Launched as a programmatic dependent launch, it compiles with the same fence.
    assert hinted._dependent().codegen_hint_options() == {"tied_fence": False}
    with pytest.raises(TileValueError, match="tied_wgmma_fence must be"):
        hinted.replace_hints(tied_wgmma_fence="no")


def test_ping_pong_hint_is_checked():
    """ping_pong takes None, False or True; replace_hints and the
    programmatic dependent copy keep it; it sets the ping_pong option."""
    import tile
    from tile.errors import TileValueError

    with pytest.raises(TileValueError, match="ping_pong must be"):
        tile.kernel(ping_pong=1)(lambda x: None)
    hinted = tile.kernel(ping_pong=True)(lambda x: None)
    assert hinted.replace_hints(num_stages=2).ping_pong is True
    assert hinted.codegen_hint_options() == {"ping_pong": True}
    assert hinted._dependent().codegen_hint_options() == {"ping_pong": True}
    assert hinted.replace_hints(ping_pong=False).codegen_hint_options() == \
        {"ping_pong": False}
    assert hinted.replace_hints(ping_pong=None).codegen_hint_options() == {}
    with pytest.raises(TileValueError, match="ping_pong must be"):
        hinted.replace_hints(ping_pong="no")
