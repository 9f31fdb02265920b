"""`tile.tune`: cuTile's autotuning namespace.

`exhaustive_search(search_space, stream, grid_fn, kernel, args_fn, hints_fn)`
times every configuration of `search_space` and returns a `TuningResult`
(best, successes, failures) of `Measurement`s, as cuTile's does. It runs on
tile.autotune's timing (autotune.py): CUDA events on `stream` on the GPU, a
host timer on the CPU backend, where launches are synchronous. Samples are
taken in batches until the 95% confidence half-width is within 1% of the
mean (or 0.5 us), or a sample or time budget runs out.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, Callable, Generic, Sequence, TypeVar

from . import backend as _backend
from . import interop
from .tuning_runs import host_times
from .errors import TileLaunchError, user_location
from .kernel import Kernel

__all__ = ["exhaustive_search", "TuningResult", "Measurement"]

T = TypeVar("T")

_WARMUP_RUNS = 3
_BATCH = 5
_MIN_SAMPLES = 5
_MAX_SAMPLES = 1000
_MAX_US_PER_CONFIG = 5e6


@dataclass(frozen=True, kw_only=True)
class Measurement(Generic[T]):
    """One configuration's timing: mean and 95% half-width in microseconds."""
    config: T
    mean_us: float
    num_samples: int
    error_margin_us: float


@dataclass(frozen=True, kw_only=True)
class TuningResult(Generic[T]):
    """`best`, every success, and `(config, exception type, message)` per failure."""
    best: Measurement
    successes: Sequence[Measurement]
    failures: Sequence[tuple]

    def summary(self, *, top_k=10, bottom_k=2) -> str:
        """The ranking as text: the fastest `top_k` and slowest `bottom_k`
        successes, then the failures."""
        ranked = sorted(self.successes, key=lambda m: m.mean_us)
        lines = [f"{len(self.successes)} succeeded, {len(self.failures)} failed"]
        shown = ranked if len(ranked) <= top_k + bottom_k + 1 else \
            ranked[:top_k] + [None] + ranked[len(ranked) - bottom_k:]
        for m in shown:
            if m is None:
                lines.append(f"    ... {len(ranked) - top_k - bottom_k} more")
                continue
            mark = "*" if m is self.best else " "
            lines.append(f"{mark} {m.config}: {m.mean_us:.1f} +- {m.error_margin_us:.1f} us "
                         f"({m.num_samples} samples)")
        for cfg, kind, msg in self.failures[:top_k]:
            lines.append(f"  failed {cfg}: {kind.__name__}: {msg.splitlines()[0][:80] if msg else ''}")
        return "\n".join(lines)

    def __str__(self):
        return self.summary()


class _Samples:
    """Welford's running mean and variance, in microseconds."""

    def __init__(self):
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, us):
        self.n += 1
        d = us - self.mean
        self.mean += d / self.n
        self.m2 += d * (us - self.mean)

    @property
    def margin(self):
        if self.n < 2:
            return math.inf
        return 1.96 * math.sqrt(self.m2 / (self.n - 1) / self.n)

    def converged(self):
        return self.n >= _MIN_SAMPLES and (
            self.margin <= 0.01 * self.mean or self.margin <= 0.5
            or self.n >= _MAX_SAMPLES or self.mean * self.n > _MAX_US_PER_CONFIG)


def exhaustive_search(
    search_space: Sequence[T],
    stream,
    grid_fn: Callable[[T], tuple],
    kernel: Kernel | Callable[[T], Kernel],
    args_fn: Callable[[T], tuple],
    hints_fn: Callable[[T], dict[str, Any]] | None = None,
    *,
    quiet: bool = False,
    single_run_timeout_sec: float | None = None,
) -> TuningResult[T]:
    """Times `kernel` (or `kernel(cfg)`) with `kernel.replace_hints(**hints_fn(cfg))`
    on `grid_fn(cfg)` and a fresh `args_fn(cfg)` per run, for every config;
    returns a TuningResult whose `best` has the lowest mean. A config whose
    trace, compile or launch raises is a failure; all failing raises
    ValueError. `single_run_timeout_sec` is accepted and not enforced (a
    launch cannot be cut short in-process)."""
    space = list(search_space)
    if not space:
        raise ValueError("exhaustive_search: the search space is empty")
    backend = None
    successes, failures = [], []
    for n, cfg in enumerate(space):
        try:
            base = kernel if isinstance(kernel, Kernel) else kernel(cfg)
            hints = hints_fn(cfg) if hints_fn is not None else {}
            kern = base.replace_hints(**hints) if hints else base
            backend = backend or kern._resolve_backend()
            samples = _measure(kern, grid_fn(cfg), lambda c=cfg: args_fn(c), stream, backend)
        except Exception as e:  # noqa: BLE001 - as cuTile's: any failure is the config's
            failures.append((cfg, type(e), str(e)))
            continue
        successes.append(Measurement(config=cfg, mean_us=samples.mean,
                                     num_samples=samples.n,
                                     error_margin_us=samples.margin))
        if not quiet and sys.stderr.isatty():
            sys.stderr.write(f"\rtile.tune: {n + 1}/{len(space)} configs, "
                             f"{len(failures)} failed")
            sys.stderr.flush()
    if not quiet and sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    if not successes:
        cfg, kind, msg = failures[0]
        raise ValueError("exhaustive_search: no config of the search space ran; the "
                         f"first failure: {cfg}: {kind.__name__}: {msg}")
    best = min(successes, key=lambda m: m.mean_us)
    result = TuningResult(best=best, successes=tuple(successes), failures=tuple(failures))
    if not quiet:
        print(result)
    return result


def _measure(kern, grid, get_args, stream, backend):
    """The samples of one config: warm-up runs (the first compiles), then
    batches until converged."""
    samples = _Samples()
    if backend == "cuda":
        raw = interop.stream_of(stream)
        if interop.stream_capturing(raw):
            raise TileLaunchError("tile.tune.exhaustive_search cannot time inside a CUDA "
                                  "graph capture", "run the search before capturing",
                                  location=user_location())
        mod = _backend.require("timing kernel launches")
        state = {}

        def before():
            state["args"] = get_args()

        def run():
            kern[grid](*state["args"], stream=raw)

        def batch(warm, reps):
            return mod.time_launches(run, raw, warm, reps, before)
    else:
        state = {}

        def before():
            state["args"] = get_args()

        def run():
            kern[grid](*state["args"])

        def batch(warm, reps):
            return host_times(run, before, warm, reps)
    for ms in batch(_WARMUP_RUNS, _BATCH):
        samples.add(ms * 1e3)
    while not samples.converged():
        for ms in batch(0, _BATCH):
            samples.add(ms * 1e3)
    return samples

