// RUN: tile-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{a shared buffer holds 2-d blocks of static shape}}
func.func @rank(%a: !tilegpu.shared<128xf16, slots = 2>) { return }

// -----

// expected-error @+1 {{swizzle must be 64 or 128 bytes, not 32}}
func.func @swizzle(%a: !tilegpu.shared<128x64xf16, slots = 2, swizzle = 32>) { return }

// -----

// expected-error @+1 {{rows of 32 bytes do not fill 128-byte swizzled panels}}
func.func @panels(%a: !tilegpu.shared<128x16xf16, slots = 2, swizzle = 128>) { return }

// -----

// expected-error @+1 {{row_stride 60 is shorter than a row of 64}}
func.func @stride(%a: !tilegpu.shared<128x64xf16, slots = 2, row_stride = 60>) { return }

// -----

// expected-error @+1 {{a swizzled buffer has no row stride}}
func.func @both(%a: !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128, row_stride = 72>) { return }

// -----

// expected-error @+1 {{a shared buffer has at least one slot}}
func.func @slots(%a: !tilegpu.shared<128x64xf16, slots = 0>) { return }

// -----

// expected-error @+1 {{unknown key 'stages'}}
func.func @key(%a: !tilegpu.shared<128x64xf16, stages = 2>) { return }

// -----

// expected-error @+1 {{at least one mbarrier}}
func.func @bars(%a: !tilegpu.mbarriers<0>) { return }

// -----

// expected-error @+1 {{TMA box extents are 1 to 256 elements}}
func.func @box(%a: !tilegpu.tensor_map<512x64xf16>) { return }

// -----

// expected-error @+1 {{the box's inner extent (256 bytes) exceeds the 128-byte swizzle span}}
func.func @span(%a: !tilegpu.tensor_map<64x128xf16, swizzle = 128>) { return }

// -----

// expected-error @+1 {{the box's inner extent is 6 bytes, not a multiple of 16}}
func.func @inner(%a: !tilegpu.tensor_map<64x3xf16>) { return }

// -----

func.func @offset() {
  // expected-error @+1 {{offset 512 is not a multiple of the buffer's alignment (1024 bytes)}}
  %r = tilegpu.alloc_shared {offset = 512} : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
  return
}

// -----

// A dense block is a TMA copy's source or destination: 128-byte aligned.
func.func @dense_offset() {
  // expected-error @+1 {{offset 32 is not a multiple of the buffer's alignment (128 bytes)}}
  %r = tilegpu.alloc_shared {offset = 32} : !tilegpu.shared<1x64xf32, slots = 3>
  return
}

// -----

func.func @bar_offset() {
  // expected-error @+1 {{offset 4 is not a multiple of 8 bytes}}
  %r = tilegpu.alloc_mbarriers {offset = 4} : !tilegpu.mbarriers<2>
  return
}

// -----

func.func @slot(%r: !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>, %i: i32) {
  // expected-error @+1 {{result must be the ring's block with one slot}}
  %s = tilegpu.slot %r[%i] : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128>
  return
}

// -----

func.func @copy_ring(%x: !tile.array<?x?xf16>, %i: i32, %r: !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>) {
  // expected-error @+1 {{the destination must be one slot (use tilegpu.slot), not 4}}
  %t = tilegpu.async_copy %x[%i, %i] into %r : !tile.array<?x?xf16>, tensor<128x64xf16> -> !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
  return
}

// -----

func.func @copy_shape(%x: !tile.array<?x?xf16>, %i: i32, %r: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>) {
  // expected-error @+1 {{does not match the buffer's block}}
  %t = tilegpu.async_copy %x[%i, %i] into %r : !tile.array<?x?xf16>, tensor<64x128xf16> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  return
}

// -----

func.func @copy_width(%x: !tile.array<?x?xf32>, %i: i32, %r: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>) {
  // expected-error @+1 {{the buffer's elements ('f16') are not as wide as the array's ('f32')}}
  %t = tilegpu.async_copy %x[%i, %i] into %r : !tile.array<?x?xf32>, tensor<128x64xf32> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  return
}

// -----

func.func @copy_block(%x: !tile.array<?x?xbf16>, %i: i32, %r: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>) {
  // expected-error @+1 {{the block's element type must be the array's ('bf16')}}
  %t = tilegpu.async_copy %x[%i, %i] into %r : !tile.array<?x?xbf16>, tensor<128x64xf16> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  return
}

// -----

func.func @copy_rank(%x: !tile.array<?x?x?xf16>, %i: i32, %r: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>) {
  // expected-error @+1 {{block dimensions before the last two must be 1}}
  %t = tilegpu.async_copy %x[%i, %i, %i] into %r : !tile.array<?x?x?xf16>, tensor<2x128x64xf16> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  return
}

// -----

func.func @mma_shapes(%a: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>,
                      %b: !tilegpu.shared<32x256xf16, slots = 1, swizzle = 128>,
                      %acc: tensor<128x256xf32>) {
  // expected-error @+1 {{shapes do not chain}}
  %r = tilegpu.mma %a, %b, %acc : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<32x256xf16, slots = 1, swizzle = 128> -> tensor<128x256xf32>
  return
}

// -----

func.func @mma_slots(%a: tensor<128x64xf16>,
                     %b: !tilegpu.shared<64x256xf16, slots = 2, swizzle = 128>,
                     %acc: tensor<128x256xf32>) {
  // expected-error @+1 {{B must be one slot}}
  %r = tilegpu.mma %a, %b, %acc : tensor<128x64xf16>, !tilegpu.shared<64x256xf16, slots = 2, swizzle = 128> -> tensor<128x256xf32>
  return
}

// -----

func.func @mma_in_flight(%a: tensor<128x64xf16>,
                         %b: !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128>,
                         %acc: tensor<128x256xf32>) {
  // expected-error @+1 {{in_flight needs a warpgroup (wgmma) tiling}}
  %r = tilegpu.mma %a, %b, %acc {in_flight} : tensor<128x64xf16>, !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128> -> tensor<128x256xf32>
  return
}

// -----

func.func @mma_types(%a: tensor<128x64xbf16>,
                     %b: !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128>,
                     %acc: tensor<128x256xf32>) {
  // expected-error @+1 {{A and B element types differ}}
  %r = tilegpu.mma %a, %b, %acc : tensor<128x64xbf16>, !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128> -> tensor<128x256xf32>
  return
}

// -----

func.func @wait(%acc: tensor<128x256xf32>) {
  // expected-error @+1 {{results must have the accumulators' types}}
  %r = tilegpu.wait_mma %acc pending = 0 : tensor<128x256xf32> -> tensor<128x128xf32>
  return
}

// -----

func.func @tma_coords(%map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>, %i: i32,
                      %d: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>,
                      %bars: !tilegpu.mbarriers<2>) {
  // expected-error @+1 {{needs 2 coordinates}}
  tilegpu.tma_load %map[%i] into %d, %bars[%i] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<2>
  return
}

// -----

func.func @tma_swizzle(%map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>, %i: i32,
                       %d: !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72>,
                       %bars: !tilegpu.mbarriers<2>) {
  // expected-error @+1 {{the buffer's block must be the map's box with its swizzle, unpadded}}
  tilegpu.tma_load %map[%i, %i] into %d, %bars[%i] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72>, !tilegpu.mbarriers<2>
  return
}

// -----

// Panels as wide as the box, but the box is not one 128-byte panel.
func.func @tma_panels(%map: !tilegpu.tensor_map<128x32xf16, swizzle = 128>, %i: i32,
                      %d: !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>,
                      %bars: !tilegpu.mbarriers<2>) {
  // expected-error @+1 {{the buffer's block must be the map's box with its swizzle, unpadded}}
  tilegpu.tma_load %map[%i, %i] into %d, %bars[%i] : !tilegpu.tensor_map<128x32xf16, swizzle = 128>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<2>
  return
}

// -----

func.func @tma_store(%map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>, %i: i32,
                     %s: !tilegpu.shared<128x64xbf16, slots = 1, swizzle = 128>) {
  // expected-error @+1 {{element types of the map and the buffer differ}}
  tilegpu.tma_store %s into %map[%i, %i] : !tilegpu.shared<128x64xbf16, slots = 1, swizzle = 128>, !tilegpu.tensor_map<128x64xf16, swizzle = 128>
  return
}

// -----

// The lowering reads the accumulator's fragments off an mma layout
// (tile-map-threads run again on pipelined IR gave it a blocked one, and
// convert-tile-to-gpu crashed).
#blocked = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]}>
func.func @mma_acc_not_mma_layout(%a: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>,
                                  %b: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>,
                                  %acc: tensor<128x128xf32, #blocked>) {
  // expected-error @+1 {{needs its accumulator in an mma layout}}
  %r = tilegpu.mma %a, %b, %acc {b_transposed} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #blocked>
  return
}

// -----

// tilegpu.read_shared reads a one-slot row-major buffer of its result's
// shape and element type.
func.func @read_shared_slots(%a: !tilegpu.shared<1x64xf32, slots = 3>) {
  // expected-error @+1 {{buffer must be one slot (use tilegpu.slot), not 3}}
  %r = tilegpu.read_shared %a : !tilegpu.shared<1x64xf32, slots = 3> -> tensor<1x64xf32>
  return
}

// -----

func.func @read_shared_shape(%a: !tilegpu.shared<1x64xf32, slots = 1>) {
  // expected-error @+1 {{needs a 2-d result and a row-major buffer of its shape and element type}}
  %r = tilegpu.read_shared %a : !tilegpu.shared<1x64xf32, slots = 1> -> tensor<1x32xf32>
  return
}
