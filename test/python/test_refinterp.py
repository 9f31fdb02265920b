"""refinterp.py itself (the --tile-reference interpreter), on hand-written IR
of the forms the frontend emits for runtime control flow: scf.if with and
without results or an else region, scf.while forwarding values that differ
from its arguments, and the integer/float ops with C or IEEE semantics that
NumPy spells differently. Needs neither _tile nor tile-opt."""

import numpy as np
import pytest

from refinterp import Interp, RefKernel, _cmpf

ARR = "!tile.array<?xi32, strides = [1], align = 16, div = 16>"

# out[0:4] = n when n > 0 (an scf.if with no results and no else);
# a while whose condition region forwards a - 1 rather than its argument a:
# out[4] = trips, out[5] = the last forwarded value, out[6] = -7 divsi n,
# out[7] = an if/else result chosen by n == 3.
IR = f"""module {{
  func.func @k(%out: {ARR}, %n: i32) attributes {{tile.kernel}} {{
    %0 = arith.constant 0 : i32
    %1 = arith.constant 1 : i32
    %m7 = arith.constant -7 : i32
    %c = arith.cmpi sgt, %n, %0 : i32
    scf.if %c {{
      %t = tile.splat %n : tensor<4xi32>
      tile.store %out[%0], %t : {ARR}, tensor<4xi32>
    }} loc("k.py":3:5)
    scf.while : () -> () {{
      %f = arith.cmpi slt, %n, %m7 : i32
      scf.condition(%f)
    }} do {{
      scf.yield
    }}
    %r:2 = scf.while (%a = %n, %b = %0) : (i32, i32) -> (i32, i32) {{
      %a1 = arith.subi %a, %1 : i32
      %go = arith.cmpi sgt, %a, %1 : i32
      scf.condition(%go) %a1, %b : i32, i32
    }} do {{
    ^bb0(%x: i32, %y: i32):
      %y1 = arith.addi %y, %1 : i32
      scf.yield %x, %y1 : i32, i32
    }}
    %q = arith.divsi %m7, %n : i32
    %three = arith.constant 3 : i32
    %is3 = arith.cmpi eq, %n, %three : i32
    %e = scf.if %is3 -> (i32) {{
      %h = arith.constant 100 : i32
      scf.yield %h : i32
    }} else {{
      %g = arith.constant 200 : i32
      scf.yield %g : i32
    }}
    %4 = arith.constant 4 : i32
    %v = tile.splat %r#1 : tensor<1xi32>
    %w = tile.splat %r#0 : tensor<1xi32>
    %5 = arith.constant 5 : i32
    %6 = arith.constant 6 : i32
    %7 = arith.constant 7 : i32
    %qv = tile.splat %q : tensor<1xi32>
    %ev = tile.splat %e : tensor<1xi32>
    tile.store %out[%4], %v : {ARR}, tensor<1xi32>
    tile.store %out[%5], %w : {ARR}, tensor<1xi32>
    tile.store %out[%6], %qv : {ARR}, tensor<1xi32>
    tile.store %out[%7], %ev : {ARR}, tensor<1xi32>
    return
  }}
}}"""


def run(n):
    out = np.full(8, -99, np.int32)
    Interp(IR).run((1, 1, 1), [out.ctypes.data, 8, 1, n])
    return out


@pytest.mark.parametrize("n", [-3, 1, 2, 3, 5])
def test_scf_if_and_while(n):
    got = run(n)
    a, trips = n, 0
    while a > 1:  # the condition region forwards a - 1 to the body and out
        a, trips = a - 1, trips + 1
    head = [n] * 4 if n > 0 else [-99] * 4
    want = head + [trips, a - 1, int(-7 / n), 100 if n == 3 else 200]
    assert got.tolist() == want


def test_unordered_float_predicates_are_true_on_nan():
    a = np.array([1, np.nan, 2, 3], np.float32)
    b = np.array([1, 1, np.nan, 2], np.float32)
    assert _cmpf("oeq", a, b).tolist() == [True, False, False, False]
    assert _cmpf("ueq", a, b).tolist() == [True, True, True, False]
    assert _cmpf("one", a, b).tolist() == [False, False, False, True]
    assert _cmpf("ult", a, b).tolist() == [False, True, True, False]
    assert _cmpf("uno", a, b).tolist() == [False, True, True, False]


def test_grids_over_the_limits_raise_before_running():
    k = RefKernel(IR, "cpu", {})
    for grid in [(2**31, 1, 1), (1, 65536, 1), (1, 1, -1)]:
        with pytest.raises(RuntimeError, match="limit|below 0"):
            k.launch(grid, [0, 8, 1, 1])
