// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s --mlir-print-op-generic | tile-opt | FileCheck %s

// Layout encodings on tensor types, printed, re-parsed and printed again.

// CHECK-DAG: #[[$B:.*]] = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>
// CHECK-DAG: #[[$B1:.*]] = #tile.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[$B3:.*]] = #tile.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [1, 4, 8], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]}>
// CHECK-DAG: #[[$B8:.*]] = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[$M:.*]] = #tile.mma<{version = 2, warpsPerCTA = [4, 1]}>
// CHECK-DAG: #[[$ROWS:.*]] = #tile.slice<{dim = 1, parent = #[[$B]]}>
// CHECK-DAG: #[[$COLS:.*]] = #tile.slice<{dim = 0, parent = #[[$B]]}>
// CHECK-DAG: #[[$MROWS:.*]] = #tile.slice<{dim = 1, parent = #[[$M]]}>
// CHECK-DAG: #[[$SCALAR:.*]] = #tile.slice<{dim = 0, parent = #[[$B1]]}>
// CHECK-DAG: #[[$S3:.*]] = #tile.slice<{dim = 2, parent = #[[$B3]]}>
// CHECK-DAG: #[[$S3S:.*]] = #tile.slice<{dim = 0, parent = #[[$S3]]}>
#blocked = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>
#blocked1 = #tile.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#mma = #tile.mma<{version = 2, warpsPerCTA = [4, 1]}>

// CHECK-LABEL: func @blocked
// CHECK-SAME: tensor<16x64xf32, #[[$B]]>
func.func @blocked(%x: tensor<16x64xf32, #blocked>) -> tensor<16x64xf32, #blocked> {
  return %x : tensor<16x64xf32, #blocked>
}

// Smaller and larger tiles than the layout covers.
// CHECK-LABEL: func @blocked_any_extent
// CHECK-SAME: tensor<1x1xf16, #[[$B]]>, %{{.*}}: tensor<1024x2048xi1, #[[$B]]>
func.func @blocked_any_extent(%x: tensor<1x1xf16, #blocked>, %y: tensor<1024x2048xi1, #blocked>) {
  return
}

// Reductions of both dimensions, of an mma accumulator, and a rank-0 tile.
// CHECK-LABEL: func @slices
// CHECK-SAME: tensor<16xf32, #[[$ROWS]]>, %{{.*}}: tensor<64xf32, #[[$COLS]]>
// CHECK-SAME: tensor<64xf32, #[[$MROWS]]>, %{{.*}}: tensor<i32, #[[$SCALAR]]>
func.func @slices(%r: tensor<16xf32, #tile.slice<{dim = 1, parent = #blocked}>>,
                  %c: tensor<64xf32, #tile.slice<{dim = 0, parent = #blocked}>>,
                  %m: tensor<64xf32, #tile.slice<{dim = 1, parent = #mma}>>,
                  %s: tensor<i32, #tile.slice<{dim = 0, parent = #blocked1}>>) {
  return
}

// A slice of a slice: a 3-d tile reduced twice.
// CHECK-LABEL: func @slice_of_slice
// CHECK-SAME: tensor<8xf32, #[[$S3S]]>
func.func @slice_of_slice(%x: tensor<8xf32, #tile.slice<{dim = 0, parent = #tile.slice<{dim = 2, parent = #tile.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [1, 4, 8], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]}>}>}>>) {
  return
}

// CHECK-LABEL: func @mma
// CHECK-SAME: tensor<128x64xf32, #[[$M]]>
// CHECK: tile.convert_layout %{{.*}} : tensor<128x64xf32, #[[$M]]> -> tensor<128x64xf32, #[[$B8]]>
func.func @mma(%acc: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>> {
  %0 = tile.convert_layout %acc : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>
  return %0 : tensor<128x64xf32, #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>
}
