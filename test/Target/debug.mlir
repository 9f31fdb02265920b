// tile.print reaches PTX as vprintf calls and tile.assert as __assertfail
// then trap; ptxas assembles both.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK-DAG: .extern .func  (.param .b32 func_retval0) vprintf
// CHECK-DAG: .extern .func __assertfail
// CHECK-DAG: .global .align 1 .b8 printfFormat_{{[0-9]+}}
// CHECK-DAG: .global .align 1 .b8 __tile_assert_str{{[0-9]+}}
// CHECK: .visible .entry debug(
// CHECK: call.uni (retval0), vprintf, (param0, param1);
// CHECK: st.param.b32 {{.*}}[param2], 7;
// CHECK: call.uni __assertfail, (param0, param1, param2, param3, param4);
// CHECK: trap;

module {
  func.func @debug(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                   %n: i32) attributes {tile.kernel} {
    %i = tile.bid 0
    %v = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<256xf32>
    tile.print "x" %n, %v : i32, tensor<256xf32>
    %t = tile.iota : tensor<256xi32>
    %s = tile.splat %n : tensor<256xi32>
    %ok = arith.cmpi slt, %t, %s : tensor<256xi32>
    tile.assert %ok, "index out of range" : tensor<256xi1> loc("k.py":7:3)
    return
  }
}
