// RUN: tile-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{threadsPerWarp must multiply to 32, got 16}}
func.func @blocked_threads(%x: tensor<16x64xf32, #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 8], warpsPerCTA = [2, 2], order = [1, 0]}>>) {
  return
}

// -----

// expected-error @+1 {{is for rank 2, not for a tensor of rank 1}}
func.func @blocked_rank(%x: tensor<64xf32, #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>>) {
  return
}

// -----

// expected-error @+1 {{a tensor with a layout needs static power-of-two extents}}
func.func @blocked_extent(%x: tensor<16x48xf32, #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>>) {
  return
}

// -----

// expected-error @+1 {{a tensor with a layout needs static power-of-two extents}}
func.func @blocked_dynamic(%x: tensor<?x64xf32, #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>>) {
  return
}

// -----

#blocked = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>
// expected-error @+1 {{slice dim 2 is out of range for a parent of rank 2}}
func.func @slice_dim(%x: tensor<16xf32, #tile.slice<{dim = 2, parent = #blocked}>>) {
  return
}

// -----

// expected-error @+1 {{slice parent must be a layout, got 5 : i32}}
func.func @slice_parent(%x: tensor<16xf32, #tile.slice<{dim = 0, parent = 5 : i32}>>) {
  return
}

// -----

#blocked = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]}>
// The slice of a 2-d layout is 1-d.
// expected-error @+1 {{is for rank 1, not for a tensor of rank 2}}
func.func @slice_rank(%x: tensor<16x64xf32, #tile.slice<{dim = 1, parent = #blocked}>>) {
  return
}

// -----

#mma = #tile.mma<{version = 2, warpsPerCTA = [2, 2]}>
// expected-error @+1 {{slice dim 1 is out of range for a parent of rank 1}}
func.func @slice_of_slice_dim(%x: tensor<f32, #tile.slice<{dim = 1, parent = #tile.slice<{dim = 0, parent = #mma}>}>>) {
  return
}

// -----

// expected-error @+1 {{mma layout version 3 is not supported (2: m16n8 accumulators)}}
func.func @mma_version(%x: tensor<64x64xf32, #tile.mma<{version = 3, warpsPerCTA = [2, 2]}>>) {
  return
}

// -----

// expected-error @+1 {{mma layout needs 2 warpsPerCTA (M, N), got 3}}
func.func @mma_warps_rank(%x: tensor<64x64xf32, #tile.mma<{version = 2, warpsPerCTA = [2, 2, 1]}>>) {
  return
}

// -----

// expected-error @+1 {{mma layout warps must be powers of two}}
func.func @mma_warps_pow2(%x: tensor<64x64xf32, #tile.mma<{version = 2, warpsPerCTA = [3, 1]}>>) {
  return
}

// -----

// expected-error @+1 {{mma layout warps must be powers of two}}
func.func @mma_warps_zero(%x: tensor<64x64xf32, #tile.mma<{version = 2, warpsPerCTA = [0, 4]}>>) {
  return
}

// -----

// expected-error @+1 {{is for rank 2, not for a tensor of rank 3}}
func.func @mma_rank(%x: tensor<2x64x64xf32, #tile.mma<{version = 2, warpsPerCTA = [2, 2]}>>) {
  return
}

// -----

// A result type is verified as well.
func.func @mma_result(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{is for rank 2, not for a tensor of rank 1}}
  %0 = "tile.some_op"() : () -> tensor<64xf32, #tile.mma<{version = 2, warpsPerCTA = [2, 2]}>>
  return
}
