"""tile.autotune and tile.tune.exhaustive_search (issue 18), on the CPU
backend (kernels say backend="cpu", so the GPU suite runs them the same), on
the fake libcuda for the CUDA-event timing path, and on a real GPU (marker
gpu). Each test uses its own TILE_CACHE_DIR (conftest's or tmp_path)."""

import glob
import importlib
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tile
from tile import autotune_configs, backend, tuning_cache

_TUNER = importlib.import_module("tile.autotune")  # the module (tile.autotune is the decorator)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# timing: the choice between configs is measured, so device-run.sh's parallel
# workers (TEST_WORKERS) leave these tests to a serial pass of their own.
pytestmark = [pytest.mark.numerics, pytest.mark.timing]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_AUTOTUNE", raising=False)
    monkeypatch.delenv("TILE_PRINT_AUTOTUNING", raising=False)


# A kernel whose configs differ measurably (REPS passes over the data); a
# module of its own so that a second process builds the same kernel.
from autotune_kernels import SLOW_FAST, make  # noqa: E402
from test_cuda_launch import _have_ptxas, ptxas_path  # noqa: E402


def _grid(n):
    return lambda meta: (tile.cdiv(n, meta["BLOCK"]),)


def _run(kern, n=4096, seed=0):
    x = np.random.default_rng(seed).random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    kern[_grid(n)](x, out, n)
    np.testing.assert_allclose(out.astype(np.float64), np.exp(x.astype(np.float64)),
                               rtol=1e-5)
    return out


def test_best_config_is_chosen_and_hits_skip_tuning():
    k = make(SLOW_FAST)
    _run(k)
    assert k.best_config == SLOW_FAST[1]
    timings = next(iter(k.configs_timings.values()))
    # 400x the loop work, the same launch cost; a many-core host runs the
    # blocks in parallel (the H200 machine's 16 cores measured 8.8x), so
    # "measurably" is 3x here.
    assert timings[SLOW_FAST[0]] > 3 * timings[SLOW_FAST[1]]
    assert k.tuning_count == 1
    compiles = k._variants[1].compile_count
    for seed in range(3):
        _run(k, seed=seed)
    assert k.tuning_count == 1 and k._variants[1].compile_count == compiles


def _scripted(true_ms, unlucky=None, first_factor=1.0, later_factor=1.0):
    """Configs named as `true_ms`'s keys (in order) and a timer scripted per
    config (each config's pre_hook names the one being run): every reading
    is the config's true time but the first of `unlucky`, `first_factor`
    times it, and every config's readings after its first, `later_factor`
    times it. Returns (configs, timer, reads per name)."""
    current, reads = [None], {}

    def hook(name):
        return lambda named: current.__setitem__(0, name)
    configs = [tile.Config({"REPS": r, "BLOCK": 64}, pre_hook=hook(name))
               for r, name in enumerate(true_ms, 1)]

    def timer(fn):
        fn()
        name = current[0]
        reads[name] = reads.get(name, 0) + 1
        if reads[name] > 1:
            return true_ms[name] * later_factor
        return true_ms[name] * (first_factor if name == unlucky else 1.0)
    return configs, timer, reads


def test_close_leaders_are_timed_again_and_an_unlucky_first_reading_does_not_decide():
    # The truly fastest config reads 4% slow the first time, as a GPU median
    # can (clocks, another tenant); the second-best reads true every time.
    # One pass would keep the second; the confirmation round finds the first.
    configs, timer, reads = _scripted({"fast": 1.00, "close": 1.02, "slow": 2.0}, "fast", 1.04)
    k = make(configs, do_bench=timer)
    _run(k)
    assert k.best_config is configs[0]
    assert k.confirmed_count == 1
    assert reads == {"fast": 4, "close": 4, "slow": 1}  # the slow one is not re-timed
    assert next(iter(k.configs_timings.values()))[configs[0]] == 1.00
    # The first pass's readings stay observable (bench records them).
    assert next(iter(k.first_timings.values())) == {
        configs[0]: pytest.approx(1.04), configs[1]: 1.02, configs[2]: 2.0}


def test_a_config_within_10_percent_of_the_fastest_reading_is_timed_again():
    # A GPU median moved by up to 7% between two runs of one binary: the
    # configs within 10% of the fastest first reading are all timed again,
    # so the truly fastest one, whose first reading came 7.6% above the
    # other's (13% above its own), still wins.
    configs, timer, reads = _scripted({"close": 1.05, "fast": 1.00}, "fast", 1.13)
    k = make(configs, do_bench=timer)
    _run(k)
    assert k.confirmed_count == 1 and reads == {"fast": 4, "close": 4}
    assert k.best_config is configs[1]


def test_the_choice_compares_readings_of_the_confirmation_round_only():
    # On an H100 the confirmation round read every leader 4-14% slower than
    # the first pass did; a config left out of the round (just behind the
    # leaders) then beat them on its first-pass reading. Only leaders compete.
    configs, timer, reads = _scripted(
        {"fast": 1.00, "close": 1.02, "out": 1.03 + _TUNER._CONFIRM_WITHIN}, later_factor=1.2)
    k = make(configs, do_bench=timer)
    _run(k)
    assert reads == {"fast": 4, "close": 4, "out": 1}
    assert k.best_config is configs[0]
    assert next(iter(k.leaders.values())) == [configs[0], configs[1]]


def test_every_config_compiles_before_any_is_timed():
    # A compile idles the GPU for a second or more: timed right after one, a
    # config would start on lowered clocks. So the timer's first call finds
    # every config compiled, and no config compiles twice.
    configs = [tile.Config({"REPS": r, "BLOCK": 64}) for r in (1, 2, 3)]

    def compiles():  # (configs of the same hints share one kernel object)
        return sum({id(v): v.compile_count for v in k._variants.values()}.values())
    at_first_timing = []

    def timer(fn):
        if not at_first_timing:
            at_first_timing.append(compiles())
        fn()
        return 1.0
    k = make(configs, do_bench=timer)
    _run(k)
    assert at_first_timing == [3] and compiles() == 3


@pytest.mark.parametrize("second_ms,chosen", [(0.998, 0), (0.99, 1)])
def test_a_tie_within_the_timers_resolution_goes_to_the_earlier_config(second_ms, chosen):
    # 0.2% apart is a tie (the earlier config in the list wins); 1% is not.
    current = [None]

    def hook(name):
        return lambda named: current.__setitem__(0, name)
    configs = [tile.Config({"REPS": 1, "BLOCK": 64}, pre_hook=hook("first")),
               tile.Config({"REPS": 2, "BLOCK": 64}, pre_hook=hook("second"))]
    reading = {"first": 1.0, "second": second_ms}
    k = make(configs, do_bench=lambda fn: (fn(), reading[current[0]])[1])
    _run(k)
    assert k.best_config is configs[chosen]


def test_configs_that_compile_to_one_binary_are_timed_once():
    # num_stages shapes only the GPU's mma rings, so on the CPU these two
    # configs compile to the same code on the same grid: the second is the
    # first's twin, never timed, and reported with the first's time.
    current, reads = [None], {}

    def hook(name):
        return lambda named: current.__setitem__(0, name)
    configs = [tile.Config({"REPS": 2, "BLOCK": 64}, pre_hook=hook("first")),
               tile.Config({"REPS": 2, "BLOCK": 64}, num_stages=4, pre_hook=hook("twin")),
               tile.Config({"REPS": 2, "BLOCK": 128}, pre_hook=hook("other"))]

    def timer(fn):
        fn()
        reads[current[0]] = reads.get(current[0], 0) + 1
        return {"first": 1.0, "other": 3.0}[current[0]]
    k = make(configs, do_bench=timer)
    _run(k)
    (key,) = k.twins
    assert k.twins[key] == {configs[1]: configs[0]}
    assert "twin" not in reads and reads["other"] == 1
    assert k.configs_timings[key][configs[1]] == k.configs_timings[key][configs[0]] == 1.0
    assert k.best_config is configs[0]


def test_changed_key_retunes():
    k = make(SLOW_FAST)
    _run(k, n=4096)
    _run(k, n=2048)
    assert k.tuning_count == 2 and len(k.cache) == 2


def test_tuple_grid_and_explicit_constants():
    k = make([tile.Config({"REPS": 1}), tile.Config({"REPS": 300})])
    n = 1024
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    k[(n // 64,)](x, out, n, BLOCK=64)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5)
    assert k.best_config.kwargs == {"REPS": 1}
    with pytest.raises(tile.TileTypeError, match="set by the autotuner"):
        make([tile.Config({"REPS": 1}), tile.Config({"REPS": 2})])[(1,)](
            x, out, n, BLOCK=64, REPS=3)


SECOND_PROCESS = textwrap.dedent("""
    import json, sys
    sys.path[:0] = sys.argv[1:3]
    import numpy as np, tile
    from autotune_kernels import SLOW_FAST, make
    k = make(SLOW_FAST)
    n = 4096
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    k[lambda m: (tile.cdiv(n, m["BLOCK"]),)](x, out, n)
    assert np.allclose(out, np.exp(x), rtol=1e-5)
    print(json.dumps({"tuned": k.tuning_count, "best": k.best_config.kwargs,
                      "source": k._chosen[next(iter(k._chosen))].source}))
""")


def _second_process(tmp_path, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    proc = subprocess.run([sys.executable, "-c", SECOND_PROCESS,
                           os.path.join(ROOT, "python-frontend"), os.path.dirname(__file__)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_second_process_uses_the_persisted_choice(tmp_path):
    first, _ = _second_process(tmp_path, {"TILE_PRINT_AUTOTUNING": "1"})
    assert first["tuned"] == 1 and first["best"] == {"REPS": 1, "BLOCK": 64}
    second, err = _second_process(tmp_path, {"TILE_PRINT_AUTOTUNING": "1"})
    assert second == {"tuned": 0, "best": {"REPS": 1, "BLOCK": 64}, "source": "cache"}
    assert "from the tuning cache" in err


def _tuning_files():
    d = os.path.join(os.environ["TILE_CACHE_DIR"], "tuning")
    return sorted(glob.glob(os.path.join(d, "*.json")))


def _corrupt_flip(path):
    data = bytearray(open(path, "rb").read())
    i = data.index(b'"index"') + 9
    data[i] = ord("0") if data[i] != ord("0") else ord("2")  # choose another config
    open(path, "wb").write(bytes(data))


def _corrupt_truncate(path):
    data = open(path, "rb").read()
    open(path, "wb").write(data[:len(data) // 2])


def _corrupt_checksum(path):
    doc = json.load(open(path))
    doc["sha256"] = "0" * 64
    json.dump(doc, open(path, "w"))


def _corrupt_rechecksummed_other_choice(path):
    # A self-consistent entry whose chosen config is not the one at its index.
    doc = json.load(open(path))
    doc["entry"]["choice"]["config"]["kwargs"]["REPS"] = 400
    doc["sha256"] = __import__("hashlib").sha256(
        tuning_cache._canonical(doc["entry"])).hexdigest()
    json.dump(doc, open(path, "w"))


@pytest.mark.parametrize("damage", [_corrupt_flip, _corrupt_truncate, _corrupt_checksum,
                                    _corrupt_rechecksummed_other_choice])
def test_damaged_entry_retunes(damage):
    _run(make(SLOW_FAST))
    (path,) = _tuning_files()
    fresh = make(SLOW_FAST)
    _run(fresh)
    assert fresh.tuning_count == 0  # the sound entry is used
    damage(path)
    again = make(SLOW_FAST)
    _run(again)
    assert again.tuning_count == 1 and again.best_config == SLOW_FAST[1]
    entry, problem = tuning_cache.parse(open(path, "rb").read())
    assert problem == "" and entry["choice"]["index"] == 1  # rewritten


def test_entry_of_another_config_list_is_not_used():
    _run(make(SLOW_FAST))
    other = [SLOW_FAST[1], SLOW_FAST[0], SLOW_FAST[2]]  # same configs, other order
    k = make(other)
    _run(k)
    assert k.tuning_count == 1 and k.best_config == SLOW_FAST[1]
    assert len(_tuning_files()) == 2


def test_failing_config_is_skipped_with_its_reason():
    bad = tile.Config({"REPS": 1, "BLOCK": 48})  # not a power of two
    k = make([bad, SLOW_FAST[0], SLOW_FAST[1]])
    _run(k)
    assert k.best_config == SLOW_FAST[1]
    (failures,) = k.failures.values()
    assert len(failures) == 1 and failures[0][0] == bad
    assert "power of two" in failures[0][1] or "48" in failures[0][1]


def test_all_configs_failing_lists_each_reason():
    k = make([tile.Config({"REPS": 1, "BLOCK": 48}), tile.Config({"REPS": 1, "BLOCK": 96})])
    with pytest.raises(tile.TileCompileError) as e:
        _run(k)
    text = str(e.value)
    assert "every config failed" in text and "BLOCK: 48" in text and "BLOCK: 96" in text


def test_one_config_and_a_key_given_as_a_string():
    """Triton's lists, or one Config and one name: key="n" names the
    argument (key="out" was read as the letters o, u, t: unknown
    parameters), and configs=Config(...) a search of one (it raised
    TypeError: 'Config' object is not iterable)."""
    k = make(SLOW_FAST[1])
    assert k.configs == [SLOW_FAST[1]]
    wide = tile.autotune(configs=SLOW_FAST, key="out", warmup=1, rep=4)(make(SLOW_FAST).kernel)
    assert wide.keys == ["out"]
    _run(wide, n=1024)
    _run(wide, n=2048)
    assert wide.tuning_count == 2


@tile.kernel(backend="cpu")
def _increment(x, n, REPS: tile.Constant[int], BLOCK: tile.Constant[int]):
    i = tile.bid(0)
    a = tile.load(x, index=(i,), shape=(BLOCK,))
    for r in tile.range(REPS):
        a = a + 1.0
    tile.store(x, index=(i,), tile=a)


def test_restore_value_keeps_inputs_intact():
    seen = []  # x as every launch (timed or not) finds it

    def look(named):
        seen.append(named["x"].copy())
    k = tile.autotune(configs=[tile.Config({"REPS": 1, "BLOCK": 64}, pre_hook=look),
                               tile.Config({"REPS": 1, "BLOCK": 128}, pre_hook=look)],
                      key=["n"], restore_value=["x"], warmup=1, rep=3)(_increment)
    n = 1024
    x0 = np.random.default_rng(2).random(n, dtype=np.float32)
    x = x0.copy()
    k[_grid(n)](x, n)
    np.testing.assert_allclose(x, x0 + 1.0, rtol=1e-6)  # exactly one real launch
    assert len(seen) > 4 and all(np.array_equal(v, x0) for v in seen)
    # Other configs: the choice above is persisted, and would be reused untimed.
    unprotected = tile.autotune(configs=[tile.Config({"REPS": 1, "BLOCK": 256}),
                                         tile.Config({"REPS": 1, "BLOCK": 512})],
                                key=["n"], warmup=1, rep=3)(_increment)
    y = x0.copy()
    unprotected[_grid(n)](y, n)
    assert (y > x0 + 1.5).all()  # the tuning runs incremented it too


def test_reset_to_zero_zeroes_before_each_run():
    @tile.kernel(backend="cpu")
    def accumulate(x, acc, n, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        tile.atomic_add(acc, (0,), tile.sum(a))

    k = tile.autotune(configs=[tile.Config({"BLOCK": 64}), tile.Config({"BLOCK": 128})],
                      key=["n"], reset_to_zero=["acc"], warmup=1, rep=3)(accumulate)
    n = 1024
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    acc = np.zeros(1, np.float32)
    k[_grid(n)](x, acc, n)
    np.testing.assert_allclose(acc[0], x.astype(np.float64).sum(), rtol=1e-4)


def test_restore_value_of_an_uncopyable_argument_is_a_clear_error():
    class Opaque:
        dtype = "float32"
        shape = (4,)
    k = tile.autotune(configs=[tile.Config({"REPS": 1, "BLOCK": 64}),
                               tile.Config({"REPS": 2, "BLOCK": 64})],
                      key=["n"], restore_value=["x"])(_increment)
    with pytest.raises(tile.TileTypeError, match="restore_value: argument 'x'.*cannot copy"):
        k[(1,)](Opaque(), 4)


def test_autotune_disabled_uses_the_first_config(monkeypatch):
    monkeypatch.setenv("TILE_AUTOTUNE", "0")
    k = make(SLOW_FAST)
    _run(k)
    assert k.tuning_count == 0 and k.best_config == SLOW_FAST[0]
    assert _tuning_files() == []


def test_print_autotuning_reports_choice_and_timings(monkeypatch, capfd):
    monkeypatch.setenv("TILE_PRINT_AUTOTUNING", "1")
    _run(make(SLOW_FAST))
    err = capfd.readouterr().err
    assert "chose Config(REPS: 1, BLOCK: 64)" in err
    assert err.count(" ms") >= 4  # the choice and every config's time


def test_prune_configs_by():
    seen = []

    def early(configs, named):
        seen.append(named["n"])
        return [c for c in configs if c.kwargs["REPS"] != 1]
    k = make(SLOW_FAST, prune_configs_by={"early_config_prune": early})
    _run(k)
    assert seen == [4096] and k.best_config == SLOW_FAST[2]
    k = make(SLOW_FAST, prune_configs_by={"perf_model": lambda **kw: kw["REPS"], "top_k": 1})
    _run(k)
    assert k.best_config == SLOW_FAST[1] and k.tuning_count == 0  # one left: no timing


def test_bad_decorations_are_clear_errors():
    with pytest.raises(tile.TileValueError, match="names 'm'"):
        make(SLOW_FAST, key=["m"]) if False else tile.autotune(SLOW_FAST, key=["m"])(
            make(SLOW_FAST).kernel)
    with pytest.raises(tile.TileValueError, match="not a Constant parameter"):
        tile.autotune([tile.Config({"n": 3})], key=[])(make(SLOW_FAST).kernel)
    with pytest.raises(tile.TileTypeError, match="above @tile.kernel"):
        tile.autotune(SLOW_FAST)(lambda x: x)
    with pytest.raises(tile.TileValueError, match="num_stages"):
        tile.Config({}, num_stages=99)


def test_exhaustive_search_returns_the_best_config():
    kern = make(SLOW_FAST).kernel
    n = 2048
    x = np.random.default_rng(4).random(n, dtype=np.float32)
    outs = {}

    def args(cfg):
        o = np.full(n, np.nan, np.float32)  # poisoned afresh for every run
        outs[cfg["REPS"], cfg["BLOCK"]] = o
        return (x, o, n, cfg["REPS"], cfg["BLOCK"])
    space = [{"REPS": 300, "BLOCK": 64}, {"REPS": 1, "BLOCK": 64}, {"REPS": 1, "BLOCK": 48}]
    result = tile.tune.exhaustive_search(space, 0, lambda c: (tile.cdiv(n, c["BLOCK"]),),
                                         kern, args, quiet=True)
    assert result.best.config == {"REPS": 1, "BLOCK": 64}
    assert len(result.successes) == 2 and result.best.num_samples >= 5
    ((cfg, kind, msg),) = result.failures
    assert cfg["BLOCK"] == 48 and issubclass(kind, tile.TileError)
    np.testing.assert_allclose(outs[1, 64], np.exp(x), rtol=1e-5)
    assert "2 succeeded, 1 failed" in result.summary()


def test_tuning_entries_survive_eviction_and_show_in_the_cache_cli(monkeypatch):
    _run(make(SLOW_FAST))
    monkeypatch.setenv("TILE_CACHE_SIZE", "1")  # every compile evicts everything else
    k = make([tile.Config({"REPS": 2, "BLOCK": 64}), tile.Config({"REPS": 3, "BLOCK": 64})])
    _run(k)
    assert len(_tuning_files()) == 2
    again = make(SLOW_FAST)
    _run(again)
    assert again.tuning_count == 0
    cli = [sys.executable, "-m", "tile.cache"]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python-frontend"))
    listing = subprocess.run(cli + ["list"], capture_output=True, text=True, env=env).stdout
    assert "2 autotuning entries" in listing and "REPS=1" in listing
    stats = json.loads(subprocess.run(cli + ["stats", "--json"], capture_output=True,
                                      text=True, env=env).stdout)
    assert stats["tuning_entries"] == 2
    cleared = subprocess.run(cli + ["clear"], capture_output=True, text=True, env=env).stdout
    assert "2 autotuning entries" in cleared
    assert _tuning_files() == []
    fresh = make(SLOW_FAST)
    _run(fresh)
    assert fresh.tuning_count == 1


def test_matmul_search_space_holds_the_benchmarks_configs():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import kernels as K
    finally:
        sys.path.pop(0)
    space = autotune_configs.matmul("float16")
    for hand in (K.MATMUL_CONFIG, K.SMALL_MATMUL_CONFIG):
        assert tile.Config(dict(hand)) in space
        # The bench's space: the same kernel (PERSISTENT's default) and the
        # persistent schedule of it.
        assert tile.Config(dict(hand, PERSISTENT=False)) in K.MATMUL_SPACE
        assert tile.Config(dict(hand, PERSISTENT=True)) in K.MATMUL_SPACE
    assert len(autotune_configs.matmul("float16", group=(8, 16), persistent=(False, True))) \
        == 4 * len(space)
    # Clusters of two as a hint the tuner tries beside the kernel's own.
    clustered = autotune_configs.matmul("float16", num_ctas=(None, 2))
    assert len(clustered) == 2 * len(space)
    assert tile.Config(dict(K.MATMUL_CONFIG), num_ctas=2) in clustered
    assert {c.num_ctas for c in clustered} == {None, 2}
    # The bench's space tries the small tiles in clusters of two as well.
    assert tile.Config(dict(K.SMALL_MATMUL_CONFIG, PERSISTENT=False), num_stages=6,
                       num_ctas=2) in K.MATMUL_SPACE
    assert tile.Config(dict(K.ATTENTION_CONFIG)) in autotune_configs.attention(128)
    # Register splits as a hint: the bench tries 64-row blocks two to an SM.
    split = autotune_configs.attention(128, block_m=(64,), block_n=(128,), num_stages=(3,),
                                       ws_registers=(None, (24, 232)))
    assert [c.ws_registers for c in split] == [None, (24, 232)]
    assert tile.Config(dict(BM=64, BN=128), num_stages=3, ws_registers=(24, 232)) \
        in K.ATTENTION_SPACE
    assert tile.Config(dict(BM=64, BN=128), num_stages=3) != \
        tile.Config(dict(BM=64, BN=128), num_stages=3, ws_registers=(24, 232))
    # Consumer warpgroups taking turns as a hint, beside the kernel's own.
    turns = autotune_configs.attention(128, block_m=(128,), block_n=(128,),
                                       ping_pong=(None, True))
    assert [c.ping_pong for c in turns] == [None, True]
    assert turns[1].hints() == {"ping_pong": True}
    assert "ping_pong: True" in repr(turns[1]) and turns[0] != turns[1]
    assert tile.Config(dict(K.ATTENTION_CONFIG), ping_pong=True) in K.ATTENTION_SPACE
    with pytest.raises(tile.TileValueError, match="ping_pong must be"):
        tile.Config(dict(BM=128), ping_pong="yes")
    # One space for several head dims: attention_prune keeps what fits at
    # the launch's D and element size (a compiler-chosen ring: one slot).
    wide = tile.Config(dict(BM=128, BN=256), num_stages=2)
    assert wide in K.ATTENTION_SPACE
    assert [wide] == autotune_configs.attention(64, block_m=(128,), block_n=(256,),
                                                num_stages=(2,))
    assert [] == autotune_configs.attention(128, block_m=(128,), block_n=(256,),
                                            num_stages=(2,))
    prune = autotune_configs.attention_prune()
    for d, dtype, dropped in ((64, np.float16, []), (128, np.float16, [wide]),
                              (64, np.float32, [wide]),
                              (256, np.float16, [c for c in K.ATTENTION_SPACE  # 224 KB
                                                 if c.num_stages is not None and c !=
                                                 tile.Config(dict(BM=64, BN=64), num_stages=3)])):
        kept = prune(K.ATTENTION_SPACE, {"D": d, "q": np.zeros((1, 8, d), dtype)})
        assert [c for c in K.ATTENTION_SPACE if c not in kept] == dropped, (d, dtype)
    # f32 operands: 4 stages of 128x256x64 tiles need 384 KiB: pruned.
    f32 = autotune_configs.matmul("float32")
    assert tile.Config(dict(BM=128, BN=256, BK=64, GROUP=8), num_stages=4) not in f32
    assert len(f32) < len(space)


def _fake_cuda():
    found = glob.glob(os.path.join(ROOT, "build*", "test", "unittests", "runtime",
                                   "libtile_fake_cuda.so"))
    return max(found, key=os.path.getmtime) if found else None


# A script's start on the fake driver: device arrays by address (the fake
# never dereferences them) and the driver's recording entry points.
FAKE_PRELUDE = textwrap.dedent("""
    import ctypes, json, sys
    import tile
    from tile import backend

    class Dev:
        def __init__(self, ptr, n):
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (n,),
                                             "typestr": "<f4", "strides": None,
                                             "version": 3}

    fake = ctypes.CDLL(sys.argv[1])
    fake.fake_cuda_reset(6)
""")


def _run_on_fake(script, tmp_path):
    """The last line of `script`'s output (after FAKE_PRELUDE) as JSON."""
    env = dict(os.environ, TILE_LIBCUDA=_fake_cuda(), TILE_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.path.join(ROOT, "python-frontend"))
    env.pop("TILE_BACKEND", None)
    proc = subprocess.run([sys.executable, "-c", FAKE_PRELUDE + script, _fake_cuda()],
                          capture_output=True, text=True, timeout=600, env=env)
    if "built without the GPU backend" in proc.stderr:
        pytest.skip("this _tile has no GPU backend")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


FAKE_SCRIPT = textwrap.dedent("""
    @tile.autotune(configs=[tile.Config({"BLOCK": 128}), tile.Config({"BLOCK": 1024}),
                            tile.Config({"BLOCK": 256}, num_warps=2)],
                   key=["n"], warmup=0.01, rep=0.05)
    @tile.kernel
    def scale(x, out, n, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        v = tile.load(x, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=v * 2.0)

    n = 1 << 14
    x, o = Dev(0x7f0000001000, n), Dev(0x7f0000100000, n)
    grid = lambda m: (tile.cdiv(n, m["BLOCK"]),)
    scale[grid](x, o, n, stream=0x5000)
    launches = fake.fake_cuda_launches()
    scale[grid](x, o, n, stream=0x5000)
    out = {"best": scale.best_config.kwargs, "extra": fake.fake_cuda_launches() - launches,
           "live_events": fake.fake_cuda_live_events(),
           "timings": sorted(scale.configs_timings[next(iter(scale.configs_timings))].values())}
    fake.fake_cuda_set_capturing(ctypes.c_uint64(0x5000))
    try:
        scale[grid](x, o, 2 * n, stream=0x5000)   # a new key while capturing
        out["capture"] = None
    except tile.TileLaunchError as e:
        out["capture"] = str(e)
    print(json.dumps(out))
""")


@pytest.mark.skipif(_fake_cuda() is None, reason="fake libcuda not built")
def test_gpu_timing_path_on_the_fake_driver(tmp_path):
    """CUDA-event timing on the fake driver, whose clock advances 1 us per
    block: the config with the fewest blocks wins; a search while the stream
    captures a graph is refused with the warm-up advice."""
    r = _run_on_fake(FAKE_SCRIPT, tmp_path)
    assert r["best"] == {"BLOCK": 1024} and r["extra"] == 1 and r["live_events"] == 0
    assert r["timings"][0] == pytest.approx(0.016, rel=1e-3)  # 16 blocks at 1 us
    assert "CUDA graph capture" in r["capture"] and "warm up" in r["capture"]
    (entry,) = [e for _, e, _ in tuning_cache.entries(str(tmp_path))]
    assert entry["identity"]["device"] == "Fake GPU 0 sm_90"
    assert entry["identity"]["driver"] == 13000


@pytest.mark.skipif(not _have_ptxas(), reason="needs ptxas")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_l2_flush_kernel_assembles(tmp_path, arch):
    # The timing flush is PTX the driver compiles at its first use on a GPU
    # (the fake driver cannot run it): ptxas here checks that it would.
    mod = backend.load()
    if mod is None or not hasattr(mod, "l2_flush_ptx"):
        pytest.skip("this _tile has no GPU backend")
    src = tmp_path / "flush.ptx"
    src.write_text(mod.l2_flush_ptx())
    r = subprocess.run([ptxas_path(), f"-arch={arch}", "-v", str(src), "-o",
                        str(tmp_path / "flush.cubin")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "tile_l2_flush" in r.stderr and "spill" in r.stderr


INTERLEAVED_SCRIPT = textwrap.dedent("""
    def scale(x, out, n, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(BLOCK,)) * 2.0)

    n = 1 << 14
    x, o = Dev(0x7f0000001000, n), Dev(0x7f0000100000, n)
    k = tile.kernel(scale)
    calls = []

    def launcher(name, blocks):
        def run():
            calls.append(name)
            k[(blocks,)](x, o, n, BLOCK=1024, stream=0x5000)
        return run
    mod = backend.require()
    times = mod.time_interleaved([launcher("a", 16), launcher("b", 32)], 0x5000, 1, 3,
                                 [lambda: calls.append("-"), None])
    out = {"times": times, "calls": "".join(calls), "live_events": fake.fake_cuda_live_events()}
    try:
        mod.time_interleaved([launcher("a", 16)], 0x5000, 0, 1, [None, None])
    except ValueError as e:
        out["mismatch"] = str(e)
    # Two configs of one block count read alike: the first pass and the
    # confirmation round's three passes time them in turns through
    # time_interleaved.
    turns, plain = [], mod.time_interleaved

    def recorded(fns, *rest):
        turns.append(len(fns))
        return plain(fns, *rest)
    mod.time_interleaved = recorded
    tuned = tile.autotune(configs=[tile.Config({"BLOCK": 1024}),
                                   tile.Config({"BLOCK": 1024}, num_warps=2)],
                          key=["n"], warmup=0.01, rep=0.05)(tile.kernel(scale))
    tuned[lambda m: (n // m["BLOCK"],)](x, o, n, stream=0x5000)
    out["confirmed"] = tuned.confirmed_count
    out["turns"] = turns
    out["tuned"] = sorted(tuned.configs_timings[next(iter(tuned.configs_timings))].values())
    print(json.dumps(out))
""")


@pytest.mark.skipif(_fake_cuda() is None, reason="fake libcuda not built")
def test_interleaved_timing_on_the_fake_driver(tmp_path):
    """time_interleaved (the autotuner's confirmation round on a GPU): each
    function's runs take turns, round r starting at function r mod n, each
    after its `before`; every run is timed alone between its events (the
    fake clock: 1 us a block)."""
    r = _run_on_fake(INTERLEAVED_SCRIPT, tmp_path)
    # warm-up (a once, b once), then rounds ab, ba, ab; a's before is "-".
    assert r["calls"] == "-ab" + "-ab" + "b-a" + "-ab"
    assert r["times"][0] == pytest.approx([0.016] * 3, rel=1e-3)
    assert r["times"][1] == pytest.approx([0.032] * 3, rel=1e-3)
    assert r["live_events"] == 0
    assert "one before per function" in r["mismatch"]
    assert r["confirmed"] == 1 and r["tuned"] == pytest.approx([0.016, 0.016], rel=1e-3)
    assert r["turns"] == [2, 2, 2, 2]  # the first pass, then three confirmation passes


@pytest.mark.gpu
def test_autotune_on_the_gpu_with_torch():
    torch = pytest.importorskip("torch")
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import kernels as K
    finally:
        sys.path.pop(0)
    space = autotune_configs.matmul("float16", block_k=(64,), num_warps=(None,),
                                    num_stages=(0, 3))
    mm = tile.autotune(configs=space, key=["a", "b"], warmup=5, rep=20)(K.matmul)
    S = 1024
    a = torch.randn(S, S, device="cuda", dtype=torch.float16)
    b = torch.randn(S, S, device="cuda", dtype=torch.float16)
    c = torch.full((S, S), float("nan"), device="cuda", dtype=torch.float16)
    mm[lambda m: (tile.cdiv(S, m["BM"]) * tile.cdiv(S, m["BN"]),)](a, b, c)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    assert ((c.double() - ref).norm() / ref.norm()).item() < 1e-2
    timings = next(iter(mm.configs_timings.values()))
    # The choice is the fastest leader on the confirmation round's readings
    # (configs outside the round keep their first-pass readings), or one
    # tied with it (the earlier in the list).
    ranked = next(iter(mm.leaders.values())) or list(timings)
    assert mm.best_config in ranked
    assert timings[mm.best_config] <= min(timings[c] for c in ranked) * (1 + _TUNER._TIE_WITHIN)
    # Tuning during a capture is refused; after warm-up a capture replays the choice.
    g = torch.cuda.CUDAGraph()
    c2 = torch.empty(2048, 2048, device="cuda", dtype=torch.float16)
    a2, b2 = torch.randn_like(c2), torch.randn_like(c2)
    with pytest.raises(tile.TileLaunchError, match="warm up"):
        with torch.cuda.graph(g):
            mm[lambda m: (tile.cdiv(2048, m["BM"]) * tile.cdiv(2048, m["BN"]),)](a2, b2, c2)
