"""pytest setup for the Python frontend: import path, markers, skips.

Numerics tests (marker `numerics`) run kernels through `tile._tile` on
whatever backend it provides; they skip only when `_tile` is not built.
GPU-only tests (marker `gpu`) also need the CUDA backend.
"""

import os
import sys

import pytest

from tilehelp import LAUNCHERS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_FRONTEND = os.path.join(ROOT, "python-frontend")
if _FRONTEND not in sys.path:
    sys.path.insert(0, _FRONTEND)


def pytest_addoption(parser):
    parser.addoption("--tile-reference", action="store_true",
                     help="run the numerics tests on refinterp.py, a NumPy interpreter of "
                          "the frontend's IR, instead of tile._tile (checks the frontend "
                          "alone)")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs the CUDA backend (a GPU and tile._tile)")
    config.addinivalue_line("markers", "fuzz: the differential fuzzer (random kernels against "
                                       "NumPy; TILE_FUZZ_SEED, TILE_FUZZ_COUNT)")
    config.addinivalue_line("markers", "numerics: runs kernels through tile._tile on the "
                                       "available backend")
    config.addinivalue_line("markers", "timing: asserts on measured run times (the "
                                       "autotuner's choice): run alone, not beside "
                                       "other workers")


def pytest_collection_modifyitems(config, items):
    from tile import backend

    if config.getoption("--tile-reference"):
        return  # numerics run on refinterp (see _reference_tile)
    have_tile = backend.find_module_file() is not None
    kind, broken = None, None
    if have_tile:
        try:
            kind = backend.default_backend()
        except Exception as e:  # built but broken: those tests must fail, not skip
            broken = f"tile._tile is built but cannot be used: {type(e).__name__}: {e}"
    no_tile = pytest.mark.skip(reason="_tile module not built")
    no_gpu = pytest.mark.skip(reason="needs the CUDA backend (no usable GPU)")
    for item in items:
        if "numerics" in item.keywords or "gpu" in item.keywords:
            if not have_tile:
                item.add_marker(no_tile)
            elif broken:
                item._tile_broken = broken
            elif "gpu" in item.keywords and kind != "cuda":
                item.add_marker(no_gpu)


def pytest_runtest_setup(item):
    broken = getattr(item, "_tile_broken", None)
    if broken:
        pytest.fail(broken, pytrace=False)


@pytest.fixture(autouse=True)
def _reference_tile(request, monkeypatch):
    """Under --tile-reference, numerics tests get refinterp as tile._tile;
    other tests (including other pieces' tests of _tile) are untouched."""
    if not request.config.getoption("--tile-reference") or \
            "numerics" not in request.keywords:
        yield
        return
    if "gpu" in request.keywords:
        pytest.skip("needs the CUDA backend (refinterp runs on the host)")
    import importlib

    from refinterp import RefTile
    backend = importlib.import_module("tile.backend")
    monkeypatch.setattr(backend, "_module", RefTile())
    monkeypatch.setattr(backend, "_searched", True)
    monkeypatch.setattr(backend, "_error", None)
    monkeypatch.delenv("TILE_BACKEND", raising=False)
    yield


@pytest.fixture(params=LAUNCHERS)
def launcher(request, monkeypatch):
    """The real `_tile` behind the Python launcher or the C dispatcher (the
    choice is made on a kernel's first launch: tests make their kernels)."""
    if request.param == "python":
        monkeypatch.setenv("TILE_LAUNCHER", "python")
    else:
        monkeypatch.delenv("TILE_LAUNCHER", raising=False)
    return request.param
