// RUN: tile-opt %s -tile-fuse -split-input-file | FileCheck %s

// a * b + c becomes one fma when the product has no other use.
// CHECK-LABEL: func.func @contract
// CHECK-SAME: (%[[A:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>, %[[C:.*]]: tensor<64xf32>)
// CHECK-NEXT: %[[F:.*]] = math.fma %[[A]], %[[B]], %[[C]] : tensor<64xf32>
// CHECK-NEXT: return %[[F]]
func.func @contract(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<64xf32>) -> tensor<64xf32> {
  %m = arith.mulf %a, %b : tensor<64xf32>
  %s = arith.addf %c, %m : tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// A product used twice stays: contracting would compute it twice.
// CHECK-LABEL: func.func @shared_product
// CHECK: %[[M:.*]] = arith.mulf
// CHECK: %[[S:.*]] = arith.addf %[[M]], %{{.*}}
// CHECK-NOT: math.fma
// CHECK: return %[[S]], %[[M]]
func.func @shared_product(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %m = arith.mulf %a, %b : tensor<64xf32>
  %s = arith.addf %m, %c : tensor<64xf32>
  return %s, %m : tensor<64xf32>, tensor<64xf32>
}

// -----

// Integer multiply-adds are exact: nothing to contract.
// CHECK-LABEL: func.func @integers
// CHECK: arith.muli
// CHECK: arith.addi
func.func @integers(%a: tensor<64xi32>, %b: tensor<64xi32>, %c: tensor<64xi32>) -> tensor<64xi32> {
  %m = arith.muli %a, %b : tensor<64xi32>
  %s = arith.addi %m, %c : tensor<64xi32>
  return %s : tensor<64xi32>
}

// -----

// Elementwise ops of broadcasts run on the small tiles, then broadcast once;
// chains sink all the way and casts come along.
// CHECK-LABEL: func.func @sink_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf32>, %[[Y:.*]]: tensor<1x64xf32>)
// CHECK-NEXT: %[[S:.*]] = arith.subf %[[X]], %[[Y]] : tensor<1x64xf32>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[S]] : tensor<1x64xf32>
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[E]] : tensor<1x64xf32> to tensor<1x64xf16>
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %[[T]] : tensor<1x64xf16> -> tensor<32x64xf16>
// CHECK-NEXT: return %[[B]]
func.func @sink_broadcast(%x: tensor<1x64xf32>, %y: tensor<1x64xf32>) -> tensor<32x64xf16> {
  %bx = tile.broadcast %x : tensor<1x64xf32> -> tensor<32x64xf32>
  %by = tile.broadcast %y : tensor<1x64xf32> -> tensor<32x64xf32>
  %s = arith.subf %bx, %by : tensor<32x64xf32>
  %e = math.exp %s : tensor<32x64xf32>
  %t = arith.truncf %e : tensor<32x64xf32> to tensor<32x64xf16>
  return %t : tensor<32x64xf16>
}

// -----

// Broadcasts from different shapes (a row and a column) must stay.
// CHECK-LABEL: func.func @mixed_broadcasts
// CHECK: %[[R:.*]] = tile.broadcast %{{.*}} : tensor<1x64xf32> -> tensor<32x64xf32>
// CHECK: %[[C:.*]] = tile.broadcast %{{.*}} : tensor<32x1xf32> -> tensor<32x64xf32>
// CHECK: arith.addf %[[R]], %[[C]] : tensor<32x64xf32>
func.func @mixed_broadcasts(%r: tensor<1x64xf32>, %c: tensor<32x1xf32>) -> tensor<32x64xf32> {
  %br = tile.broadcast %r : tensor<1x64xf32> -> tensor<32x64xf32>
  %bc = tile.broadcast %c : tensor<32x1xf32> -> tensor<32x64xf32>
  %s = arith.addf %br, %bc : tensor<32x64xf32>
  return %s : tensor<32x64xf32>
}

// -----

// Nested broadcasts compose.
// CHECK-LABEL: func.func @compose
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<16x64xf32>
// CHECK-NEXT: return %[[B]]
func.func @compose(%x: tensor<1x1xf32>) -> tensor<16x64xf32> {
  %a = tile.broadcast %x : tensor<1x1xf32> -> tensor<1x64xf32>
  %b = tile.broadcast %a : tensor<1x64xf32> -> tensor<16x64xf32>
  return %b : tensor<16x64xf32>
}

// -----

// mma(a, b, 0) + c accumulates into c directly.
// CHECK-LABEL: func.func @mma_epilogue
// CHECK-SAME: (%[[A:.*]]: tensor<32x16xf16>, %[[B:.*]]: tensor<16x32xf16>, %[[C:.*]]: tensor<32x32xf32>)
// CHECK-NEXT: %[[M:.*]] = tile.mma %[[A]], %[[B]], %[[C]] : tensor<32x16xf16>, tensor<16x32xf16> -> tensor<32x32xf32>
// CHECK-NEXT: return %[[M]]
func.func @mma_epilogue(%a: tensor<32x16xf16>, %b: tensor<16x32xf16>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %z = arith.constant dense<0.0> : tensor<32x32xf32>
  %m = tile.mma %a, %b, %z : tensor<32x16xf16>, tensor<16x32xf16> -> tensor<32x32xf32>
  %s = arith.addf %m, %c : tensor<32x32xf32>
  return %s : tensor<32x32xf32>
}

// -----

// A non-zero accumulator keeps its addition.
// CHECK-LABEL: func.func @mma_with_acc
// CHECK: %[[M:.*]] = tile.mma
// CHECK: arith.addf %[[M]], %{{.*}}
func.func @mma_with_acc(%a: tensor<32x16xf16>, %b: tensor<16x32xf16>, %acc: tensor<32x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %m = tile.mma %a, %b, %acc : tensor<32x16xf16>, tensor<16x32xf16> -> tensor<32x32xf32>
  %s = arith.addf %m, %c : tensor<32x32xf32>
  return %s : tensor<32x32xf32>
}
