"""examples/flash_attention_backward.py's gradient kernels with their
tied_wgmma_fence hint (False) set back to None, so that TILE_TIED_FENCE
decides their fence: test_wgmma_fence.py and test_defer_mma_waits.py compile
them (tilec FILE::kernel) both ways."""
import importlib.util
import os
import sys

_EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples", "flash_attention_backward.py")
sys.path.insert(0, os.path.dirname(_EXAMPLE))
_spec = importlib.util.spec_from_file_location("fab_fence_env", _EXAMPLE)
_FAB = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_FAB)

attention_dkdv = _FAB.attention_dkdv.replace_hints(tied_wgmma_fence=None)
attention_dq = _FAB.attention_dq.replace_hints(tied_wgmma_fence=None)
