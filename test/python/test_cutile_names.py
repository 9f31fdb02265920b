"""Acceptance test of cuTile's names (issue 16): every public name of
cuda.tile exists in `tile`, and every function and Tile/Array method takes
cuTile's parameters, so that `import tile as ct` runs a cuTile kernel unchanged.

The names and signatures are data (test/data/cutile_names.json, written once
by scripts/extract-cutile-names.py from NVIDIA/cutile-python at the commit its
"provenance" names). A signature is compatible when tile's parameters start
with cuTile's, in order, with the same names (names of positional-only
parameters and of operator methods are free: no caller can spell them), kinds
that accept every call cuTile's accept, and defaults where cuTile has them
(equal when cuTile's is a literal); tile may add trailing parameters with
defaults, and defaults to parameters cuTile requires.

Names of the other groups of issue 16 are in XFAIL below (strict): the test
passes while they are missing, and fails (XPASS) once they land, which is the
signal to drop them from the list.
"""

import ast
import enum
import inspect
import json
import os

import pytest

import tile as ct

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "cutile_names.json")
with open(DATA) as _f:
    SPEC = json.load(_f)

# Entries missing or incompatible today that other groups of issue 16 are
# implementing. Keys: a name, or "Tile.method" / "Array.method".
XFAIL = {
}

# Blackwell-only names: they exist, and using them raises an error naming sm_100.
BLACKWELL = {"float4_e2m1fn", "float8_e8m0fnu", "float8_e5m3fnu", "mma_scaled"}


def _param(name, kind, default):
    return {"name": name, "kind": kind, "default": default}


_ACCEPTS = {  # a cuTile kind -> tile kinds that accept every call it accepts
    "POSITIONAL_ONLY": {"POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"},
    "POSITIONAL_OR_KEYWORD": {"POSITIONAL_OR_KEYWORD"},
    "KEYWORD_ONLY": {"KEYWORD_ONLY", "POSITIONAL_OR_KEYWORD"},
    "VAR_POSITIONAL": {"VAR_POSITIONAL"},
    "VAR_KEYWORD": {"VAR_KEYWORD"},
}


REQUIRED = inspect.Parameter.empty


def incompatibility(want, fn, free_names=False, drop_self=False):
    """Why `fn` does not take cuTile's parameters `want`, or None."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        return f"no signature: {e}"
    have = [_param(p.name, p.kind.name, p.default) for p in sig.parameters.values()]
    if drop_self and have and have[0]["name"] in ("self", "cls"):
        have = have[1:]
    # cuTile's positional parameters match tile's in order, its keyword-only
    # ones by name
    pos_have = [p for p in have if p["kind"] != "KEYWORD_ONLY"]
    kw_have = {p["name"]: p for p in have
               if p["kind"] in ("KEYWORD_ONLY", "POSITIONAL_OR_KEYWORD")}
    pos_want = [p for p in want if p["kind"] != "KEYWORD_ONLY"]
    for i, w in enumerate(pos_want):
        if i >= len(pos_have):
            return f"missing parameter {w['name']!r}"
        h = pos_have[i]
        if h["kind"] not in _ACCEPTS[w["kind"]]:
            return f"parameter {i} ({w['name']!r}) is {h['kind']}, cuTile's is {w['kind']}"
        if w["kind"] != "POSITIONAL_ONLY" and not free_names and h["name"] != w["name"]:
            return f"parameter {i} is {h['name']!r}, cuTile's is {w['name']!r}"
        err = _default_mismatch(w, h)
        if err:
            return err
    for w in want:
        if w["kind"] == "KEYWORD_ONLY":
            h = kw_have.get(w["name"])
            if h is None:
                return f"missing keyword parameter {w['name']!r}"
            err = _default_mismatch(w, h)
            if err:
                return err
    wanted = {w["name"] for w in want}
    for h in pos_have[len(pos_want):] + [h for h in have if h["kind"] == "KEYWORD_ONLY"]:
        if h["name"] not in wanted and h["default"] is REQUIRED and \
                h["kind"] not in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            return f"extra required parameter {h['name']!r}"
    return None


def _default_mismatch(w, h):
    """cuTile's default `w` (source text) against tile's parameter `h`."""
    if w["default"] is None or h["kind"] in ("VAR_POSITIONAL", "VAR_KEYWORD"):
        return None
    if h["default"] is REQUIRED:
        return f"parameter {w['name']!r} has no default, cuTile's is {w['default']}"
    try:
        value = ast.literal_eval(w["default"])
    except (ValueError, SyntaxError):
        return None  # an enum member or a name: the ops tests check those
    got = h["default"]
    if type(got) is type(value) and got == value:
        return None
    return f"parameter {w['name']!r}: default {got!r}, cuTile's is {w['default']}"


def _check_name(entry):
    name, kind = entry["name"], entry["kind"]
    assert hasattr(ct, name), f"tile has no {name!r} ({kind})"
    obj = getattr(ct, name)
    if kind == "function":
        err = incompatibility(entry["params"], obj)
        assert err is None, f"tile.{name}: {err}"
    elif kind == "error":
        assert isinstance(obj, type) and issubclass(obj, ct.TileError), \
            f"tile.{name} is not a TileError subclass"
    elif kind == "dtype":
        assert isinstance(obj, ct.DType), f"tile.{name} is not a tile.DType"
    elif kind == "enum":
        assert isinstance(obj, type) and issubclass(obj, enum.Enum), f"tile.{name} is no Enum"
        missing = [m for m in entry["members"] if not hasattr(obj, m)]
        assert not missing, f"tile.{name} lacks members {missing}"
    elif kind == "class":
        assert isinstance(obj, type), f"tile.{name} is not a class"
    assert name in ct.__all__, f"{name!r} is not in tile.__all__"


def _check_member(cls_name, member):
    cls = getattr(ct, cls_name)
    name = member["name"]
    assert hasattr(cls, name), f"tile.{cls_name} has no {name!r}"
    if member["kind"] == "method":
        attr = inspect.getattr_static(cls, name)
        assert callable(getattr(cls, name)) and not isinstance(attr, property), \
            f"tile.{cls_name}.{name} is not a method"
        dunder = name.startswith("__")
        err = incompatibility(member["params"], getattr(cls, name), free_names=dunder,
                              drop_self=True)
        assert err is None, f"tile.{cls_name}.{name}: {err}"


def _mark(key):
    if key in XFAIL:
        return [pytest.param(key, marks=pytest.mark.xfail(strict=True,
                                                          reason="another group of issue 16"))]
    return [key]


NAMES = {e["name"]: e for e in SPEC["names"]}
MEMBERS = {f"{c}.{m['name']}": (c, m) for c, ms in SPEC["methods"].items() for m in ms}


@pytest.mark.parametrize("key", [p for k in NAMES for p in _mark(k)])
def test_name(key):
    _check_name(NAMES[key])


@pytest.mark.parametrize("key", [p for k in MEMBERS for p in _mark(k)])
def test_member(key):
    _check_member(*MEMBERS[key])


def test_xfail_list_names_real_entries():
    unknown = sorted(k for k in XFAIL if k not in NAMES and k not in MEMBERS)
    assert not unknown, f"XFAIL names entries the data does not have: {unknown}"


def test_provenance():
    p = SPEC["provenance"]
    assert p["repo"] == "NVIDIA/cutile-python"
    assert p["commit"].startswith("9c3ee3c")
    assert "src/cuda/tile/_stub.py" in p["files"]
    assert len(NAMES) > 140 and {"Tile", "Array"} <= set(SPEC["methods"])


@pytest.mark.parametrize("name", sorted(BLACKWELL - {"mma_scaled"}))
def test_blackwell_dtypes_raise_naming_sm100(name):
    dt = getattr(ct, name)
    assert isinstance(dt, ct.DType)

    @ct.kernel
    def k(out):
        t = ct.zeros((16,), dtype=dt)
        ct.store(out, index=(0,), tile=t.astype(ct.float32))

    import numpy as np
    with pytest.raises(ct.TileUnsupportedFeatureError, match="sm_100") as e:
        k.trace(np.zeros(16, np.float32))
    assert e.value.kernel == "k"


def test_mma_scaled_raises_naming_sm100():
    import numpy as np

    @ct.kernel
    def k(a, out):
        x = ct.load(a, index=(0, 0), shape=(16, 16))
        s = ct.ones((16, 1), dtype=ct.float32)
        acc = ct.zeros((16, 16), dtype=ct.float32)
        ct.store(out, index=(0, 0), tile=ct.mma_scaled(x, s, x, s, acc))  # here

    with pytest.raises(ct.TileUnsupportedFeatureError, match="sm_100") as e:
        k.trace(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32))
    from tilehelp import line_of
    assert e.value.lineno == line_of(k, "here")
