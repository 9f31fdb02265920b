"""`@tile.autotune(configs=[tile.Config(...)], key=[...])`: Triton's autotuner
for tile kernels (docs/autotuning.md).

    @tile.autotune(configs=[tile.Config({"BLOCK": 256}), tile.Config({"BLOCK": 1024},
                                                                     num_warps=8)],
                   key=["n"])
    @tile.kernel
    def scale(x, out, n, BLOCK: tile.Constant[int]): ...

    scale[lambda meta: (tile.cdiv(n, meta["BLOCK"]),)](x, out, n)

The first launch with a new key (the values of the arguments named in `key`,
arrays by dtype and shape, plus the dtypes of every array argument) times
every config and keeps the fastest; later launches with that key look the
choice up in a dict and launch the kernel variant directly. A choice is
persisted in the cache directory (tuning_cache.py), so another process with
the same device, driver, compiler build, kernel and key tunes nothing.

GPU timing uses CUDA events on the launch stream: three runs of each config
alone for an estimate (`_tile.time_launches`), then the first pass and the
confirmation round in turns (`_tile.time_interleaved`); on the CPU backend,
whose launches return when every block has run, a host timer around each
launch.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading

from . import backend as _backend
from . import interop
from . import tuning_cache, tuning_runs
from .errors import (TileCompileError, TileError, TileLaunchError, TileTypeError,
                     TileValueError, user_location)
from .hints import check_num_stages, check_num_warps, check_ping_pong, check_ws_registers
from .kernel import Kernel

__all__ = ["Config", "autotune", "Autotuner"]

_HINTS = ("num_warps", "num_stages", "occupancy", "num_ctas", "ws_registers", "ping_pong")
_MAX_RUNS = 1000  # timed runs per config at most
# Each timed GPU run starts after a write of this much scratch memory (more
# than any L2; runtime/L2Flush.cpp's kernel), as Triton's do_bench: cold
# caches for every config, and the host's launch time hidden behind the
# write. The H200 ran the bench's 1024^3
# matmul 40% slower with the config chosen without it (short kernels measured
# the host's launch gap).
_L2_FLUSH_BYTES = 256 << 20
# After every config has been timed once, the ones within this fraction of
# the fastest (at most _CONFIRM_MAX of them) are timed again run by run in
# turn, and the medians of those runs rank them. One median moved by up to 7%
# between back-to-back runs of the same binary on the H200, so a single pass
# can keep a config that was lucky over a truly faster neighbour: the
# leaders are the configs within 15% (5% until 2026-12-07, when bench's D64
# attention took BM 128 in two runs of five on an H100 although bench times
# it 5% slower than BM 64; 10% until later that day, when the first pass read
# causal D64's 64-row blocks, two an SM, 11-15% behind BM 128, which bench's
# interleaved runs rate 2% ahead of it).
_CONFIRM_WITHIN = 0.15
_CONFIRM_MAX = 5
_CONFIRM_ROUNDS = 3  # passes over the leaders on a GPU (best median kept)
_CONFIRM_RUNS = 300  # timed runs per leader at most
# Leaders closer than this are tied (run-by-run medians of one binary agreed
# within 0.1% on the H200); the earliest config in the list wins a tie.
_TIE_WITHIN = 0.005


class Config:
    """One point of a search: Constants by name (`kwargs`) and kernel hints
    (`num_warps`, `num_stages`, `occupancy`, `num_ctas`, `ws_registers`,
    `ping_pong`; None keeps the kernel's own). `pre_hook(named_args)`, when
    given, runs before each of this config's launches (timed or not)."""

    def __init__(self, kwargs=None, *, num_warps=None, num_stages=None, occupancy=None,
                 num_ctas=None, ws_registers=None, ping_pong=None, pre_hook=None):
        kwargs = dict(kwargs or {})
        for name in kwargs:
            if not isinstance(name, str) or not name.isidentifier():
                raise TileValueError(f"tile.Config: constant names are identifiers, got "
                                     f"{name!r}", location=user_location())
        check_num_warps(num_warps)
        check_num_stages(num_stages)
        self.kwargs = kwargs
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.occupancy = occupancy
        self.num_ctas = num_ctas
        self.ws_registers = check_ws_registers(ws_registers)
        check_ping_pong(ping_pong)
        self.ping_pong = ping_pong
        self.pre_hook = pre_hook

    def hints(self):
        """The kernel hints this config sets (for Kernel.replace_hints)."""
        return {h: getattr(self, h) for h in _HINTS if getattr(self, h) is not None}

    def all_kwargs(self):
        """Constants and the hints it sets, in one dict (as Triton's)."""
        return dict(self.kwargs, **self.hints())

    def describe(self):
        """A JSON-able, order-independent description: what a persisted
        choice is checked against."""
        return {"kwargs": {k: _describe_value(v) for k, v in sorted(self.kwargs.items())},
                "hints": {k: _describe_value(v) for k, v in sorted(self.hints().items())}}

    def __eq__(self, other):
        return isinstance(other, Config) and self.describe() == other.describe()

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        parts = [f"{k}: {v!r}" for k, v in self.kwargs.items()]
        parts += [f"{k}: {v!r}" for k, v in self.hints().items()]
        return "Config(" + ", ".join(parts) + ")"


def _describe_value(v):
    if v is None or v.__class__ in (bool, int, str):
        return v
    if v.__class__ is float:
        return repr(v)  # nan, inf and -0.0 survive JSON
    return f"{type(v).__qualname__}:{v!r}"


def autotune(configs, key=(), prune_configs_by=None, reset_to_zero=None,
             restore_value=None, warmup=25, rep=100, do_bench=None):
    """Decorates a `@tile.kernel` with a search over `configs` (Triton's
    arguments: `key` names the arguments whose values select a search;
    `prune_configs_by` = {"early_config_prune": fn(configs, named_args) ->
    configs, "perf_model": fn(**named_args, **config.all_kwargs()) -> time,
    "top_k": int or fraction}; `reset_to_zero`/`restore_value` name array
    arguments zeroed / restored around each timed run; `warmup`/`rep` are
    milliseconds of warm-up and timed runs per config; `do_bench(fn) -> ms`
    replaces the timer)."""
    if isinstance(configs, Config):  # one Config: a search of one
        configs = [configs]
    if isinstance(key, str):  # key="n" names one argument, not "n"'s letters
        key = [key]
    configs = list(configs)
    if not configs:
        raise TileValueError("tile.autotune needs at least one tile.Config",
                             location=user_location())
    for c in configs:
        if not isinstance(c, Config):
            raise TileTypeError(f"tile.autotune: configs must be tile.Config objects, "
                                f"got {c!r}", "e.g. tile.Config({'BLOCK': 256}, "
                                "num_warps=4)", location=user_location())
    for name, v in (("warmup", warmup), ("rep", rep)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise TileValueError(f"tile.autotune: {name} is a positive number of "
                                 f"milliseconds, got {v!r}", location=user_location())
    where = user_location()

    def wrap(kern):
        if not isinstance(kern, Kernel):
            raise TileTypeError("tile.autotune decorates a @tile.kernel: put "
                                "@tile.autotune(...) above @tile.kernel",
                                location=where)
        return Autotuner(kern, configs, list(key), prune_configs_by, reset_to_zero,
                         restore_value, warmup, rep, do_bench, where)
    return wrap


class _Choice:
    """What a key dispatches to."""
    __slots__ = ("kernel", "constants", "config", "index", "source")

    def __init__(self, kernel, config, index, source):
        self.kernel = kernel
        self.constants = config.kwargs
        self.config = config
        self.index = index
        self.source = source  # "tuned", "cache", "single", "disabled"


class Autotuner:
    """`autotuned[grid](*args, stream=None)`; grid a tuple or a callable of
    the chosen config's Constants (`lambda meta: (tile.cdiv(n, meta["BLOCK"]),)`).

    Observations: `cache` (key -> chosen Config), `best_config` (the last
    choice), `configs_timings` (key -> {Config: ms}), `first_timings` (the
    same before the confirmation round), `leaders` (key -> the Configs the
    confirmation round timed again, fastest first reading first; the choice
    is the fastest of them, or of all when empty), `failures` (key ->
    [(Config, reason)]), `tuning_count` (searches run in this process),
    `confirmed_count` (searches whose close leaders were timed again),
    `twins` (key -> {Config: the earlier Config whose binary and grid it
    launched, timed once for both})."""

    def __init__(self, kern, configs, key, prune_configs_by, reset_to_zero,
                 restore_value, warmup, rep, do_bench, where):
        self.kernel = kern
        self.fn = kern.fn
        self.__name__ = kern.__name__
        self.__doc__ = kern.__doc__
        self.configs = configs
        self.keys = key
        self.warmup = warmup
        self.rep = rep
        self.do_bench = do_bench
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        prune = dict(prune_configs_by or {})
        unknown = set(prune) - {"early_config_prune", "perf_model", "top_k"}
        if unknown:
            raise TileValueError(f"tile.autotune: prune_configs_by takes early_config_prune, "
                                 f"perf_model and top_k, not {', '.join(sorted(unknown))}",
                                 kernel=kern.__name__, location=where)
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.top_k = prune.get("top_k", 1.0)
        # Read once: the environment chooses for the life of the decorator.
        self.enabled = os.environ.get("TILE_AUTOTUNE", "1").strip() != "0"
        self.verbose = os.environ.get("TILE_PRINT_AUTOTUNING", "").strip() not in ("", "0")
        self.cache = {}
        self.configs_timings = {}
        self.first_timings = {}  # key -> {Config: ms}, before the confirmation
        self.leaders = {}  # key -> [Config] timed again in the confirmation round
        self.failures = {}
        self.best_config = None
        self.tuning_count = 0
        self.confirmed_count = 0  # searches whose leaders were timed again
        self.twins = {}  # key -> {Config: the earlier Config with its binary}
        self._chosen = {}
        self._variants = {}
        self._lock = threading.RLock()
        self._state = threading.local()  # .saved: restore_value's copies
        sig = kern._signature
        self._signature = sig
        self._params = list(sig.parameters.values())
        names = [p.name for p in self._params]
        for group, listed in (("key", key), ("reset_to_zero", self.reset_to_zero),
                              ("restore_value", self.restore_value)):
            for name in listed:
                if name not in names:
                    raise TileValueError(f"tile.autotune: {group} names '{name}', which is "
                                         f"not a parameter of {kern.__name__}"
                                         f"({', '.join(names)})", kernel=kern.__name__,
                                         location=where)
        constants = {n for n, const in kern.params if const}
        for c in configs:
            bad = [n for n in c.kwargs if n not in constants]
            if bad:
                what = "is not a Constant parameter" if len(bad) == 1 else \
                    "are not Constant parameters"
                raise TileValueError(f"tile.autotune: {c} sets {', '.join(bad)}, which "
                                     f"{what} of {kern.__name__}", "a Config sets Constants "
                                     "(BLOCK: tile.Constant[int]) and hints",
                                     kernel=kern.__name__, location=where)
        positional = [p.name for p in self._params if p.kind != p.KEYWORD_ONLY]
        self._key_slots = [(n, positional.index(n) if n in positional else 1 << 30,
                            sig.parameters[n].default) for n in key]

    def __repr__(self):
        return f"<tile.autotune {self.__name__}: {len(self.configs)} configs>"

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def __getitem__(self, grid):
        def launch(*args, stream=None, **kwargs):
            choice = self._chosen.get(self._key(args, kwargs))
            if choice is None:
                choice = self._choose(grid, args, kwargs, stream)
            if choice.config.pre_hook is not None:
                choice.config.pre_hook(self._named_args(args, kwargs))
            return choice.kernel[grid](*args, stream=stream, **choice.constants, **kwargs)
        return launch

    def compile(self, *args, **kwargs):
        """The CompiledKernel the chosen config launches for these arguments
        (its `.asm` holds each stage); the key must have been tuned (launched)
        already."""
        choice = self._chosen.get(self._key(args, kwargs))
        if choice is None:
            raise TileValueError(f"{self.__name__}: no config chosen for this key yet",
                                 "launch the autotuned kernel once with these arguments "
                                 "first", kernel=self.__name__, location=user_location())
        return choice.kernel.compile(*args, **choice.constants, **kwargs)

    # -- keys ----------------------------------------------------------
    def _key(self, args, kwargs):
        """The tuning key: the named arguments' values (arrays by dtype and
        shape) and the dtype of every array argument, as Triton's."""
        parts = []
        n = len(args)
        for name, i, default in self._key_slots:
            v = kwargs[name] if name in kwargs else (args[i] if i < n else default)
            c = v.__class__
            parts.append((c, v) if c in _SCALARS else _array_part(v, name, self))
        # dtype objects themselves (hashable; str() of a NumPy dtype costs
        # microseconds): _persisted_part names them for the disk.
        for v in args:
            d = getattr(v, "dtype", None)
            if d is not None:
                parts.append(d)
        for v in kwargs.values():
            d = getattr(v, "dtype", None)
            if d is not None:
                parts.append(d)
        return tuple(parts)

    def _named_args(self, args, kwargs):
        try:
            bound = self._signature.bind_partial(*args, **kwargs)
        except TypeError as e:
            raise TileTypeError(f"wrong arguments for {self.__name__}: {e}",
                                kernel=self.__name__, location=user_location()) from None
        bound.apply_defaults()
        return dict(bound.arguments)

    # -- choosing --------------------------------------------------------
    def _variant(self, index):
        v = self._variants.get(index)
        if v is None:
            hints = self.configs[index].hints()
            v = self.kernel.replace_hints(**hints) if hints else self.kernel
            self._variants[index] = v
        return v

    def _pruned(self, named):
        """(index, config) pairs left by prune_configs_by."""
        pairs = list(enumerate(self.configs))
        if self.early_config_prune is not None:
            kept = list(self.early_config_prune([c for _, c in pairs], named))
            pairs = [(i, c) for i, c in pairs if any(c is k for k in kept)]
            if not pairs:
                raise TileValueError("tile.autotune: early_config_prune left no config",
                                     kernel=self.__name__, location=user_location())
        if self.perf_model is not None and len(pairs) > 1:
            k = self.top_k
            k = max(1, int(len(pairs) * k)) if isinstance(k, float) and k <= 1.0 else int(k)
            est = {i: self.perf_model(**named, **c.all_kwargs()) for i, c in pairs}
            pairs = sorted(pairs, key=lambda p: est[p[0]])[:k]
            pairs.sort()
        return pairs

    def _choose(self, grid, args, kwargs, stream):
        key = self._key(args, kwargs)
        with self._lock:
            choice = self._chosen.get(key)
            if choice is not None:
                return choice
            clash = [n for c in self.configs for n in c.kwargs if n in kwargs]
            if clash:
                raise TileTypeError(f"argument '{clash[0]}' is set by the autotuner's "
                                    "configs: do not pass it", kernel=self.__name__,
                                    location=user_location())
            named = self._named_args(args, kwargs)
            if not self.enabled:
                choice = _Choice(self._variant(0), self.configs[0], 0, "disabled")
            else:
                pairs = self._pruned(named)
                if len(pairs) == 1:
                    i, c = pairs[0]
                    choice = _Choice(self._variant(i), c, i, "single")
                else:
                    choice = self._search(key, pairs, grid, args, kwargs, named, stream)
            self._chosen[key] = choice
            self.cache[key] = choice.config
            self.best_config = choice.config
            return choice

    def _search(self, key, pairs, grid, args, kwargs, named, stream):
        backend = self.kernel._resolve_backend()
        identity = self._identity(key, pairs, args, kwargs, backend)
        stored = tuning_cache.load(identity) if identity is not None else None
        if stored is not None:
            i = stored["choice"].get("index")
            if i.__class__ is int and 0 <= i < len(self.configs) and \
                    stored["choice"].get("config") == self.configs[i].describe() and \
                    any(i == j for j, _ in pairs):
                if self.verbose:
                    print(f"tile: autotune {self.__name__}: key {_show_key(key)}: "
                          f"{self.configs[i]} (from the tuning cache)", file=sys.stderr)
                return _Choice(self._variant(i), self.configs[i], i, "cache")
        raw_stream = None
        if backend == "cuda":
            raw_stream = _launch_stream(stream)
            if interop.stream_capturing(raw_stream):
                raise TileLaunchError(
                    "autotuning this key would time every config inside a CUDA graph "
                    "capture", "warm up first: launch the autotuned kernel once with the "
                    "same key before capturing, so the capture records the tuned choice",
                    kernel=self.__name__, location=user_location())
        self.tuning_count += 1
        # The pristine values, copied once (an uncopyable one is the user's error).
        self._state.saved = {n: tuning_runs.copy_of(named[n], n, self) for n in self.restore_value}
        timings, failures = {}, []
        # Configs that compile to the same binary with the same grid (a hint
        # the compiler would have chosen anyway) are one candidate: the first
        # is timed, the others are its twins (twin -> first).
        binaries, twins = {}, {}
        progress = tuning_runs.Progress(self.__name__, len(pairs))
        try:
            # Every config compiles before any is timed: a compile leaves the
            # GPU idle for a second or more, and a config timed right after
            # one would start on lowered clocks (a failure is reported by
            # its timing, which compiles again).
            for i, cfg in pairs:
                try:
                    self._variant(i).compile(*args, **cfg.kwargs, **kwargs)
                except TileError:
                    pass
            # On a GPU the first pass estimates each config's time from a few
            # runs, then times them all in turns (_interleaved): timed each
            # alone, an H100 read D64 attention's 64-row blocks 5-27% slower
            # than in turns with the others (2026-12-07), and bench times in
            # turns.
            in_turns = backend == "cuda" and self.do_bench is None
            for n, (i, cfg) in enumerate(pairs):
                progress.update(n)
                try:
                    timings[i] = self._time(i, cfg, grid, args, kwargs, named, backend,
                                            raw_stream, binaries, twins, estimate=in_turns)
                except TileError as e:
                    failures.append((cfg, f"{type(e).__name__}: {e}"))
                except _SameBinary as same:
                    twins[i] = same.first
            if in_turns and len(timings) > 1:  # (if it fails, the estimates stay)
                self._interleaved(timings, list(timings), 1, grid, args, kwargs, named,
                                  raw_stream)
            first = dict(timings)
            confirmed = self._confirm(timings, grid, args, kwargs, named, backend, raw_stream)
        finally:
            progress.done()
            self._restore(named, final=True)
        self.twins[key] = {self.configs[i]: self.configs[j] for i, j in twins.items()}
        self.leaders[key] = [self.configs[i] for i in confirmed]
        for attr, readings in (("configs_timings", timings), ("first_timings", first)):
            by_config = {self.configs[i]: ms for i, ms in readings.items()}
            by_config.update({self.configs[i]: readings[j] for i, j in twins.items()
                              if j in readings})
            getattr(self, attr)[key] = by_config
        self.failures[key] = failures
        if not timings:
            raise self._all_failed(failures)
        # The choice compares readings of one round only: after a confirmation
        # round, its leaders (an H100 read them all 4-14% slower there than in
        # the first pass, 2026-12-07, so a config left out of the round won
        # against first-pass readings bench timed 10-16% slower).
        ranked = {i: timings[i] for i in confirmed} if confirmed else timings
        fastest = min(ranked.values())
        # Within the timer's resolution of the fastest, the earliest config in
        # the list wins: an order the user chose breaks ties, not noise.
        best = min(i for i, ms in ranked.items() if ms <= fastest * (1 + _TIE_WITHIN))
        if self.verbose:
            lines = [f"tile: autotune {self.__name__}: key {_show_key(key)}: chose "
                     f"{self.configs[best]} ({timings[best]:.4f} ms)"]
            lines += [f"  {self.configs[i]}: {ms:.4f} ms" for i, ms in sorted(timings.items())]
            lines += [f"  {self.configs[i]}: the binary of {self.configs[j]}"
                      for i, j in sorted(twins.items())]
            lines += [f"  {cfg}: failed: {why.splitlines()[0]}" for cfg, why in failures]
            print("\n".join(lines), file=sys.stderr)
        if identity is not None:
            tuning_cache.store(identity, {"index": best, "config": self.configs[best].describe()},
                               {"timings_ms": {str(i): ms for i, ms in timings.items()},
                                "failures": [[repr(c), why[:500]] for c, why in failures]})
        return _Choice(self._variant(best), self.configs[best], best, "tuned")

    def _confirm(self, timings, grid, args, kwargs, named, backend, raw_stream):
        """Times the leaders of the first pass again (see _CONFIRM_WITHIN), run
        by run in turn, so that the machine's drift falls on all of them alike.
        On a GPU each leader's time becomes its best median of _CONFIRM_ROUNDS
        passes, as bench keeps its best of --repeats; with a do_bench timer,
        the median of _CONFIRM_ROUNDS of its measurements. Returns the leaders
        timed again (empty when there was no round)."""
        if len(timings) < 2:
            return []
        best = min(timings.values())
        leaders = sorted((ms, i) for i, ms in timings.items()
                         if ms <= best * (1 + _CONFIRM_WITHIN))[:_CONFIRM_MAX]
        if len(leaders) < 2:
            return []
        order = [i for _, i in leaders]
        slowest = max(timings[i] for i in order)
        if backend == "cuda" and self.do_bench is None:
            if not self._interleaved(timings, order, _CONFIRM_ROUNDS, grid, args, kwargs,
                                     named, raw_stream):
                return []  # the first pass's times stay
            self.confirmed_count += 1
            return order
        self.confirmed_count += 1
        rounds = _CONFIRM_ROUNDS if self.do_bench is not None else \
            max(3 * _CONFIRM_ROUNDS, min(_CONFIRM_RUNS, int(self.rep / max(slowest, 1e-4))))
        samplers = {}
        for i in order:
            try:
                samplers[i] = self._sampler(i, self.configs[i], grid, args, kwargs, named,
                                            backend, raw_stream)
            except TileError:
                continue  # it ran once: keep that time
        samples = {i: [] for i in samplers}
        for _ in range(rounds):
            for i, sample in samplers.items():
                samples[i].append(sample())
        for i, xs in samples.items():
            timings[i] = tuning_runs.median(xs)
        return list(samples)

    def _interleaved(self, timings, order, passes, grid, args, kwargs, named, raw_stream):
        """Times the configs `order` on the GPU in turns (run r of each before
        run r+1 of any, every run enqueued and waited for once, as bench
        times), `passes` times, about `rep` ms of the slowest each (10 runs
        at least; 100 at most in a pass of several); each config's time in
        `timings` becomes its best median. False, changing nothing, when a
        launch failed."""
        slowest = max(max(timings[i] for i in order), 1e-4)
        cap = _MAX_RUNS if passes == 1 else _CONFIRM_RUNS // passes
        runs = max(10, min(cap, int(self.rep / slowest)))
        warm = 0 if passes > 1 else max(1, min(runs, int(self.warmup / slowest)))
        runners = [self._runner(i, self.configs[i], grid, args, kwargs, named, raw_stream)
                   for i in order]
        mod = _backend.require("timing kernel launches")
        medians = []
        try:
            for _ in range(passes):
                times = mod.time_interleaved([r for r, _ in runners], raw_stream, warm, runs,
                                             [b for _, b in runners], _L2_FLUSH_BYTES)
                medians.append([tuning_runs.median(xs) for xs in times])
        except TileError:
            return False
        for n, i in enumerate(order):
            timings[i] = min(m[n] for m in medians)
        return True

    def _all_failed(self, failures):
        reasons = "\n".join(f"  {cfg}: {why}" for cfg, why in failures)
        compile_only = all(not why.startswith("TileLaunchError") for _, why in failures)
        cls = TileCompileError if compile_only else TileLaunchError
        return cls(f"autotuning failed: every config failed\n{reasons}",
                   "fix the configs (or the kernel) so that at least one compiles and "
                   "launches", kernel=self.__name__, location=user_location())

    # -- timing ------------------------------------------------------------
    def _before(self, cfg, named):
        self._restore(named, final=False)
        for name in self.reset_to_zero:
            tuning_runs.zero(named[name], name, self)
        if cfg.pre_hook is not None:
            cfg.pre_hook(named)

    def _restore(self, named, final):
        saved = getattr(self._state, "saved", None)
        for name, copy in (saved or {}).items():
            tuning_runs.copy_into(named[name], copy, name, self)
        if final:
            self._state.saved = None
            for name in self.reset_to_zero:  # the real launch starts from zero too
                tuning_runs.zero(named[name], name, self)

    def _time(self, i, cfg, grid, args, kwargs, named, backend, raw_stream,
              binaries=None, twins=None, estimate=False):
        """The config's time in ms (with `estimate`, the fastest of three runs
        only). With `binaries` (identity -> config index): raises _SameBinary
        instead when an earlier config launched the same binary on the same
        grid."""
        run, before = self._runner(i, cfg, grid, args, kwargs, named,
                                   raw_stream if backend == "cuda" else None)
        # First launch: compiles; a compile or launch error skips the config.
        before()
        run()
        if binaries is not None:
            ident = _binary_identity(self._variant(i), cfg.kwargs, grid, args, kwargs)
            if ident is not None:
                if ident in binaries:
                    raise _SameBinary(binaries[ident])
                binaries[ident] = i
        if self.do_bench is not None:
            return self._bench_sample(run, before)
        measure = self._measure(run, before, backend, raw_stream)
        first = measure(0, 3)
        est = max(min(first), 1e-4)
        if estimate:
            return est
        n_warm = max(1, min(_MAX_RUNS, int(self.warmup / est)))
        n_rep = max(1, min(_MAX_RUNS, int(self.rep / est)))
        return tuning_runs.median(first + measure(n_warm, n_rep))

    def _bench_sample(self, run, before):
        def bench_run():
            before()
            run()
        return float(self.do_bench(bench_run))

    def _measure(self, run, before, backend, raw_stream):
        """measure(warm, reps) -> the reps' times in ms, each run after before()."""
        if backend == "cuda":
            mod = _backend.require("timing kernel launches")
            return lambda warm, reps: list(mod.time_launches(run, raw_stream, warm, reps,
                                                             before, _L2_FLUSH_BYTES))
        return lambda warm, reps: tuning_runs.host_times(run, before, warm, reps)

    def _runner(self, i, cfg, grid, args, kwargs, named, launch_stream):
        """(run, before): one launch of config i, and what goes before each."""
        variant = self._variant(i)

        def run():
            variant[grid](*args, stream=launch_stream, **cfg.kwargs, **kwargs)

        def before():
            self._before(cfg, named)
        return run, before

    def _sampler(self, i, cfg, grid, args, kwargs, named, backend, raw_stream):
        """A function giving one more timing of config i: one timed run (with
        a do_bench timer, one do_bench measurement)."""
        run, before = self._runner(i, cfg, grid, args, kwargs, named,
                                   raw_stream if backend == "cuda" else None)
        if self.do_bench is not None:
            return lambda: self._bench_sample(run, before)
        measure = self._measure(run, before, backend, raw_stream)
        return lambda: measure(0, 1)[0]

    # -- persistence ---------------------------------------------------------
    def _identity(self, key, pairs, args, kwargs, backend):
        """What a persisted choice must match, or None (not persisted).

        The kernel is named by the SHA-256 of the traced IR of the first config
        that traces for this key: it covers the kernel's source, the helpers it
        calls and the globals it reads, where a hash of the function's own
        source would miss edits to helpers; tracing one config costs
        milliseconds on a first call that compiles anyway."""
        ir_hash = None
        for i, cfg in pairs:
            try:
                text = self.kernel.trace(*args, **cfg.kwargs, **kwargs)
            except TileError:
                continue
            ir_hash = hashlib.sha256(text.encode()).hexdigest()
            break
        if ir_hash is None:
            return None  # nothing traces: the search reports why
        try:
            device, driver = tuning_cache.device_identity(backend)
        except Exception:  # noqa: BLE001 - a device we cannot name: do not persist
            return None
        return {"kernel": f"{self.fn.__module__}.{self.fn.__qualname__}",
                "ir_sha256": ir_hash, "backend": backend, "device": device,
                "driver": driver, "build": tuning_cache.build_identity(),
                "key": [_persisted_part(p) for p in key],
                "configs": [c.describe() for c in self.configs],
                "pruned": [i for i, _ in pairs]}


_SCALARS = frozenset({int, float, bool, str, type(None)})


class _SameBinary(Exception):
    """A config compiled to the binary config `first` launched."""

    def __init__(self, first):
        super().__init__(first)
        self.first = first


def _binary_identity(variant, consts, grid, args, kwargs):
    """What makes two configs' launches the same: the SHA-256 of the machine
    code (cubin, else PTX, else the CPU backend's LLVM IR), the grid, the
    block size and shared memory; None when there is no code to compare."""
    try:
        ck = variant.compile(*args, **consts, **kwargs)  # the cached specialization
    except TileError:
        return None
    code = next((ck.asm[s] for s in ("cubin", "ptx", "llvm") if ck.asm.get(s)), None)
    if code is None:
        return None
    if isinstance(code, str):
        code = code.encode()
    return (hashlib.sha256(bytes(code)).hexdigest(), ck._grid3(grid), ck.num_warps,
            ck.shared_mem)


def _array_part(v, name, tuner):
    dtype, shape = getattr(v, "dtype", None), getattr(v, "shape", None)
    if dtype is None and hasattr(v, "__cuda_array_interface__"):
        cai = v.__cuda_array_interface__
        dtype, shape = cai.get("typestr"), cai.get("shape")
    if dtype is None or shape is None:
        raise TileTypeError(f"autotune key argument '{name}' is a {type(v).__name__}: "
                            "key arguments are ints, floats, bools, strings, None or arrays",
                            kernel=tuner.__name__, location=user_location())
    return ("array", dtype, shape if isinstance(shape, tuple) else tuple(shape))


def _persisted_part(p):
    if p.__class__ is tuple and len(p) == 2 and p[0] in _SCALARS:
        return [p[0].__name__, _describe_value(p[1])]
    if p.__class__ is tuple:
        return [p[0], str(p[1]), [int(s) for s in p[2]]]
    return ["dtype", str(p)]


def _show_key(key):
    return "(" + ", ".join(repr(p[1]) if p.__class__ is tuple and len(p) == 2 else
                           f"{p[1]}{tuple(p[2])}" if p.__class__ is tuple else str(p)
                           for p in key) + ")"


def _launch_stream(stream):
    """The raw handle a launch with `stream=` uses: torch's current stream
    when torch has CUDA up and none is given, else the legacy stream."""
    if stream is not None:
        return interop.stream_of(stream)
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return torch.cuda.current_stream().cuda_stream
    except Exception:  # noqa: BLE001 - torch without a usable CUDA
        pass
    return 0
