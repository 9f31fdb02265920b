"""Autotuning choices on disk: ``<cache dir>/tuning/<sha256>.json``.

One file per (kernel, key): the identity it was tuned for and the chosen
config. The kernel cache's runtime (runtime/DiskCache.cpp) and cache.py look
only at names of 64 hex digits, ``.tmp-*`` and ``.trash-*`` in the cache
directory, so the ``tuning`` subdirectory is neither listed, evicted, swept
nor counted by them; ``python -m tile.cache list|clear`` handle it through
this module.

Integrity: a file holds a SHA-256 of its own canonical content, is published
by writing a private temporary and renaming it over the name (atomic; the
last writer wins, and either writer's choice is a valid one), and is read
through ``O_NOFOLLOW`` with its size checked first, under the ownership rules
of the binary cache. A file whose checksum, format or identity does not match,
or whose chosen config is not the config at that position of the kernel's
list, is ignored and the kernel is tuned again. A plain checksum (rather than
the binary cache's HMAC) is enough: an entry only selects one of the configs
the program itself lists, and is checked against that list, so a forged entry
can at worst pick a slower config, never run foreign code.

`device_identity` and `build_identity` name what a choice was timed on (the
device and driver, the tile build); autotune.py puts them in the identity.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import stat
import time
import uuid
from typing import Optional

from . import backend as _backend


class _LazyCache:
    # tile.cache is imported on first use: `import tile` importing it would
    # make `python -m tile.cache` warn that the module was already loaded.
    def __getattr__(self, name):
        from . import cache
        return getattr(cache, name)


_cache = _LazyCache()

FORMAT = 1
KIND = "tile-autotune"
SUBDIR = "tuning"
MAX_ENTRY_BYTES = 1 << 20
_NAME_LEN = 64 + len(".json")


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True).encode()


def entry_name(identity: dict) -> str:
    return hashlib.sha256(_canonical(identity)).hexdigest() + ".json"


def tuning_dir(directory: Optional[str] = None, create: bool = False) -> Optional[str]:
    """The tuning directory of the cache, or None when there is no usable
    persistent cache (no home, or a directory the runtime would refuse)."""
    root = directory or _cache.cache_dir()
    if not root:
        return None
    path = os.path.join(root, SUBDIR)
    if create:
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        if _cache.distrust(os.stat(root)):
            return None
        st = os.lstat(path)
    except OSError:
        return path if not create else None
    if not stat.S_ISDIR(st.st_mode) or _cache.distrust(st):
        return None
    return path


def _read(path: str) -> Optional[bytes]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES
                or _cache.distrust(st)):
            return None
        return os.read(fd, MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def parse(raw: Optional[bytes]):
    """(entry, problem): the entry dict when the bytes are a sound entry of
    this format, else None and why not."""
    if raw is None:
        return None, "unreadable"
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None, "not JSON"
    if not isinstance(doc, dict) or not isinstance(doc.get("entry"), dict):
        return None, "not an entry"
    entry = doc["entry"]
    if doc.get("sha256") != hashlib.sha256(_canonical(entry)).hexdigest():
        return None, "fails its checksum"
    if entry.get("format") != FORMAT or entry.get("kind") != KIND:
        return None, f"format {entry.get('format')!r}, not {FORMAT}"
    if not isinstance(entry.get("identity"), dict) or not isinstance(entry.get("choice"), dict):
        return None, "malformed"
    return entry, ""


def load(identity: dict, directory: Optional[str] = None):
    """The stored entry for exactly this identity, or None."""
    d = tuning_dir(directory)
    if d is None:
        return None
    entry, _ = parse(_read(os.path.join(d, entry_name(identity))))
    if entry is None or entry["identity"] != identity:
        return None  # damaged, or another identity under a colliding name
    return entry


def store(identity: dict, choice: dict, details: dict,
          directory: Optional[str] = None) -> bool:
    """Publishes an entry atomically; False when there is no usable cache."""
    d = tuning_dir(directory, create=True)
    if d is None:
        return False
    entry = dict(details, format=FORMAT, kind=KIND, identity=identity, choice=choice,
                 created=time.time())
    body = json.dumps({"sha256": hashlib.sha256(_canonical(entry)).hexdigest(),
                       "entry": entry}, sort_keys=True, indent=1).encode()
    name = entry_name(identity)
    tmp = os.path.join(d, f".tmp-{name}-{os.getpid()}-{uuid.uuid4().hex[:12]}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW |
                     os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(d, name))
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def entries(directory: Optional[str] = None):
    """[(file name, entry or None, problem)] of every tuning file."""
    d = tuning_dir(directory)
    out = []
    try:
        names = sorted(os.listdir(d)) if d else []
    except OSError:
        return out
    for name in names:
        if name.startswith(".tmp-"):
            continue
        entry, problem = parse(_read(os.path.join(d, name)))
        if entry is not None and name != entry_name(entry["identity"]):
            entry, problem = None, "its name is not its identity's"
        out.append((name, entry, problem))
    return out


def clear(directory: Optional[str] = None) -> int:
    """Removes every tuning file (and temporaries); returns how many entries
    went. Never follows a link."""
    root = directory or _cache.cache_dir()
    if not root:
        return 0
    path = os.path.join(root, SUBDIR)
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)  # a file or link where the directory belongs
        return 0
    removed = 0
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name in os.listdir(fd):
            try:
                _cache._remove_at(fd, name)
                removed += len(name) == _NAME_LEN and name.endswith(".json")
            except OSError:
                continue
    finally:
        os.close(fd)
    return removed


def _show_part(p) -> str:
    if isinstance(p, list) and len(p) == 2:
        return str(p[1])
    if isinstance(p, list) and len(p) == 3:
        return f"{p[1]}{tuple(p[2])}"
    return str(p)


def describe(entry: dict) -> str:
    """One line for ``python -m tile.cache list``."""
    ident = entry.get("identity", {})
    cfg = entry.get("choice", {}).get("config", {})
    chosen = " ".join(f"{k}={v}" for part in ("kwargs", "hints")
                      for k, v in (cfg.get(part) or {}).items()) if isinstance(cfg, dict) else "?"
    key = ", ".join(_show_part(k) for k in ident.get("key", []))
    return (f"{str(ident.get('kernel', '?')):<24.24} {str(ident.get('device', '?')):<24.24} "
            f"({key}) -> {chosen}")


_device_identities = {}


def device_identity(backend):
    """(device, driver version) a persisted choice was timed on: the GPU's name
    and compute capability, or the host CPU's model and cores."""
    got = _device_identities.get(backend)
    if got is None:
        if backend == "cuda":
            mod = _backend.require("autotuning")
            major, minor = mod.cuda_device_capability(0)
            got = (f"{mod.cuda_device_name(0)} sm_{major}{minor}",
                   int(mod.cuda_driver_version()))
        else:
            got = (f"cpu {platform.machine()} {_cpu_model()} {os.cpu_count()} cores", 0)
        _device_identities[backend] = got
    return got


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def build_identity():
    """The tile build that timed a persisted choice (its module's identity)."""
    mod = _backend.load()
    fn = getattr(mod, "build_identity", None) if mod is not None else None
    if fn is not None:
        return fn()
    path = _backend.find_module_file() or "?"
    try:
        st = os.stat(path)
        return f"{path}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return path
