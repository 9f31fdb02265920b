// RUN: tile-opt %s --split-input-file --convert-tile-to-gpu | FileCheck %s

// print: scalars once per block (thread 0), then one gpu.printf per element
// the thread owns, with the block id and the element's coordinate (thread
// coordinate xor the register's); '%' in the prefix is escaped, floats are
// widened to f64 for vprintf.

#blocked = #tile.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.func @print(%[[N:.*]]: i32)
  // CHECK-DAG: %[[BX:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
  // CHECK-DAG: %[[BY:.*]] = nvvm.read.ptx.sreg.ctaid.y : i32
  // CHECK-DAG: %[[BZ:.*]] = nvvm.read.ptx.sreg.ctaid.z : i32
  // CHECK: %[[T0:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i32
  // CHECK: scf.if %[[T0]] {
  // CHECK-NEXT: gpu.printf "pid (%d, %d, %d) v%% (operand 0) %d\0A", %[[BX]], %[[BY]], %[[BZ]], %[[N]] : i32, i32, i32, i32
  // CHECK: %[[E0:.*]] = vector.extract %[[V:.*]][0] : f32 from vector<2xf32>
  // CHECK: %[[I0:.*]] = arith.xori %[[C:.*]], %{{.*}} : i32
  // CHECK: %[[W0:.*]] = arith.extf %[[E0]] : f32 to f64
  // CHECK: gpu.printf "pid (%d, %d, %d) idx (%d) v%% (operand 1) %f\0A", %[[BX]], %[[BY]], %[[BZ]], %[[I0]], %[[W0]] : i32, i32, i32, i32, f64
  // CHECK: arith.xori %[[C]], %{{.*}} : i32
  // CHECK: gpu.printf "pid (%d, %d, %d) idx (%d) v%% (operand 1) %f\0A"
  // CHECK-NOT: gpu.printf
  // CHECK: gpu.return
  func.func @print(%n: i32) attributes {tile.kernel} {
    %t = tile.iota : tensor<256xi32, #blocked>
    %f = arith.sitofp %t : tensor<256xi32, #blocked> to tensor<256xf32, #blocked>
    tile.print "v%" %n, %f : i32, tensor<256xf32, #blocked>
    return
  }
}

// -----

// assert: each thread and-reduces its elements of the condition; where one
// is false it calls __assertfail(message, file, line, kernel, 1), then traps.
#blocked = #tile.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-DAG: llvm.mlir.global internal constant @[[$FN:__tile_assert_str[0-9]+]]("check\00")
  // CHECK-DAG: llvm.mlir.global internal constant @[[$FILE:__tile_assert_str[0-9]+]]("k.py\00")
  // CHECK-DAG: llvm.mlir.global internal constant @[[$MSG:__tile_assert_str[0-9]+]]("index out of range\00")
  // CHECK-DAG: llvm.func @__assertfail(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64)
  // CHECK-LABEL: gpu.func @check
  // CHECK: %[[OK:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : vector<2xi32>
  // CHECK: %[[A:.*]] = vector.extract %[[OK]][0] : i1 from vector<2xi1>
  // CHECK: %[[B:.*]] = vector.extract %[[OK]][1] : i1 from vector<2xi1>
  // CHECK: %[[ALL:.*]] = arith.andi %[[A]], %[[B]] : i1
  // CHECK: %[[BAD:.*]] = arith.xori %[[ALL]], %{{.*}} : i1
  // CHECK: scf.if %[[BAD]] {
  // CHECK-DAG: %[[PM:.*]] = llvm.mlir.addressof @[[$MSG]] : !llvm.ptr
  // CHECK-DAG: %[[PF:.*]] = llvm.mlir.addressof @[[$FILE]] : !llvm.ptr
  // CHECK-DAG: %[[L:.*]] = arith.constant 7 : i32
  // CHECK-DAG: %[[PN:.*]] = llvm.mlir.addressof @[[$FN]] : !llvm.ptr
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
  // CHECK: llvm.call @__assertfail(%[[PM]], %[[PF]], %[[L]], %[[PN]], %[[ONE]])
  // CHECK-NEXT: llvm.intr.trap
  // CHECK-NEXT: }
  func.func @check(%n: i32) attributes {tile.kernel} {
    %t = tile.iota : tensor<256xi32, #blocked>
    %s = tile.splat %n : tensor<256xi32, #blocked>
    %ok = arith.cmpi slt, %t, %s : tensor<256xi32, #blocked>
    tile.assert %ok, "index out of range" : tensor<256xi1, #blocked> loc("k.py":7:3)
    return
  }
}
