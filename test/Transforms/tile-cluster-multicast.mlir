// tile-cluster-multicast (TileClusterMulticast.cpp) on a warp-specialized
// TMA ring of a kernel asking for clusters (tile.num_ctas = 2). Before the
// empty barriers' inits the kernel reads its cluster's size and its rank; the empty barriers count the
// other CTA's 8 consumer warps when clustered; the barriers are made
// visible to the cluster before the warps split. B's coordinates do not
// depend on tile.bid 0, so B is shared whenever the kernel runs clustered;
// A's are compared with the other CTA's (its block index xor 1, the slice
// cloned where the original is computed: here in the producer's loop). A
// consumer warp's first lane also releases the slot in the other CTA; at
// the end a cluster barrier, then the empty barriers' invalidation. The
// empty barriers, which now outlive the ring, are allocated before it.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize=rings=attention --tile-cluster-multicast | FileCheck %s
// Lowered: a copy shared at run time is multicast by its owner, one this
// CTA alone reads is the plain copy; mapa and a remote arrive with the
// default .release.cta (.release.cluster fenced the GPU before each).
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize=rings=attention --tile-cluster-multicast --tile-allocate-shared --convert-tile-to-gpu | FileCheck %s --check-prefix=GPU
// The store after the loop is staged in the dead ring's bytes past the
// empty barriers, which stay live until the CTAs part.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize=rings=attention --tile-cluster-multicast --tile-stage-stores --tile-allocate-shared | FileCheck %s --check-prefix=STAGED

// CHECK-LABEL: func.func @clustered(
// CHECK-SAME: tilegpu.cluster_size = 2 : i64
// CHECK: %[[EMPTY:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// CHECK-NEXT: tilegpu.alloc_shared
// CHECK: %[[FULL:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// CHECK: %[[CTAS:.*]] = nvvm.read.ptx.sreg.cluster.nctarank : i32
// CHECK: %[[CLUSTERED:.*]] = arith.cmpi eq, %[[CTAS]], %{{.*}} : i32
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: %[[PEER_RANK:.*]] = arith.xori %[[RANK]], %{{.*}} : i32
// CHECK: %[[BID:.*]] = tile.bid 0
// CHECK: %[[PEER_BID:.*]] = arith.xori %[[BID]], %{{.*}} : i32
// CHECK: %[[PEERS:.*]] = arith.select %[[CLUSTERED]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[COUNT:.*]] = arith.addi %{{.*}}, %[[PEERS]] : i32
// CHECK: tilegpu.mbarrier_init %[[EMPTY]][%{{.*}}], %[[COUNT]]
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK: scf.if
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: scf.for
// CHECK: tilegpu.mbarrier_wait %[[EMPTY]]
// CHECK: %[[PEER_ROW:.*]] = arith.muli %[[PEER_BID]], %{{.*}} : i32
// CHECK: %[[SAME_A:.*]] = arith.cmpi eq, %{{.*}}, %[[PEER_ROW]] : i32
// CHECK: %[[SHARE_A:.*]] = arith.andi %[[CLUSTERED]], %[[SAME_A]] : i1
// CHECK: %[[MASK_A:.*]] = arith.select %[[SHARE_A]], %{{.*}}, %{{.*}} : i16
// CHECK: tilegpu.tma_load %{{.*}} into %{{.*}}, %[[FULL]][%{{.*}}] multicast %[[MASK_A]], rank %[[RANK]] {cluster_size = 2 : i64}
// CHECK: %[[MASK_B:.*]] = arith.select %[[CLUSTERED]], %{{.*}}, %{{.*}} : i16
// CHECK: tilegpu.tma_load %{{.*}} into %{{.*}}, %[[FULL]][%{{.*}}] multicast %[[MASK_B]], rank %[[RANK]] {cluster_size = 2 : i64}
// CHECK: } else {
// CHECK: nvvm.setmaxregister increase 232
// CHECK: tilegpu.mbarrier_arrive %[[EMPTY]][%[[SLOT:.*]]] :
// CHECK: %[[LANE:.*]] = nvvm.read.ptx.sreg.laneid : i32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}} : i32
// CHECK: %[[REMOTE:.*]] = arith.andi %[[CLUSTERED]], %[[FIRST]] : i1
// CHECK: scf.if %[[REMOTE]] {
// CHECK-NEXT: tilegpu.mbarrier_arrive %[[EMPTY]][%[[SLOT]]] cta %[[PEER_RANK]] :
// CHECK: tile.store
// CHECK: } {tilegpu.warp_specialized
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-COUNT-4: tilegpu.mbarrier_inval %[[EMPTY]]
// CHECK-NEXT: return

// GPU-LABEL: gpu.func @clustered(
// GPU: nvvm.read.ptx.sreg.cluster.nctarank
// GPU: nvvm.cluster.arrive
// GPU: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask =
// GPU-NEXT: }
// GPU-NEXT: } else {
// GPU-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}] : !llvm.ptr<7>, !llvm.ptr
// GPU: nvvm.mapa {{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// GPU-NEXT: nvvm.mbarrier.arrive {{.*}} : !llvm.ptr<7>
// STAGED-LABEL: func.func @clustered(
// STAGED-SAME: tilegpu.shared_bytes = 197632 : i64
// STAGED: %[[EMPTY:.*]] = tilegpu.alloc_mbarriers {offset = 0 : i64} : !tilegpu.mbarriers<4>
// STAGED: tilegpu.alloc_shared {offset = 32 : i64} : !tilegpu.shared<128x256xf16, slots = 1, row_stride = 264>
// STAGED-NEXT: tilegpu.stage_layout
func.func @clustered(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %nk: i32) attributes {tile.kernel, tile.num_ctas = 2 : i32} {
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

// A trip count that depends on the block: the two CTAs could copy
// different numbers of blocks, so the kernel runs without clusters.
// CHECK-LABEL: func.func @uneven(
// CHECK-NOT: tilegpu.cluster_size
// CHECK-NOT: multicast
// CHECK-NOT: nvvm.cluster
// CHECK: return
func.func @uneven(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) attributes {tile.kernel, tile.num_ctas = 2 : i32} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %trips = arith.addi %nk, %pm : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %trips step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
  tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  return
}
