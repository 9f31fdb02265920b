// tile-stage-stores (TileStageStores.cpp): a matmul's f16 result leaves the
// mma accumulator layout (two elements per thread and row) for the blocked
// layout of loads (16-byte runs, a warp's 32 along one row) through a
// padded-row buffer of its own, which tile-allocate-shared puts on the
// bytes of the rings that are dead after the loop (offset 0): the kernel's
// shared memory does not grow. A kernel with no dead buffer to take keeps
// the store as it is.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-stage-stores --tile-allocate-shared | FileCheck %s
// The whole lowering: fragments into the buffer, then 16-byte stores.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-stage-stores --tile-allocate-shared --convert-tile-to-gpu | FileCheck %s --check-prefix=GPU

// CHECK-DAG: #[[$BLOCKED:blocked[0-9]*]] = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]}>
// CHECK-DAG: #[[$MMA:mma[0-9]*]] = #tile.mma<{version = 2, warpsPerCTA = [8, 1]}>
// CHECK-LABEL: func.func @matmul(
// CHECK: tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
// CHECK: tilegpu.alloc_shared {offset = 65536 : i64} : !tilegpu.shared<64x256xf16, slots = 4, swizzle = 128>
// CHECK: scf.for
// CHECK: tilegpu.mbarrier_inval
// CHECK: %[[H:.*]] = arith.truncf
// CHECK: %[[STAGE:.*]] = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x256xf16, slots = 1, row_stride = 264>
// CHECK: %[[V:.*]] = tilegpu.stage_layout %[[H]] through %[[STAGE]] : tensor<128x256xf16, #[[$MMA]]>, !tilegpu.shared<128x256xf16, slots = 1, row_stride = 264> -> tensor<128x256xf16, #[[$BLOCKED]]>
// CHECK: tile.store %{{.*}}[%{{.*}}, %{{.*}}], %[[V]] : {{.*}}, tensor<128x256xf16, #[[$BLOCKED]]>

// CHECK-LABEL: func.func @no_loop(
// CHECK-NOT: stage_layout
// CHECK: tile.store

// GPU-LABEL: gpu.func @matmul(
// GPU: gpu.barrier
// GPU: llvm.store {{.*}} : vector<2xf16>, !llvm.ptr<3>
// GPU: gpu.barrier
// GPU: llvm.load {{.*}} -> vector<8xf16>
// GPU: gpu.barrier
// GPU: vector.bitcast {{.*}} : vector<8xf16> to vector<4xi32>
// GPU: tile.ptx.st_global {{.*}} : i32, i32, i32, i32

func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
  tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  return
}

// One mma, no loop: no ring, nothing dead to stage through.
func.func @no_loop(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                   %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                   %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %a = tile.load %A[%pm, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
  %b = tile.load %B[%c0, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x256xf16>
  %r = tile.mma %a, %b, %zero : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
  %h = arith.truncf %r : tensor<128x256xf32> to tensor<128x256xf16>
  tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  return
}

// A batch of one (bench's bmm): 3-d loads reshaped for the mma, which
// streams them through TMA boxes of 1 x rows x 64; the (1, 128, 256) store
// of the reshaped accumulator is staged as the 2-d f16 tile, then reshaped
// in registers.
// CHECK-LABEL: func.func @bmm(
// CHECK: tilegpu.tensor_map<1x128x64xf16, swizzle = 128>
// CHECK: tilegpu.tma_load
// CHECK: %[[BUF:.*]] = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x256xf16, slots = 1, row_stride = 264>
// CHECK: %[[H2:.*]] = arith.truncf %{{.*}} : tensor<128x256xf32, #[[$MMA]]> to tensor<128x256xf16, #[[$MMA]]>
// CHECK: %[[S2:.*]] = tilegpu.stage_layout %[[H2]] through %[[BUF]]
// CHECK: %[[S3:.*]] = tile.reshape %[[S2]] : tensor<128x256xf16, #[[$BLOCKED]]> -> tensor<1x128x256xf16, #{{.*}}>
// CHECK: tile.store %{{.*}}, %[[S3]]
func.func @bmm(%A: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
               %B: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
               %C: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>,
               %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %z = tile.bid 2
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a3 = tile.load %A[%z, %pm, %k] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x64xf16>
    %b3 = tile.load %B[%z, %k, %pn] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x256xf16>
    %a = tile.reshape %a3 : tensor<1x128x64xf16> -> tensor<128x64xf16>
    %b = tile.reshape %b3 : tensor<1x64x256xf16> -> tensor<64x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  %acc3 = tile.reshape %acc : tensor<128x256xf32> -> tensor<1x128x256xf32>
  %h = arith.truncf %acc3 : tensor<1x128x256xf32> to tensor<1x128x256xf16>
  tile.store %C[%z, %pm, %pn], %h : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x256xf16>
  return
}
