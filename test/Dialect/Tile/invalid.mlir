// RUN: tile-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{array element type must be an integer or float}}
func.func @array_elem(%a: !tile.array<?xindex>) { return }

// -----

// expected-error @+1 {{array of rank 2 has 1 strides}}
func.func @array_strides(%a: !tile.array<?x?xf32, strides = [1]>) { return }

// -----

// expected-error @+1 {{array alignment must be a power of two, got 12}}
func.func @array_align(%a: !tile.array<?xf32, align = 12>) { return }

// -----

// expected-error @+1 {{array divisibility must be positive, got 0}}
func.func @array_div(%a: !tile.array<?xf32, div = 0>) { return }

// -----

func.func @bid_axis() {
  // expected-error @+1 {{grid axis must be 0, 1 or 2, got 3}}
  %0 = tile.bid 3
  return
}

// -----

func.func @num_blocks_axis() {
  // expected-error @+1 {{grid axis must be 0, 1 or 2, got -1}}
  %0 = tile.num_blocks -1
  return
}

// -----

func.func @dim_range(%a: !tile.array<?x?xf32>) {
  // expected-error @+1 {{dimension 2 is out of range for an array of rank 2}}
  %0 = tile.dim %a, 2 : !tile.array<?x?xf32>
  return
}

// -----

func.func @stride_range(%a: !tile.array<?xf32>) {
  // expected-error @+1 {{dimension 1 is out of range for an array of rank 1}}
  %0 = tile.stride %a, 1 : !tile.array<?xf32>
  return
}

// -----

func.func @load_indices(%a: !tile.array<?x?xf32>, %i: i32) {
  // expected-error @+1 {{needs one block index per array dimension: 2 expected, 1 given}}
  %0 = tile.load %a[%i] : !tile.array<?x?xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @load_rank(%a: !tile.array<?xf32>, %i: i32) {
  // expected-error @+1 {{loads a rank-2 tile from a rank-1 array}}
  %0 = tile.load %a[%i] : !tile.array<?xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @load_dtype(%a: !tile.array<?xf32>, %i: i32) {
  // expected-error @+1 {{result element type 'f16' differs from the array's 'f32'; cast it first}}
  %0 = tile.load %a[%i] : !tile.array<?xf32> -> tensor<16xf16>
  return
}

// -----

func.func @load_pow2(%a: !tile.array<?xf32>, %i: i32) {
  // expected-error @+1 {{every tile dimension must be a power of two}}
  %0 = tile.load %a[%i] : !tile.array<?xf32> -> tensor<100xf32>
  return
}

// -----

func.func @load_too_big(%a: !tile.array<?x?xf32>, %i: i32) {
  // expected-error @+1 {{has 2097152 elements; a tile holds at most 2^20}}
  %0 = tile.load %a[%i, %i] : !tile.array<?x?xf32> -> tensor<2048x1024xf32>
  return
}

// -----

func.func @load_order_size(%a: !tile.array<?x?xf32>, %i: i32) {
  // expected-error @+1 {{order has 1 entries but the tile has rank 2}}
  %0 = tile.load %a[%i, %i] {order = array<i64: 0>} : !tile.array<?x?xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @load_order_perm(%a: !tile.array<?x?xf32>, %i: i32) {
  // expected-error @+1 {{order must be a permutation of [0, 2)}}
  %0 = tile.load %a[%i, %i] {order = array<i64: 1, 1>} : !tile.array<?x?xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @load_padding(%a: !tile.array<?xf32>, %i: i32) {
  // expected-error @+1 {{padding of type 'i32' must have the array's element type 'f32'}}
  %0 = tile.load %a[%i] {padding = 0 : i32} : !tile.array<?xf32> -> tensor<16xf32>
  return
}

// -----

func.func @store_indices(%a: !tile.array<?x?xf32>, %i: i32, %t: tensor<16x16xf32>) {
  // expected-error @+1 {{needs one block index per array dimension: 2 expected, 1 given}}
  tile.store %a[%i], %t : !tile.array<?x?xf32>, tensor<16x16xf32>
  return
}

// -----

func.func @store_rank(%a: !tile.array<?xf32>, %i: i32, %t: tensor<16x16xf32>) {
  // expected-error @+1 {{stores a rank-2 tile into a rank-1 array}}
  tile.store %a[%i], %t : !tile.array<?xf32>, tensor<16x16xf32>
  return
}

// -----

func.func @store_dtype(%a: !tile.array<?xf32>, %i: i32, %t: tensor<16xf64>) {
  // expected-error @+1 {{stored element type 'f64' differs from the array's 'f32'; cast it first}}
  tile.store %a[%i], %t : !tile.array<?xf32>, tensor<16xf64>
  return
}

// -----

func.func @store_pow2(%a: !tile.array<?xf32>, %i: i32, %t: tensor<12xf32>) {
  // expected-error @+1 {{every tile dimension must be a power of two}}
  tile.store %a[%i], %t : !tile.array<?xf32>, tensor<12xf32>
  return
}

// -----

func.func @gather_count(%a: !tile.array<?x?xf32>, %i: tensor<16xi32>) {
  // expected-error @+1 {{needs one index tile per array dimension: 2 expected, 1 given}}
  %0 = tile.gather %a[%i] : !tile.array<?x?xf32>[tensor<16xi32>] -> tensor<16xf32>
  return
}

// -----

func.func @gather_shapes(%a: !tile.array<?x?xf32>, %i: tensor<16xi32>, %j: tensor<8xi32>) {
  // expected-error @+1 {{index tiles must have one shape; broadcast them first}}
  %0 = tile.gather %a[%i, %j] : !tile.array<?x?xf32>[tensor<16xi32>, tensor<8xi32>] -> tensor<16xf32>
  return
}

// -----

func.func @gather_result_shape(%a: !tile.array<?xf32>, %i: tensor<16xi32>) {
  // expected-error @+1 {{operand of type 'tensor<8xf32>' must have the index tiles' shape}}
  %0 = tile.gather %a[%i] : !tile.array<?xf32>[tensor<16xi32>] -> tensor<8xf32>
  return
}

// -----

func.func @gather_dtype(%a: !tile.array<?xf32>, %i: tensor<16xi32>) {
  // expected-error @+1 {{result element type 'f16' differs from the array's 'f32'}}
  %0 = tile.gather %a[%i] : !tile.array<?xf32>[tensor<16xi32>] -> tensor<16xf16>
  return
}

// -----

func.func @gather_index_type(%a: !tile.array<?xf32>, %i: tensor<16xf32>) {
  // expected-error @+1 {{operand #1 must be variadic of statically shaped tensor of signless integer values}}
  %0 = tile.gather %a[%i] : !tile.array<?xf32>[tensor<16xf32>] -> tensor<16xf32>
  return
}

// -----

func.func @scatter_value_shape(%a: !tile.array<?xf32>, %i: tensor<16xi32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{operand of type 'tensor<8xf32>' must have the index tiles' shape}}
  tile.scatter %a[%i], %v : !tile.array<?xf32>[tensor<16xi32>], tensor<8xf32>
  return
}

// -----

func.func @scatter_dtype(%a: !tile.array<?xf32>, %i: tensor<16xi32>, %v: tensor<16xi32>) {
  // expected-error @+1 {{stored element type 'i32' differs from the array's 'f32'}}
  tile.scatter %a[%i], %v : !tile.array<?xf32>[tensor<16xi32>], tensor<16xi32>
  return
}

// -----

func.func @atomic_bitwise_float(%a: !tile.array<?xf32>, %i: tensor<16xi32>, %v: tensor<16xf32>) {
  // expected-error @+1 {{bitwise atomics need an integer array, got 'f32'}}
  %0 = tile.atomic_rmw xor %a[%i], %v : !tile.array<?xf32>[tensor<16xi32>], tensor<16xf32>
  return
}

// -----

func.func @atomic_width(%a: !tile.array<?xi8>, %i: tensor<16xi32>, %v: tensor<16xi8>) {
  // expected-error @+1 {{atomics need 16, 32 or 64-bit elements, got 'i8'}}
  %0 = tile.atomic_rmw add %a[%i], %v : !tile.array<?xi8>[tensor<16xi32>], tensor<16xi8>
  return
}

// -----

func.func @atomic_dtype(%a: !tile.array<?xf32>, %i: tensor<16xi32>, %v: tensor<16xf64>) {
  // expected-error @+1 {{value element type 'f64' differs from the array's 'f32'}}
  %0 = tile.atomic_rmw add %a[%i], %v : !tile.array<?xf32>[tensor<16xi32>], tensor<16xf64>
  return
}

// -----

func.func @atomic_count(%a: !tile.array<?x?xf32>, %i: tensor<16xi32>, %v: tensor<16xf32>) {
  // expected-error @+1 {{needs one index tile per array dimension}}
  %0 = tile.atomic_rmw add %a[%i], %v : !tile.array<?x?xf32>[tensor<16xi32>], tensor<16xf32>
  return
}

// -----

func.func @cas_width(%a: !tile.array<?xi8>, %i: tensor<16xi32>, %v: tensor<16xi8>) {
  // expected-error @+1 {{atomics need 16, 32 or 64-bit elements, got 'i8'}}
  %0 = tile.atomic_cas %a[%i], %v, %v : !tile.array<?xi8>[tensor<16xi32>], tensor<16xi8>
  return
}

// -----

func.func @cas_shape(%a: !tile.array<?xi32>, %i: tensor<16xi32>, %v: tensor<8xi32>) {
  // expected-error @+1 {{must have the index tiles' shape}}
  %0 = tile.atomic_cas %a[%i], %v, %v : !tile.array<?xi32>[tensor<16xi32>], tensor<8xi32>
  return
}

// -----

func.func @cas_dtype(%a: !tile.array<?xi32>, %i: tensor<16xi32>, %v: tensor<16xi64>) {
  // expected-error @+1 {{value element type 'i64' differs from the array's 'i32'}}
  %0 = tile.atomic_cas %a[%i], %v, %v : !tile.array<?xi32>[tensor<16xi32>], tensor<16xi64>
  return
}

// -----

func.func @mma_rank(%a: tensor<16xf16>, %c: tensor<16xf32>) {
  // expected-error @+1 {{operands must be 2-d or 3-d (batched), got rank 1}}
  %0 = tile.mma %a, %a, %c : tensor<16xf16>, tensor<16xf16> -> tensor<16xf32>
  return
}

// -----

func.func @mma_ranks_differ(%a: tensor<16x16xf16>, %b: tensor<2x16x16xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{a, b and acc must have one rank}}
  %0 = tile.mma %a, %b, %c : tensor<16x16xf16>, tensor<2x16x16xf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @mma_input_types(%a: tensor<16x16xf16>, %b: tensor<16x16xbf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{a and b must have one element type, got 'f16' and 'bf16'}}
  %0 = tile.mma %a, %b, %c : tensor<16x16xf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @mma_unsupported(%a: tensor<16x16xi8>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{unsupported mma: 'i8' inputs with a 'f32' accumulator}}
  %0 = tile.mma %a, %a, %c : tensor<16x16xi8>, tensor<16x16xi8> -> tensor<16x16xf32>
  return
}

// -----

func.func @mma_tiling_not_dividing(%a: tensor<64x16xf16>, %b: tensor<16x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{warp tile [48, 32] must divide the block tile [64, 64]}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [2, 2], warp_tile = [48, 32], instr = [16, 8, 16]}>} : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_tiling_warps_disagree(%a: tensor<64x16xf16>, %b: tensor<16x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{warp tile [64, 32] is not what 2 warps along dim 0 of [64, 64] compute}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [2, 2], warp_tile = [64, 32], instr = [16, 8, 16]}>} : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_tiling_instr(%a: tensor<64x16xf16>, %b: tensor<16x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{tiling instruction shape [16, 8, 8] is not the mma.sync shape [16, 8, 16] of its element types}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [2, 2], warp_tile = [32, 32], instr = [16, 8, 8]}>} : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_tiling_fma(%a: tensor<64x16xf32>, %b: tensor<16x64xf32>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{has a tiling but no tensor-core instruction}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [2, 2], warp_tile = [32, 32], instr = [16, 8, 8]}>} : tensor<64x16xf32>, tensor<16x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_tiling_warps(%a: tensor<64x16xf16>, %b: tensor<16x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{mma tiling warps must be powers of two}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [3, 1], warp_tile = [32, 64], instr = [16, 8, 16]}>} : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_batch(%a: tensor<2x16x16xf16>, %b: tensor<4x16x16xf16>, %c: tensor<2x16x16xf32>) {
  // expected-error @+1 {{batch dimensions differ: 2, 4, 2}}
  %0 = tile.mma %a, %b, %c : tensor<2x16x16xf16>, tensor<4x16x16xf16> -> tensor<2x16x16xf32>
  return
}

// -----

func.func @mma_k(%a: tensor<16x32xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{contraction dimensions differ}}
  %0 = tile.mma %a, %b, %c : tensor<16x32xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @mma_acc(%a: tensor<16x16xf16>, %b: tensor<16x32xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{accumulator 'tensor<16x16xf32>' must be 16x32}}
  %0 = tile.mma %a, %b, %c : tensor<16x16xf16>, tensor<16x32xf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @reduce_empty() {
  // expected-error @+1 {{needs at least one tile}}
  %0 = tile.reduce() axis = 0 : () -> tensor<f32> {
  ^bb0:
    tile.yield
  }
  return
}

// -----

func.func @reduce_shapes(%x: tensor<8xf32>, %y: tensor<16xi32>) {
  // expected-error @+1 {{tiles must have one shape}}
  %0:2 = tile.reduce(%x, %y) axis = 0 : (tensor<8xf32>, tensor<16xi32>) -> (tensor<f32>, tensor<i32>) {
  ^bb0(%a: f32, %b: i32, %c: f32, %d: i32):
    tile.yield %a, %b : f32, i32
  }
  return
}

// -----

func.func @reduce_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{axis 1 is out of range for a tile of rank 1}}
  %0 = tile.reduce(%x) axis = 1 : (tensor<8xf32>) -> tensor<f32> {
  ^bb0(%a: f32, %b: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_result(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result 'tensor<8xf32>' should be 'tensor<4xf32>' (the source without axis 0)}}
  %0 = tile.reduce(%x) axis = 0 : (tensor<8x4xf32>) -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_combiner_arity(%x: tensor<8xf32>) {
  // expected-error @+1 {{combiner must take 2 scalars, takes 1}}
  %0 = tile.reduce(%x) axis = 0 : (tensor<8xf32>) -> tensor<f32> {
  ^bb0(%a: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_combiner_type(%x: tensor<8xf32>) {
  // expected-error @+1 {{combiner argument 1 must be 'f32'}}
  %0 = tile.reduce(%x) axis = 0 : (tensor<8xf32>) -> tensor<f32> {
  ^bb0(%a: f32, %b: f16):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_yield_count(%x: tensor<8xf32>) {
  // expected-error @+1 {{combiner must yield 1 values}}
  %0 = tile.reduce(%x) axis = 0 : (tensor<8xf32>) -> tensor<f32> {
  ^bb0(%a: f32, %b: f32):
    tile.yield %a, %b : f32, f32
  }
  return
}

// -----

func.func @reduce_yield_type(%x: tensor<8xf32>, %c: f16) {
  // expected-error @+1 {{combiner result 0 must be 'f32'}}
  %0 = tile.reduce(%x) axis = 0 : (tensor<8xf32>) -> tensor<f32> {
  ^bb0(%a: f32, %b: f32):
    tile.yield %c : f16
  }
  return
}

// -----

func.func @scan_result(%x: tensor<8xf32>) {
  // expected-error @+1 {{results must have the sources' types}}
  %0 = tile.scan(%x) axis = 0 : (tensor<8xf32>) -> tensor<8xf16> {
  ^bb0(%a: f32, %b: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @scan_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a tile of rank 1}}
  %0 = tile.scan(%x) axis = 2 : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @scan_combiner(%x: tensor<8xf32>) {
  // expected-error @+1 {{combiner must take 2 scalars, takes 3}}
  %0 = tile.scan(%x) axis = 0 : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @yield_parent(%x: f32) {
  // expected-error @+1 {{expects parent op to be one of 'tile.reduce, tile.scan'}}
  tile.yield %x : f32
}

// -----

func.func @broadcast_rank(%x: tensor<64xf32>) {
  // expected-error @+1 {{ranks differ (use expand_dims first)}}
  %0 = tile.broadcast %x : tensor<64xf32> -> tensor<2x64xf32>
  return
}

// -----

func.func @broadcast_dim(%x: tensor<2x64xf32>) {
  // expected-error @+1 {{only size-1 dimensions broadcast}}
  %0 = tile.broadcast %x : tensor<2x64xf32> -> tensor<4x64xf32>
  return
}

// -----

func.func @broadcast_pow2(%x: tensor<1x64xf32>) {
  // expected-error @+1 {{every tile dimension must be a power of two}}
  %0 = tile.broadcast %x : tensor<1x64xf32> -> tensor<3x64xf32>
  return
}

// -----

func.func @broadcast_dtype(%x: tensor<1x64xf32>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = tile.broadcast %x : tensor<1x64xf32> -> tensor<2x64xf16>
  return
}

// -----

func.func @expand_axis(%x: tensor<64xf32>) {
  // expected-error @+1 {{axis 2 must be in [0, 1]}}
  %0 = tile.expand_dims %x, 2 : tensor<64xf32> -> tensor<64x1xf32>
  return
}

// -----

func.func @expand_shape(%x: tensor<64xf32>) {
  // expected-error @+1 {{must be the source with a 1 inserted at axis 0}}
  %0 = tile.expand_dims %x, 0 : tensor<64xf32> -> tensor<64x1xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<64xf32>) {
  // expected-error @+1 {{cannot reshape 'tensor<64xf32>' (64 elements) to 'tensor<4x8xf32>' (32 elements)}}
  %0 = tile.reshape %x : tensor<64xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @permute_perm(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{perm must be a permutation of [0, 2)}}
  %0 = tile.permute %x, [0, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @permute_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{must have the source's shape permuted}}
  %0 = tile.permute %x, [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @iota_rank() {
  // expected-error @+1 {{iota makes a 1-d tile, not 'tensor<4x4xi32>'}}
  %0 = tile.iota : tensor<4x4xi32>
  return
}

// -----

func.func @iota_pow2() {
  // expected-error @+1 {{every tile dimension must be a power of two}}
  %0 = tile.iota : tensor<6xi32>
  return
}

// -----

func.func @splat_pow2(%s: f32) {
  // expected-error @+1 {{every tile dimension must be a power of two}}
  %0 = tile.splat %s : tensor<5xf32>
  return
}

// -----

func.func @splat_dtype(%s: f32) {
  // expected-error @+1 {{failed to verify that element type matches the scalar}}
  %0 = "tile.splat"(%s) : (f32) -> tensor<4xf16>
  return
}

// -----

func.func @assert_type(%c: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be 1-bit signless integer or statically shaped tensor of 1-bit signless integer values}}
  tile.assert %c, "bad" : tensor<4xi32>
  return
}

// -----

func.func @wgmma_tiling_warps(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{warpgroup tiling needs warps [4w, 1] whose 16-row tiles divide M, got warps [4, 2] for M = 128}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [4, 2], warp_tile = [32, 64], instr = [64, 128, 16]}>} : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  return
}

// -----

func.func @wgmma_tiling_k(%a: tensor<128x48xf16>, %b: tensor<48x128xf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{warpgroup instruction [64, 128, 16] must be [64, N, 16] with N a multiple of 64 up to 256 and K 32 or a multiple of 64 (N = 128, K = 48)}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : tensor<128x48xf16>, tensor<48x128xf16> -> tensor<128x128xf32>
  return
}

// -----

func.func @wgmma_tiling_types(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>, %c: tensor<128x128xf16>) {
  // expected-error @+1 {{warpgroup tiling needs f16/bf16/fp8/tf32 inputs and an f32 accumulator, or int8 inputs and an i32 one}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf16>
  return
}

// -----

// f32 inputs take a warpgroup tiling only as tf32.
func.func @wgmma_tiling_f32_without_tf32(%a: tensor<128x32xf32>, %b: tensor<32x128xf32>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{has a tiling but no tensor-core instruction}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 8]}>} : tensor<128x32xf32>, tensor<32x128xf32> -> tensor<128x128xf32>
  return
}

// -----

// tf32: 8 of K (32 bytes) per instruction.
func.func @wgmma_tiling_tf32_k_step(%a: tensor<128x32xf32>, %b: tensor<32x128xf32>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{warpgroup instruction [64, 128, 16] must be [64, N, 8] with N a multiple of 64 up to 256 and K 16 or a multiple of 32}}
  %0 = tile.mma %a, %b, %c {allow_tf32, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : tensor<128x32xf32>, tensor<32x128xf32> -> tensor<128x128xf32>
  return
}

// -----

func.func @wgmma_tiling_warp_tile(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>, %c: tensor<128x128xf32>) {
  // expected-error @+1 {{warp tile [32, 128] is not what 8 warps along M of [128, 128] compute}}
  %0 = tile.mma %a, %b, %c {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [32, 128], instr = [64, 128, 16]}>} : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  return
}

// -----

func.func @load_release(%a: !tile.array<?xf32>) {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{memory order release is not valid for this access}}
  %t = tile.load %a[%c0] {memory_order = #tile.memory_order<release>, memory_scope = #tile.memory_scope<device>} : !tile.array<?xf32> -> tensor<16xf32>
  return
}

// -----

func.func @store_without_scope(%a: !tile.array<?xf32>, %t: tensor<16xf32>) {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{memory scope none must name block, device or sys for a non-weak order}}
  tile.store %a[%c0], %t {memory_order = #tile.memory_order<relaxed>} : !tile.array<?xf32>, tensor<16xf32>
  return
}

// -----

func.func @weak_atomic(%a: !tile.array<?xi32>, %i: tensor<16xi32>) {
  // expected-error @+1 {{memory order weak is not valid for this access}}
  %o = tile.atomic_rmw add %a[%i], %i {memory_order = #tile.memory_order<weak>, memory_scope = #tile.memory_scope<none>} : !tile.array<?xi32>[tensor<16xi32>], tensor<16xi32>
  return
}

// -----

func.func @weak_with_scope(%a: !tile.array<?xf32>) {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{memory scope block needs a non-weak memory order}}
  %t = tile.load %a[%c0] {memory_scope = #tile.memory_scope<block>} : !tile.array<?xf32> -> tensor<16xf32>
  return
}

// -----

func.func @slice_static(%a: !tile.array<?x?xf32>, %s: i32) {
  // expected-error @+1 {{slice extent 0 must be the array's, and dynamic on the axis}}
  %v = tile.array_slice %a[0] %s, %s : !tile.array<?x?xf32> -> !tile.array<4x?xf32>
  return
}

// -----

func.func @slice_align(%a: !tile.array<?xf32, align = 4>, %s: i32) {
  // expected-error @+1 {{view alignment 16 is not implied by the array's 4}}
  %v = tile.array_slice %a[0] %s, %s : !tile.array<?xf32, align = 4> -> !tile.array<?xf32, align = 16>
  return
}

// -----

func.func @raw_rank(%a: !tile.array<?x?xf32>) {
  // expected-error @+1 {{a raw view is !tile.array<?xT, strides = [1]>}}
  %v = tile.raw_view %a : !tile.array<?x?xf32> -> !tile.array<?x?xf32>
  return
}

// -----

func.func @select_empty(%i: i32) {
  // expected-error @+1 {{selects from a list of at least one array}}
  %v = tile.array_select %i, : i32, !tile.array<?xf32>
  return
}

// -----

func.func @select_mixed(%i: i32, %a: !tile.array<?xf32>, %b: !tile.array<?xf16>) {
  // expected-error @+1 {{array #1 has type '!tile.array<?xf16>', not the result's '!tile.array<?xf32>'}}
  %v = "tile.array_select"(%i, %a, %b) : (i32, !tile.array<?xf32>, !tile.array<?xf16>) -> !tile.array<?xf32>
  return
}

// -----

func.func @select_index(%i: f32, %a: !tile.array<?xf32>) {
  // expected-error @+1 {{operand #0 must be signless integer}}
  %v = "tile.array_select"(%i, %a) : (f32, !tile.array<?xf32>) -> !tile.array<?xf32>
  return
}
