// tile-stage-stores with tma-stores (TileStageStores.cpp): a matmul's f16
// result stored into an array TMA can describe leaves by TMA bulk copies:
// each warpgroup writes its 64 rows into an unpadded 128-byte-swizzled
// buffer (on the dead rings' bytes, as the staging buffer would be) and one
// of its threads copies the four 64x64 boxes out; the kernel waits for the
// copies at its end (tilegpu.bulk_wait), only until they have read the
// buffer ({read}) as the kernel never reads C; a kernel that reads the
// array it stores waits for the writes. The tensor map is a new kernel
// argument. An array TMA cannot describe keeps the staged 16-byte stores.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-stage-stores=tma-stores=true --tile-allocate-shared | FileCheck %s
// Lowered: per warpgroup, wait until its previous copy read the buffer,
// write, fence for the async proxy, then four bulk tensor stores and a
// commit; the end waits for them.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-stage-stores=tma-stores=true --tile-allocate-shared --convert-tile-to-gpu | FileCheck %s --check-prefix=GPU
// convert-tile-to-gpu's prefetch-tensor-maps (off by default): thread 0
// prefetches each tensor-map parameter first, from the parameter space.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-stage-stores=tma-stores=true --tile-allocate-shared --convert-tile-to-gpu=prefetch-tensor-maps=true | FileCheck %s --check-prefix=PREFETCH

// PREFETCH-LABEL: gpu.func @matmul(
// PREFETCH-SAME: %[[A:[^:]*]]: !llvm.ptr, %[[B:[^:]*]]: !llvm.ptr, %[[C:[^:]*]]: !llvm.ptr)
// PREFETCH: scf.if
// PREFETCH-NEXT: nvvm.prefetch tensormap in_param_space, %[[A]] : !llvm.ptr
// PREFETCH-NEXT: nvvm.prefetch tensormap in_param_space, %[[B]] : !llvm.ptr
// PREFETCH-NEXT: nvvm.prefetch tensormap in_param_space, %[[C]] : !llvm.ptr

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[C:[^:]*]]: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok}
// CHECK-SAME: %[[MAP:[^:]*]]: !tilegpu.tensor_map<64x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 2>}
// CHECK: scf.for
// CHECK: %[[H:.*]] = arith.truncf
// CHECK: %[[BUF:.*]] = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x256xf16, slots = 1, swizzle = 128>
// CHECK: %[[N0:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[M0:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: tilegpu.bulk_store %[[H]] through %[[BUF]] into %[[MAP]][%[[N0]], %[[M0]]] {inner_axis = 1 : i64, outer_dim = 1 : i64}
// CHECK-NOT: tile.store
// CHECK: tilegpu.bulk_wait %[[BUF]] {read}
// CHECK: return

// CHECK-LABEL: func.func @reads_back(
// CHECK: tilegpu.bulk_store
// CHECK: tilegpu.bulk_wait %{{[^ ]*}} :
// CHECK: return

// CHECK-LABEL: func.func @not_tma(
// CHECK: tilegpu.stage_layout
// CHECK: tile.store
// CHECK-NOT: bulk_

// GPU-LABEL: gpu.func @matmul(
// GPU: nvvm.cp.async.bulk.wait_group 0 {read}
// GPU: nvvm.fence.proxy
// GPU-COUNT-4: nvvm.cp.async.bulk.tensor.global.shared.cta
// GPU: nvvm.cp.async.bulk.commit.group
// GPU: nvvm.cp.async.bulk.wait_group 0 {read}
// GPU-NEXT: gpu.barrier
// GPU-NEXT: gpu.return

// GPU-LABEL: gpu.func @reads_back(
// GPU: nvvm.cp.async.bulk.commit.group
// GPU: nvvm.cp.async.bulk.wait_group 0{{$}}
// GPU-NEXT: gpu.barrier
// GPU-NEXT: gpu.return
func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
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

func.func @reads_back(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a = tile.load %C[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
  tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  return
}

func.func @not_tma(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
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
