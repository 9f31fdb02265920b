"""tile-opt and tilec on hostile input (issue 13, item 11): every bad input
gets a one-line diagnostic and exit status 1, never a Python traceback, a
signal (stack overflow) or a parse that takes minutes.

Both tools run as a user runs them, as subprocesses.
"""

import os
import subprocess
import time

import pytest

from tilehelp import ROOT, tile_opt_path

from tile import backend

TILEC = os.environ.get("TILEC") or os.path.join(ROOT, "tools", "tilec", "tilec")

needs_tile = pytest.mark.skipif(backend.find_module_file() is None,
                                reason="_tile module not built")

# compiler/InputLimits.h
MAX_NESTING = 256
MAX_DIGITS = 512


def _env(tmp_path):
    env = dict(os.environ)
    env.pop("TILE_DUMP_DIR", None)
    env["TILE_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def run_tool(args, tmp_path, stdin=None, timeout=60):
    for attempt in range(5):  # a build may be relinking the binary right now
        try:
            start = time.monotonic()
            r = subprocess.run(args, input=stdin, capture_output=True, timeout=timeout,
                               env=_env(tmp_path))
            r.seconds = time.monotonic() - start
            return r
        except OSError:
            if attempt == 4:
                raise
            time.sleep(2)


def tile_opt(path, tmp_path, *flags, stdin=None):
    return run_tool([tile_opt_path(), *flags, str(path)], tmp_path, stdin=stdin)


def tilec(path, tmp_path, *flags, stdin=None):
    return run_tool([TILEC, str(path), *flags], tmp_path, stdin=stdin, timeout=300)


def assert_diagnostic(r, *needles):
    """Exit status 1, one `error:` naming the problem, no traceback."""
    err = r.stderr.decode(errors="replace")
    assert r.returncode == 1, f"exit status {r.returncode}:\n{err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    assert "error:" in err, err[-3000:]
    for needle in needles:
        assert needle in err, err[-3000:]
    return err


# -- inputs ---------------------------------------------------------------------

def nested_modules(n):
    return "module {\n" * n + "}\n" * n


def nested_regions(n):
    """A function with `n` nested scf.execute_region ops."""
    lines = ["func.func @f() -> i32 {"]
    lines += [f"%r{i} = scf.execute_region -> i32 {{" for i in range(n)]
    lines.append("%c = arith.constant 0 : i32")
    for i in reversed(range(n)):
        lines += [f"scf.yield %{'c' if i == n - 1 else f'r{i + 1}'} : i32", "}"]
    lines += ["return %r0 : i32", "}"]
    return "\n".join(lines) + "\n"


def nested_ifs_kernel(n):
    """A kernel storing under `n` nested scf.if: valid IR for both backends."""
    v = "!tile.array<?xf32, strides = [1], align = 16, div = 16>"
    lines = [f"func.func @deep(%x: {v}, %n: i32) attributes {{tile.kernel}} {{",
             "%c0 = arith.constant 0 : i32",
             "%b = arith.cmpi sgt, %n, %c0 : i32"]
    lines += ["scf.if %b {"] * n
    lines += ["%z = arith.constant dense<1.0> : tensor<64xf32>",
              f"tile.store %x[%c0], %z : {v}, tensor<64xf32>"]
    lines += ["}"] * n + ["return", "}"]
    return "\n".join(lines) + "\n"


def literal(digits):
    return ("func.func @f() -> i32 {\n  %c = arith.constant " + "7" * digits +
            " : i32\n  return %c : i32\n}\n")


DEEP = {
    "modules": (nested_modules(50_000), "257:8"),
    "regions": (nested_regions(20_000), "257:35"),
    "brackets": ("module attributes {x = " + "[" * 30_000 + "1" + "]" * 30_000 + "} {}\n",
                 "1:279"),
    "types": ("func.func private @f() -> " + "tensor<1x" * 30_000 + "f32" +
              ">" * 30_000 + "\n", "1:2337"),
}


# -- tile-opt -------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(DEEP))
def test_tile_opt_deep_nesting(kind, tmp_path):
    text, where = DEEP[kind]
    path = tmp_path / "deep.mlir"
    path.write_text(text)
    err = assert_diagnostic(tile_opt(path, tmp_path), "nesting deeper than 256 levels")
    # At the bracket that opens level 257.
    assert err.startswith(f"{path}:{where}: error: "), err


def test_tile_opt_deep_nesting_stdin(tmp_path):
    r = tile_opt("-", tmp_path, stdin=nested_modules(50_000).encode())
    err = assert_diagnostic(r, "nesting deeper than 256 levels")
    assert err.startswith(f"<stdin>:{MAX_NESTING + 1}:")


def test_tile_opt_nesting_at_the_limit_parses(tmp_path):
    path = tmp_path / "ok.mlir"
    path.write_text(nested_modules(MAX_NESTING))
    r = tile_opt(path, tmp_path)
    assert r.returncode == 0, r.stderr.decode()


@pytest.mark.parametrize("pipeline", ["--tile-to-host", "--tile-to-llvm-nvvm"])
def test_tile_opt_deep_kernel_compiles(pipeline, tmp_path):
    # Close to the limit, the pipelines themselves must not overflow either.
    path = tmp_path / "deep.mlir"
    path.write_text(nested_ifs_kernel(MAX_NESTING - 6))
    r = tile_opt(path, tmp_path, pipeline)
    assert r.returncode == 0, r.stderr.decode()[-3000:]


def test_tile_opt_huge_literal(tmp_path):
    path = tmp_path / "big.mlir"
    path.write_text(literal(30_000))  # took minutes: parse time is cubic
    r = tile_opt(path, tmp_path)
    assert_diagnostic(r, f"{path}:2:23: error: a number literal of 30000 digits")
    assert r.seconds < 10


def test_tile_opt_long_names_and_strings_pass(tmp_path):
    # Only number literals are limited: long names, strings and literals at
    # the limit are fine.
    name = "v" + "1" * 5000
    text = (f'func.func @{name}() -> i32 attributes {{s = "{"9" * 5000}"}} {{\n'
            f"  %{name} = arith.constant {'0' * (MAX_DIGITS - 1)}1 : i32\n"
            f"  return %{name} : i32\n}}\n")
    path = tmp_path / "names.mlir"
    path.write_text(text)
    r = tile_opt(path, tmp_path)
    assert r.returncode == 0, r.stderr.decode()[-2000:]


def test_tile_opt_map_threads_on_ops_mlir(tmp_path):
    # @shapes permutes a function argument: a segfault (issue 13), now an
    # error that names the function.
    r = tile_opt(os.path.join(ROOT, "test", "Dialect", "Tile", "ops.mlir"), tmp_path,
                 "--tile-map-threads")
    assert_diagnostic(r, "takes or returns a tensor, which has no thread layout")


# -- tilec ----------------------------------------------------------------------

@needs_tile
def test_tilec_non_utf8_mlir(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_bytes(b"func.func @f() {\n  return \xff\xfe\n}\n")
    err = assert_diagnostic(tilec(path, tmp_path, "--target", "cpu"))
    assert err.strip() == (f"tilec: error: {path}:2:10: byte 0xff is not UTF-8 text: "
                           "tilec reads MLIR as UTF-8")


@needs_tile
def test_tilec_non_utf8_stdin(tmp_path):
    r = tilec("-", tmp_path, "--target", "cpu", stdin=b'module attributes {s = "\xc3("} {}\n')
    err = assert_diagnostic(r, "<stdin>:1:25: byte 0xc3 is not UTF-8 text")
    assert len(err.strip().splitlines()) == 1


@needs_tile
def test_tilec_python_syntax_error(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import tile\n\n@tile.kernel\ndef k(x:\n")
    err = assert_diagnostic(tilec(f"{path}::k", tmp_path))
    assert f"{path}:4: SyntaxError" in err
    assert len(err.strip().splitlines()) == 1


@needs_tile
@pytest.mark.parametrize("kind", ["modules", "regions"])
def test_tilec_deep_nesting(kind, tmp_path):
    text, _ = DEEP[kind]
    path = tmp_path / "deep.mlir"
    path.write_text(text)
    assert_diagnostic(tilec(path, tmp_path, "--target", "cpu"),
                      f"{path}:{MAX_NESTING + 1}:", "nesting deeper than 256 levels")


@needs_tile
def test_tilec_huge_literal(tmp_path):
    path = tmp_path / "big.mlir"
    path.write_text(literal(30_000))
    r = tilec(path, tmp_path, "--target", "cpu")
    assert_diagnostic(r, f"{path}:2:23: error: a number literal of 30000 digits")
    assert r.seconds < 20


# MLIR 22's parser crashes (SIGSEGV, mlir-opt too) on a dense array of index;
# the compiler fuzzer made one from `array<i32: ...>` (seed 20261211).
INDEX_ARRAY = ("func.func @f(%a: !tile.array<?x?xf32>, %i: i32) {\n"
               "  %0 = tile.load %a[%i, %i] {order = array<index: 1, 0>} : "
               "!tile.array<?x?xf32> -> tensor<16x16xf32>\n  return\n}\n")


def test_tile_opt_index_dense_array(tmp_path):
    path = tmp_path / "index.mlir"
    path.write_text(INDEX_ARRAY)
    assert_diagnostic(tile_opt(path, tmp_path), f"{path}:2:38: error: a dense array of "
                      "`index`")


@needs_tile
def test_tilec_index_dense_array(tmp_path):
    path = tmp_path / "index.mlir"
    path.write_text(INDEX_ARRAY)
    assert_diagnostic(tilec(path, tmp_path, "--target", "cpu"), "a dense array of `index`")


@needs_tile
@pytest.mark.parametrize("target", ["cpu", "sm_90"])
def test_tilec_deep_kernel_compiles(target, tmp_path):
    path = tmp_path / "deep.mlir"
    path.write_text(nested_ifs_kernel(MAX_NESTING - 6))
    stage = "llvm-ir" if target == "cpu" else "ptx"
    r = tilec(path, tmp_path, "--target", target, "--emit", stage)
    assert r.returncode == 0, r.stderr.decode()[-3000:]


def long_chain_kernel(n):
    """A kernel adding a splat to itself `n` times: a chain of cheap ops
    that tile-map-threads recomputes instead of converting."""
    v = "!tile.array<?xf32, strides = [1], align = 16, div = 16>"
    lines = [f"func.func @chain(%x: {v}, %s: f32) attributes {{tile.kernel}} {{",
             "%c0 = arith.constant 0 : i32", "%a0 = tile.splat %s : tensor<64xf32>"]
    lines += [f"%a{i + 1} = arith.addf %a{i}, %a{i} : tensor<64xf32>" for i in range(n)]
    lines += [f"tile.store %x[%c0], %a{n} : {v}, tensor<64xf32>", "return", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("pipeline", ["--tile-map-threads", "--tile-to-llvm-nvvm"])
def test_tile_opt_long_chain_of_cheap_ops(pipeline, tmp_path):
    # tile-map-threads cloned the whole chain recursively at its user: a
    # stack overflow at 100k ops. Chains over 32 ops are computed once.
    path = tmp_path / "chain.mlir"
    path.write_text(long_chain_kernel(100_000))
    r = tile_opt(path, tmp_path, pipeline)
    assert r.returncode == 0, r.stderr.decode()[-3000:]
