"""What the examples share: arrays on whichever backend runs the kernels
(NumPy on the CPU backend, torch on CUDA) and a float64 check."""

import os
import sys

import numpy as np

# Run from a source checkout without installing: python3 examples/x.py
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(_ROOT, "python-frontend"))

import tile  # noqa: E402


class Device:
    def __init__(self):
        self.backend = tile.default_backend()
        self.torch = None
        if self.backend == "cuda":
            import torch
            self.torch = torch

    def put(self, a):
        a = np.ascontiguousarray(a)
        return a.copy() if self.torch is None else self.torch.from_numpy(a).cuda()

    def empty(self, shape, dtype):
        """An output poisoned with NaN, so unwritten elements show."""
        return self.put(np.full(shape, np.nan, dtype))

    def fill_zero(self, x):
        """Zeroes a device array in place (an accumulator of atomics)."""
        x[...] = 0

    def concurrently(self, *launches):
        """Runs launches that read none of each other's results; here one
        after the other (a torch device overlaps them on two streams)."""
        for launch in launches:
            launch()

    def get(self, x):
        if self.torch is None:
            return np.asarray(x)
        self.torch.cuda.synchronize()
        return x.cpu().numpy()


def check(name, got, want, rtol, atol):
    """Prints the error and returns the exit status (0 when close)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    err = np.abs(got - want)
    bad = ~(err <= atol + rtol * np.abs(want))  # NaN counts as bad
    print(f"{name}: backend={tile.default_backend()} shape={want.shape} "
          f"max abs err={np.nanmax(err) if err.size else 0:.3e}"
          f" -> {'OK' if not bad.any() else f'MISMATCH in {int(bad.sum())} elements'}")
    return int(bad.any())
