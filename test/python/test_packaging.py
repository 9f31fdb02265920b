"""`pip install .` stays consistent without running it (a wheel build takes
minutes; README.md says how it was verified): pyproject.toml's package,
script, CMake target and version agree with the tree."""

import importlib
import os
import re

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


def test_wheel_package_and_script():
    cfg = _pyproject()
    skb = cfg["tool"]["scikit-build"]
    (pkg,) = skb["wheel"]["packages"]
    assert os.path.isfile(os.path.join(ROOT, pkg, "__init__.py"))
    assert os.path.basename(pkg) == "tile"
    for name, target in cfg["project"]["scripts"].items():
        module, func = target.split(":")
        assert callable(getattr(importlib.import_module(module), func)), name
    assert "numpy" in cfg["project"]["dependencies"]


def test_cmake_builds_and_installs_the_extension():
    cfg = _pyproject()
    skb = cfg["tool"]["scikit-build"]
    cmake = _read("python-frontend", "CMakeLists.txt")
    for target in skb["build"]["targets"]:
        assert re.search(rf"pybind11_add_module\({target}\b", cmake), target
    assert re.search(r"install\(TARGETS _tile LIBRARY DESTINATION tile\)", cmake)
    # Every source of the extension is compiled into it.
    listed = set(re.findall(r"src/(\w+\.cpp)", cmake))
    present = {f for f in os.listdir(os.path.join(ROOT, "python-frontend", "src"))
               if f.endswith(".cpp")}
    assert present == listed
    args = " ".join(skb["cmake"]["args"])
    assert "-DMLIR_DIR=" in args and "-DTILE_BUILD_TESTS=OFF" in args
    # The source-tree copy of the module is not made by pip builds.
    assert "if(NOT SKBUILD)" in cmake


def test_versions_agree():
    cfg = _pyproject()
    version = cfg["project"]["version"]
    init = _read("python-frontend", "tile", "__init__.py")
    assert f'__version__ = "{version}"' in init
    assert f'set(TILE_VERSION "{version}")' in _read("CMakeLists.txt")
