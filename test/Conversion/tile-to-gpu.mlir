// RUN: tile-opt %s --split-input-file --convert-tile-to-gpu | FileCheck %s

// Kernel ABI (docs/internals.md section 3): per array a global pointer, i64
// extents, i64 strides; then the scalars. A tile becomes the vector of the
// elements this thread owns; contiguous f32 runs load as ld.global.v4 behind
// a bounds predicate.
#blocked = #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: module attributes {gpu.container_module
  // CHECK: gpu.module @tile_kernels attributes {tile.num_warps = 4 : i32, tile.shared_mem = 0 : i32}
  // CHECK: llvm.mlir.global external @tile_shared() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
  // CHECK: gpu.func @vadd(%[[X:.*]]: !llvm.ptr<1>, %[[XN:.*]]: i64, %[[XS:.*]]: i64, %[[O:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
  // CHECK: nvvm.read.ptx.sreg.ctaid.x
  // CHECK: nvvm.read.ptx.sreg.tid.x
  // CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[XN]] : i64
  // CHECK: %[[P:.*]] = llvm.getelementptr %[[X]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
  // CHECK: tile.ptx.ld_global %[[P]], %[[IN]] {pad = array<i64: 0, 0, 0, 0>} : i32, i32, i32, i32
  // CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
  // CHECK: tile.ptx.st_global %{{.*}} : i32, i32, i32, i32
  // CHECK: gpu.return
  func.func @vadd(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                  %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                  %s: f32) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<1024xf32, #blocked>
    %b = tile.splat %s : tensor<1024xf32, #blocked>
    %c = arith.mulf %a, %b : tensor<1024xf32, #blocked>
    tile.store %o[%i], %c : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<1024xf32, #blocked>
    return
  }
}

// -----

// Unknown alignment: one element per access, each with its own predicate.
#blocked = #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @unaligned
  // CHECK: tile.ptx.ld_global %{{.*}}, %{{.*}} {pad = array<i64: 1065353216>} : i32
  // CHECK-NOT: tile.ptx.ld_global {{.*}} : i32, i32
  func.func @unaligned(%x: !tile.array<?xf32>, %o: !tile.array<?xf32>) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] {padding = 1.0 : f32} : !tile.array<?xf32> -> tensor<512xf32, #blocked>
    tile.store %o[%i], %a : !tile.array<?xf32>, tensor<512xf32, #blocked>
    return
  }
}

// -----

// Reduction along lanes: in-thread combines, then butterfly shuffles; the
// warp-spanning part goes through shared memory between barriers.
#blocked = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
#slice = #tile.slice<{dim = 1, parent = #blocked}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.module @tile_kernels attributes {tile.num_warps = 4 : i32, tile.shared_mem = 16 : i32}
  // CHECK-LABEL: gpu.func @row_sum
  // CHECK-COUNT-5: gpu.shuffle  xor
  // CHECK: gpu.barrier
  // CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
  // CHECK: gpu.barrier
  // CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
  func.func @row_sum(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                     %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>) attributes {tile.kernel} {
    %i = tile.bid 0
    %c0 = arith.constant 0 : i32
    %a = tile.load %x[%i, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<1x1024xf32, #blocked>
    %s = tile.reduce(%a) axis = 1 : (tensor<1x1024xf32, #blocked>) -> tensor<1xf32, #slice> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.addf %p, %q : f32
      tile.yield %r : f32
    }
    tile.store %o[%i], %s : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<1xf32, #slice>
    return
  }
}

// -----

// expand_dims + broadcast of a slice-layout value move no data.
#blocked = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#slice = #tile.slice<{dim = 1, parent = #blocked}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @bcast
  // CHECK-NOT: gpu.barrier
  // CHECK: vector.shuffle
  // CHECK-NOT: gpu.barrier
  // CHECK: gpu.return
  func.func @bcast(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                   %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %a = tile.load %x[%c0] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<4xf32, #slice>
    %e = tile.expand_dims %a, 1 : tensor<4xf32, #slice> -> tensor<4x1xf32, #blocked>
    %b = tile.broadcast %e : tensor<4x1xf32, #blocked> -> tensor<4x256xf32, #blocked>
    tile.store %o[%c0, %c0], %b : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<4x256xf32, #blocked>
    return
  }
}

// -----

// A layout conversion goes through shared memory.
#blocked = #tile.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
#blocked1 = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.module @tile_kernels attributes {tile.num_warps = 4 : i32, tile.shared_mem = 8192 : i32}
  // CHECK-LABEL: gpu.func @convert
  // CHECK: gpu.barrier
  // CHECK: llvm.store {{.*}} : {{.*}}, !llvm.ptr<3>
  // CHECK: gpu.barrier
  // CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xf32>
  func.func @convert(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %a = tile.load %x[%c0, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf32, #blocked>
    %b = tile.convert_layout %a : tensor<64x32xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    tile.store %x[%c0, %c0], %b : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x32xf32, #blocked1>
    return
  }
}

// -----

// The scratch of an op after a tilegpu.scratch_base starts at its offset
// (tile-allocate-shared: past the buffers still live there), not at the
// kernel's shared_bytes; the marker is gone after the conversion, and the
// kernel's shared memory ends where its furthest use does.
#blocked = #tile.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
#blocked1 = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.module @tile_kernels attributes {tile.num_warps = 4 : i32, tile.shared_mem = 65536 : i32}
  // CHECK-LABEL: gpu.func @convert_at_scratch_base
  // CHECK-NOT: tilegpu.scratch_base
  // CHECK: %[[WINDOW:.*]] = llvm.mlir.addressof @tile_shared
  // CHECK: llvm.getelementptr %[[WINDOW]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  // CHECK: gpu.barrier
  // CHECK-NOT: tilegpu.scratch_base
  func.func @convert_at_scratch_base(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel, tilegpu.shared_bytes = 65536 : i64} {
    %c0 = arith.constant 0 : i32
    %a = tile.load %x[%c0, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf32, #blocked>
    tilegpu.scratch_base 1024
    %b = tile.convert_layout %a : tensor<64x32xf32, #blocked> -> tensor<64x32xf32, #blocked1>
    tile.store %x[%c0, %c0], %b : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x32xf32, #blocked1>
    return
  }
}

// -----

// f16 mma: operands staged in shared memory, ldmatrix fragments, mma.sync
// m16n8k16 into the accumulator fragments.
#blocked = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #tile.mma<{version = 2, warpsPerCTA = [2, 2]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @mma
  // CHECK: gpu.barrier
  // CHECK: gpu.barrier
  // CHECK: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
  // CHECK: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
  // CHECK: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
  func.func @mma(%x: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                 %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %a = tile.load %x[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf16, #blocked>
    %b = tile.load %x[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x64xf16, #blocked>
    %z = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %c = tile.mma %a, %b, %z : tensor<64x32xf16, #blocked>, tensor<32x64xf16, #blocked> -> tensor<64x64xf32, #mma>
    tile.store %o[%c0, %c0], %c : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x64xf32, #mma>
    return
  }
}
