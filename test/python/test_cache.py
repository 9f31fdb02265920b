"""The on-disk kernel cache seen from Python: a second process running the
same kernel finds it on disk and compiles nothing, and ``python -m
tile.cache`` reads what the runtime wrote."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

tile = pytest.importorskip("tile")

# Runs one kernel in a fresh process and prints the cache's stats.
SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tile
    import tile.cache

    @tile.kernel
    def vadd(x, y, out, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        b = tile.load(y, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=a + b)

    n = 1000
    if sys.argv[1] == "cuda":
        import torch
        x = torch.rand(n, device="cuda")
        y = torch.rand(n, device="cuda")
        out = torch.empty_like(x)
        vadd[(tile.cdiv(n, 256),)](x, y, out, BLOCK=256)
        torch.cuda.synchronize()
        ok = torch.allclose(out, x + y)
    else:
        x = np.random.rand(n).astype(np.float32)
        y = np.random.rand(n).astype(np.float32)
        out = np.empty_like(x)
        vadd[(tile.cdiv(n, 256),)](x, y, out, BLOCK=256)
        ok = bool(np.allclose(out, x + y))
    print(json.dumps({"ok": ok, "stats": tile.cache.stats()}))
""")


def _env(cache_dir, **extra):
    env = dict(os.environ)
    env.pop("TILE_ALWAYS_COMPILE", None)
    env.pop("TILE_DUMP_DIR", None)  # dumping bypasses lookups
    env["TILE_CACHE_DIR"] = str(cache_dir)
    # The child imports tile (and _tile) from wherever this process did.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(extra)
    return env


def _run(cache_dir, backend, **env):
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, backend], capture_output=True,
        text=True, timeout=600,
        env=_env(cache_dir, TILE_BACKEND=backend, **env))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["ok"], "wrong numerics"
    return result["stats"]


def _cuda_usable():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


@pytest.mark.numerics
@pytest.mark.parametrize("backend", [
    "cpu",
    pytest.param("cuda", marks=[
        pytest.mark.gpu,
        pytest.mark.skipif(not _cuda_usable(), reason="needs a CUDA GPU")]),
])
def test_second_process_compiles_nothing(tmp_path, backend):
    first = _run(tmp_path, backend)
    assert first["misses"] >= 1 and first["writes"] >= 1, first
    assert first["hits"] == 0, first

    second = _run(tmp_path, backend)
    assert second["hits"] == first["hits"] + 1, second
    assert second["writes"] == first["writes"], "the second process compiled"
    assert second["misses"] == first["misses"], second


def _object_entries(cache_dir):
    """The CPU backend's entries: directories whose meta.json says object."""
    found = []
    for d in cache_dir.iterdir():
        meta = d / "meta.json"
        if d.is_dir() and meta.exists():
            if json.loads(meta.read_text())["payload_kind"] == "object":
                found.append(d)
    return found


def _damage_truncate(entry):
    payload = entry / "payload.bin"
    payload.write_bytes(payload.read_bytes()[:100])


def _damage_garbage_object(entry):
    """Checksums that verify over bytes that are no object file: the JIT
    refuses them, and the kernel must be compiled, not loaded."""
    garbage = b"\x7fELF" + b"\0" * 200
    (entry / "payload.bin").write_bytes(garbage)
    meta = json.loads((entry / "meta.json").read_text())
    meta["payload_size"] = len(garbage)
    meta["payload_sha256"] = hashlib.sha256(garbage).hexdigest()
    (entry / "meta.json").write_text(json.dumps(meta))


def _damage_signature(entry):
    meta = json.loads((entry / "meta.json").read_text())
    meta["signature"] = ["i32"] + meta["signature"][1:]
    (entry / "meta.json").write_text(json.dumps(meta))


@pytest.mark.numerics
@pytest.mark.parametrize("damage", [
    _damage_truncate, _damage_garbage_object, _damage_signature])
def test_corrupt_cpu_entry_is_recompiled(tmp_path, damage):
    first = _run(tmp_path, "cpu")
    assert first["writes"] == 1 and first["hits"] == 0, first
    [entry] = _object_entries(tmp_path)
    damage(entry)

    # Recompiled (right numerics), counted as rejected, and stored afresh.
    second = _run(tmp_path, "cpu")
    assert second["rejected"] == first["rejected"] + 1, second
    assert second["writes"] == first["writes"] + 1, "not recompiled"

    # The fresh entry is sound: the next process loads it.
    third = _run(tmp_path, "cpu")
    assert third["hits"] == second["hits"] + 1, third
    assert third["writes"] == second["writes"], third
    assert third["rejected"] == second["rejected"], third


@pytest.mark.numerics
def test_cpu_cache_bypasses(tmp_path):
    """TILE_ALWAYS_COMPILE=1 skips lookups; a dump directory compiles for
    real so that every stage is written."""
    first = _run(tmp_path / "cache", "cpu")
    assert first["writes"] == 1, first
    forced = _run(tmp_path / "cache", "cpu", TILE_ALWAYS_COMPILE="1")
    assert forced["hits"] == first["hits"], forced
    dump = tmp_path / "dump"
    dumped = _run(tmp_path / "cache", "cpu", TILE_DUMP_DIR=str(dump))
    assert dumped["hits"] == first["hits"], dumped
    assert any(dump.rglob("*")), "nothing dumped"
    # Neither stored a second entry for the same kernel.
    assert len(_object_entries(tmp_path / "cache")) == 1


CPU_ASM_SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import tile
    import tile.cache

    @tile.kernel(backend="cpu")
    def scale(x, out, a, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        v = tile.load(x, index=(i,), shape=(BLOCK,))
        tile.device_print("v", v)
        tile.store(out, index=(i,), tile=v * a)

    x = np.arange(4, dtype=np.float32)
    out = np.empty_like(x)
    k = scale.compile(x, out, 2.5, BLOCK=4)
    scale[(1,)](x, out, 2.5, BLOCK=4)
    print(json.dumps({"ok": out.tolist() == (x * 2.5).tolist(),
                      "asm": {s: len(t) for s, t in k.asm.items()},
                      "stats": tile.cache.stats()}))
""")


@pytest.mark.numerics
def test_cpu_hit_keeps_stages_and_runtime(tmp_path):
    """A loaded object still calls the host runtime (tile.print here), and
    `k.asm` has the stages of the compile that stored it."""
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", CPU_ASM_SCRIPT],
                              capture_output=True, text=True, timeout=600,
                              env=_env(tmp_path))
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.strip().splitlines()
        result = json.loads(lines[-1])
        result["printed"] = [line for line in lines if line.startswith("pid")]
        runs.append(result)
    first, second = runs
    assert len(first["printed"]) == 1 and " v " in first["printed"][0], first
    assert second["printed"] == first["printed"]
    assert first["ok"] and second["ok"]
    assert first["stats"]["writes"] >= 1 and first["stats"]["hits"] == 0
    assert second["stats"]["hits"] >= 1, second
    assert second["stats"]["writes"] == first["stats"]["writes"], second
    assert second["asm"] == first["asm"]
    assert "llvm-ir" in second["asm"]


# Compiles (no launch) for a GPU target in a fresh process: needs ptxas,
# not a GPU, so the CUDA cache is checked on any machine with the toolkit.
COMPILE_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tile
    import tile.cache
    from tile import backend

    @tile.kernel(backend="cpu")
    def scale(x, out, a, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        v = tile.load(x, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=v * a)

    x = np.zeros(64, np.float32)
    ir = scale.compile(x, x, 2.5, BLOCK=64).asm["tile"]
    # The CPU compile above goes through the cache too: count the GPU's only.
    before = tile.cache.stats()
    k = backend.load().compile(ir, sys.argv[1], backend.compile_options(0, 3))
    after = tile.cache.stats()
    stats = {c: after[c] - before[c]
             for c in ("hits", "misses", "writes", "evictions", "rejected")}
    print(json.dumps({"stages": list(k.asm), "cubin": len(k.asm["cubin"]),
                      "name": k.name, "stats": stats}))
""")


def _compile_gpu(cache_dir, target):
    proc = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, target],
                          capture_output=True, text=True, timeout=600,
                          env=_env(cache_dir))
    if "built without the GPU backend" in proc.stderr:
        pytest.skip("this _tile has no GPU backend")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _have_ptxas():
    """As compiler/gpu/GpuTarget.cpp finds it."""
    import shutil
    path = os.environ.get("TILE_PTXAS") or os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")
    return os.access(path, os.X_OK) or shutil.which("ptxas") is not None


@pytest.mark.numerics
@pytest.mark.skipif(not _have_ptxas(), reason="needs ptxas (no GPU needed)")
def test_gpu_compile_hits_in_second_process(tmp_path):
    first = _compile_gpu(tmp_path, "sm_90")
    assert first["stats"]["writes"] == 1 and first["stats"]["hits"] == 0
    second = _compile_gpu(tmp_path, "sm_90")
    assert second["stats"]["hits"] == 1, second
    assert second["stats"]["writes"] == 0, "the second process compiled"
    # A hit gives the same kernel, stages included.
    assert second["stages"] == first["stages"]
    assert second["cubin"] == first["cubin"] > 0
    # Another target is another key.
    third = _compile_gpu(tmp_path, "sm_80")
    assert third["stats"]["writes"] == 1, third


def _fake_entry(cache_dir, name, payload, corrupt=False):
    """An entry in the runtime's format (runtime/DiskCache.h), signed with
    the cache's key (created as the runtime does when missing)."""
    import hmac
    key = hashlib.sha256(name.encode()).hexdigest()
    d = cache_dir / key
    d.mkdir(parents=True)
    secret_path = cache_dir / "cache.key"
    if not secret_path.exists():
        secret_path.write_bytes(os.urandom(32))
        secret_path.chmod(0o600)
    (d / "payload.bin").write_bytes(payload + (b"!" if corrupt else b""))
    meta = {
        "format": 2, "key": key, "kernel_name": name, "num_warps": 4,
        "shared_mem": 0, "signature": ["array:1", "i32"],
        "payload_kind": "cubin", "payload_size": len(payload),
        "payload_sha256": hashlib.sha256(payload).hexdigest(),
        "stages": [], "attrs": {}, "created_ns": 0,
        "key_inputs": {"ir_sha256": "0" * 64, "build_id": "test",
                       "target": "sm_90", "options": "", "tool_version": ""},
    }
    raw = json.dumps(meta).encode()
    (d / "meta.json").write_bytes(raw)
    (d / "meta.hmac").write_bytes(hmac.new(
        secret_path.read_bytes(), b"tile-cache-entry-v2\0" + key.encode() +
        b"\0" + raw, hashlib.sha256).hexdigest().encode())
    return key


def _cli(cache_dir, *args):
    proc = subprocess.run([sys.executable, "-m", "tile.cache", *args],
                          capture_output=True, text=True, timeout=120,
                          env=_env(cache_dir))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cache_cli(tmp_path):
    _fake_entry(tmp_path, "good_kernel", b"\x7fELF" * 100)
    _fake_entry(tmp_path, "bad_kernel", b"\x7fELF", corrupt=True)
    (tmp_path / "stats.json").write_text(json.dumps(
        {"hits": 3, "misses": 2, "writes": 2, "evictions": 1,
         "rejected": 0}))

    listing = _cli(tmp_path, "list", "--verify")
    assert "good_kernel" in listing and "bad_kernel" in listing
    bad = [line for line in listing.splitlines() if "bad_kernel" in line]
    assert "BROKEN" in bad[0]
    assert "2 entries" in listing

    stats = json.loads(_cli(tmp_path, "stats", "--json"))
    assert stats["hits"] == 3 and stats["evictions"] == 1
    assert stats["entries"] == 2

    assert "removed 2 entries" in _cli(tmp_path, "clear")
    stats = json.loads(_cli(tmp_path, "stats", "--json"))
    assert stats["entries"] == 0 and stats["hits"] == 0
