"""What a search does around each timed run, shared by tile.autotune and
tile.tune: host-clock timing (the CPU backend), medians, copying back and
zeroing the arguments a kernel writes (restore_value, reset_to_zero, with
the arrays' own methods), and the progress bar of a long search."""
import sys
import time

from .errors import TileTypeError, user_location

PROGRESS_AFTER_S = 1.0


def host_times(run, before, warm, reps):
    for _ in range(warm):
        before()
        run()
    out = []
    clock = time.perf_counter
    for _ in range(reps):
        before()
        t = clock()
        run()
        out.append((clock() - t) * 1e3)
    return out


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


# -- restore_value / reset_to_zero: the arrays' own copy methods ---------------
def copy_of(x, name, tuner):
    if hasattr(x, "clone") and hasattr(x, "copy_"):  # torch
        return x.clone()
    if hasattr(x, "copy") and hasattr(x, "__setitem__"):  # NumPy, CuPy
        return x.copy()
    raise TileTypeError(f"restore_value: argument '{name}' is a {type(x).__name__}, which "
                        "tile cannot copy (it restores torch tensors, NumPy and CuPy arrays)",
                        "drop it from restore_value, or pass a torch/NumPy/CuPy array",
                        kernel=tuner.__name__, location=user_location())


def copy_into(x, saved, name, tuner):
    if hasattr(x, "copy_"):
        x.copy_(saved)
    else:
        x[...] = saved


def zero(x, name, tuner):
    if hasattr(x, "zero_"):
        x.zero_()
    elif hasattr(x, "fill") and hasattr(x, "__setitem__"):
        x.fill(0)
    else:
        raise TileTypeError(f"reset_to_zero: argument '{name}' is a {type(x).__name__}, "
                            "which tile cannot zero (torch tensors, NumPy and CuPy arrays)",
                            kernel=tuner.__name__, location=user_location())


class Progress:
    """A one-line progress bar on stderr for searches that last more than a
    second, drawn only when stderr is a terminal."""

    def __init__(self, name, total):
        self.name, self.total = name, total
        self.start = time.perf_counter()
        try:
            self.tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.drawn = False

    def update(self, n):
        if not self.tty or time.perf_counter() - self.start < PROGRESS_AFTER_S:
            return
        width = 30
        filled = int(width * n / max(self.total, 1))
        sys.stderr.write(f"\rtile: autotuning {self.name} [{'#' * filled}"
                         f"{'.' * (width - filled)}] {n}/{self.total} configs")
        sys.stderr.flush()
        self.drawn = True

    def done(self):
        if self.drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

