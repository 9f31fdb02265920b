"""Where a launch runs: CUDA devices, graph capture, traced torch tensors.

Off the hot path: kernel.py calls these on a dispatch-cache miss (device
mix, capture) or for CompiledKernels of one device among several GPUs. No
torch import here; torch is used only when its tensors were passed.
"""

import contextlib
import sys

from . import interop
from .errors import TileLaunchError, user_location

_NO_GUARD = contextlib.nullcontext()


def check_devices(kern, key):
    """Torch tensors on different CUDA devices (their key parts name the
    device when several GPUs are visible) cannot share a launch."""
    on = [(name, interop.torch_device_of(part)) for (name, const), part
          in zip(kern.params, key) if not const]
    on = [(name, d) for name, d in on if d is not None]
    if len({d for _, d in on}) > 1:
        raise TileLaunchError(
            "the tensor arguments are on different CUDA devices: "
            + ", ".join(f"'{name}' on cuda:{d}" for name, d in on),
            "move them to one device (t.to(other.device)); a launch runs on one GPU",
            kernel=kern.__name__, location=user_location())


def refuse_in_capture(kern, stream):
    """A first launch compiles and loads the kernel: not inside a CUDA graph
    capture, which may only record stream work."""
    if kern._resolve_backend() != "cuda" or not interop.stream_capturing(stream):
        return
    raise TileLaunchError(
        "the first launch of this specialization would compile and load the kernel "
        "inside a CUDA graph capture", "warm up first: launch it once with the same "
        "argument dtypes, ranks and alignment before capturing (torch.compile's "
        "mode='reduce-overhead' warms up by itself)",
        kernel=kern.__name__, location=user_location())


def run_on_device(ck, grid, flat, stream):
    """CompiledKernel.run for torch tensors on CUDA device `ck.device`
    (several GPUs visible): the default stream is that device's current
    torch stream, launched with the device current (the runtime launches in
    the stream's context, or the current one for the default streams); a
    stream object of another device is refused."""
    torch = sys.modules["torch"]
    if stream is not None:
        where = interop.stream_device(stream)
        if where is not None and where != ck.device:
            raise TileLaunchError(
                f"the tensor arguments are on cuda:{ck.device} but the stream is on "
                f"cuda:{where}", "launch on a stream of the tensors' device",
                kernel=ck.name, location=user_location())
        stream = stream if stream.__class__ is int else ck._stream_of(stream)
        guard = _NO_GUARD
    else:
        c = torch._C
        stream = c._cuda_getCurrentRawStream(ck.device)
        guard = _NO_GUARD if c._cuda_getDevice() == ck.device else torch.cuda.device(ck.device)
    with guard:
        try:
            ck._launch(grid, tuple(flat), stream)
        except Exception as e:
            raise ck._launch_error(e) from None


class TracedLaunch:
    """What a launch with fake or functional torch tensors runs (torch is
    tracing): tile.torch records it as a `tile::launch` op of the graph."""

    __slots__ = ("kernel", "values")
    binary = None  # never cached by the dispatcher

    def __init__(self, kern, values):
        self.kernel, self.values = kern, values

    def run(self, grid, flat, stream):
        from .torch import traced_launch
        traced_launch(self.kernel, grid, self.values, stream)
