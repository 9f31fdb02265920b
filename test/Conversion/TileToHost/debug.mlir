// RUN: tile-opt %s -convert-tile-to-host -cse -split-input-file | FileCheck %s

// print: one line per block, built by runtime calls between
// __tile_print_begin (which reports the block id) and __tile_print_end;
// tiles print as nested lists, f16 through f32.
// CHECK-DAG: func.func private @__tile_print_begin(i32, i32, i32)
// CHECK-DAG: func.func private @__tile_print_str(!llvm.ptr)
// CHECK-DAG: func.func private @__tile_print_f32(f32)
// CHECK-DAG: func.func private @__tile_print_i64(i64)
// CHECK-DAG: func.func private @__tile_print_end()
// CHECK-DAG: llvm.mlir.global internal constant @[[$PREFIX:__tile_str[_0-9]*]]("x = \00")
// CHECK-DAG: llvm.mlir.global internal constant @[[$OPEN:__tile_str[_0-9]*]]("[\00")
// CHECK-DAG: llvm.mlir.global internal constant @[[$SEP:__tile_str[_0-9]*]](", \00")
// CHECK-LABEL: func.func @print
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf16>, %[[I:.*]]: i32, %[[BX:arg[0-9]+]]: i32 {tile.grid = "bid_x"}, %[[BY:arg[0-9]+]]: i32 {tile.grid = "bid_y"}, %[[BZ:arg[0-9]+]]: i32 {tile.grid = "bid_z"}
// CHECK: call @__tile_print_begin(%[[BX]], %[[BY]], %[[BZ]])
// CHECK: %[[P:.*]] = llvm.mlir.addressof @[[$PREFIX]] : !llvm.ptr
// CHECK: call @__tile_print_str(%[[P]])
// CHECK: llvm.mlir.addressof @[[$OPEN]]
// CHECK: scf.for %[[R:.*]] = %c0 to %c2
// CHECK:   scf.for %[[C:.*]] = %c0 to %c3
// CHECK:     arith.cmpi ne, %[[C]], %c0
// CHECK:     scf.if
// CHECK:       llvm.mlir.addressof @[[$SEP]]
// CHECK:     %[[E:.*]] = tensor.extract %[[X]][%[[R]], %[[C]]] : tensor<2x3xf16>
// CHECK:     %[[F:.*]] = arith.extf %[[E]] : f16 to f32
// CHECK:     func.call @__tile_print_f32(%[[F]])
// CHECK: %[[W:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK: call @__tile_print_i64(%[[W]])
// CHECK: call @__tile_print_end()
func.func @print(%x: tensor<2x3xf16>, %i: i32) attributes {tile.kernel} {
  tile.print "x = " %x, %i : tensor<2x3xf16>, i32
  return
}

// -----

// assert: and-reduce the lanes; on failure the runtime reports the block and
// "file:line: message", then aborts.
// CHECK: func.func private @__tile_assert_fail(!llvm.ptr, i32, i32, i32)
// CHECK: llvm.mlir.global internal constant @[[$MSG:__tile_str[_0-9]*]]("k.py:7: all positive\00")
// CHECK-LABEL: func.func @assert
// CHECK-SAME: (%[[C:.*]]: tensor<16xi1>, %[[BX:arg[0-9]+]]: i32 {tile.grid = "bid_x"}, %[[BY:arg[0-9]+]]: i32 {tile.grid = "bid_y"}, %[[BZ:arg[0-9]+]]: i32 {tile.grid = "bid_z"}
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[TRUE]] : i1) outs(%{{.*}} : tensor<i1>)
// CHECK: %[[ALL:.*]] = linalg.reduce ins(%[[C]] : tensor<16xi1>) outs(%[[INIT]] : tensor<i1>) dimensions = [0]
// CHECK:   arith.andi
// CHECK: %[[OK:.*]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK: %[[BAD:.*]] = arith.xori %[[OK]], %[[TRUE]] : i1
// CHECK: scf.if %[[BAD]] {
// CHECK:   %[[M:.*]] = llvm.mlir.addressof @[[$MSG]] : !llvm.ptr
// CHECK:   func.call @__tile_assert_fail(%[[M]], %[[BX]], %[[BY]], %[[BZ]])
func.func @assert(%c: tensor<16xi1>) attributes {tile.kernel} {
  tile.assert %c, "all positive" : tensor<16xi1> loc("k.py":7:3)
  return
}
