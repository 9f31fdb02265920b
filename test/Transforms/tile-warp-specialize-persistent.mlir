// tile-warp-specialize (TileWarpSpecialize.cpp) on a TMA ring inside a
// persistent loop (an scf.while walking output tiles): the ring's buffers,
// full barriers and their inits move before the while, the empty barriers
// join them, and the split goes around the while. Both roles walk the
// tiles with one more carried value, the iterations of the tiles before:
// the producer's copies, the consumers' waits and the slots their wgmmas
// read count from it, so the producer fills the next tile's slots while
// the consumers store this one. After the last wgmma of a tile completes
// its slot is released; the barriers are invalidated after the last tile.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma="mma-pipelining=tma num-stages=3" --tile-warp-specialize=rings=attention | FileCheck %s
// persistent=false leaves it alone.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma="mma-pipelining=tma num-stages=3" --tile-warp-specialize="rings=all persistent=false" | FileCheck %s --check-prefix=OFF
// tile-stage-stores stages the store in the consumers' while through a
// buffer allocated before it, beside the ring (3 slots of 48 KB and the
// 66 KB buffer fit in 227 KB; 4 slots would not).
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma="mma-pipelining=tma num-stages=3" --tile-warp-specialize --tile-stage-stores --tile-allocate-shared | FileCheck %s --check-prefix=STAGED
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma="mma-pipelining=tma num-stages=4" --tile-warp-specialize --tile-stage-stores | FileCheck %s --check-prefix=NOROOM
// Without a producer the loop's store is left as it is, room or not (a
// ring without one runs a slot ahead: the H200 measured the staged 3-slot
// kernel slower than the unstaged 4-slot one).
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma="mma-pipelining=tma num-stages=3" --tile-warp-specialize="persistent=false" --tile-stage-stores | FileCheck %s --check-prefix=NOPRODUCER
// epilogue-room (the compiler's default with both passes on): the
// automatic ring depth leaves room for the staging buffer, 3 slots, not
// the 4 it takes otherwise.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma="mma-pipelining=tma epilogue-room=true" | FileCheck %s --check-prefix=ROOM
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma="mma-pipelining=tma" | FileCheck %s --check-prefix=DEPTH4
// Lowered, the consumers' block barriers are named barriers of 256 threads.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma="mma-pipelining=tma num-stages=3" --tile-warp-specialize --tile-stage-stores --tile-allocate-shared --convert-tile-to-gpu | FileCheck %s --check-prefix=GPU

// CHECK-LABEL: func.func @persistent(
// CHECK: %[[A:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 3
// CHECK: %[[FULL:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<3>
// CHECK-COUNT-3: tilegpu.mbarrier_init %[[FULL]]
// CHECK: %[[EMPTY:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<3>
// CHECK-COUNT-3: tilegpu.mbarrier_init %[[EMPTY]]
// CHECK-NOT: tilegpu.tma_load
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK: scf.while (%[[T:.*]] = %{{.*}}, %[[DONE:.*]] = %{{.*}}) : (i32, i32) -> (i32, i32)
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %{{.*}} : i32, i32
// CHECK: ^bb0(%[[PT:.*]]: i32, %[[PDONE:.*]]: i32):
// CHECK: %[[TRIPS:.*]] = arith.maxsi
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[TRIPS]] step
// CHECK: %[[G:.*]] = arith.addi %[[PDONE]], %[[J]] : i32
// CHECK: %[[SLOT:.*]] = arith.remsi %[[G]], %{{.*}} : i32
// CHECK: arith.cmpi sge, %[[G]]
// CHECK: tilegpu.mbarrier_wait %[[EMPTY]][%[[SLOT]]]
// CHECK: tilegpu.mbarrier_arrive_expect_tx %[[FULL]][%[[SLOT]]]
// CHECK: tilegpu.tma_load
// CHECK: tilegpu.tma_load
// CHECK: %[[NEXT:.*]] = arith.addi %[[PDONE]], %[[TRIPS]] : i32
// CHECK: scf.yield %{{.*}}, %[[NEXT]] : i32, i32
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 232
// CHECK: scf.while
// CHECK: ^bb0(%{{.*}}: i32, %[[CDONE:.*]]: i32):
// CHECK-NOT: tilegpu.mbarrier_init
// CHECK: %[[CTRIPS:.*]] = arith.maxsi
// CHECK: scf.for
// CHECK: %[[CG:.*]] = arith.addi %[[CDONE]], %{{.*}} : i32
// CHECK: %[[CSLOT:.*]] = arith.remsi %[[CG]], %{{.*}} : i32
// CHECK: tilegpu.mbarrier_wait %[[FULL]][%[[CSLOT]]]
// CHECK-NOT: gpu.barrier
// CHECK: tilegpu.slot %[[A]][%[[CSLOT]]]
// CHECK: tilegpu.mma {{.*}}in_flight
// CHECK: tilegpu.mbarrier_arrive %[[EMPTY]]
// CHECK: scf.yield
// CHECK: tilegpu.wait_mma
// CHECK: arith.cmpi sgt, %[[CTRIPS]]
// CHECK: arith.addi %[[CDONE]], %[[CTRIPS]]
// CHECK: tilegpu.mbarrier_arrive %[[EMPTY]]
// CHECK-NOT: tilegpu.mbarrier_inval
// CHECK: tile.store
// CHECK: arith.addi %[[CDONE]], %[[CTRIPS]]
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK-COUNT-3: tilegpu.mbarrier_inval %[[FULL]]
// CHECK-COUNT-3: tilegpu.mbarrier_inval %[[EMPTY]]
// CHECK: } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}

// OFF-LABEL: func.func @persistent(
// OFF-NOT: warp_specialized

// STAGED-LABEL: func.func @persistent(
// STAGED: } else {
// STAGED: %[[STAGE:.*]] = tilegpu.alloc_shared {offset = {{[0-9]+}} : i64} : !tilegpu.shared<128x256xf16, slots = 1, row_stride = 264>
// STAGED: scf.while
// STAGED: tilegpu.stage_layout %{{.*}} through %[[STAGE]]
// STAGED: tile.store

// NOROOM-LABEL: func.func @persistent(
// NOROOM: warp_specialized
// NOROOM-NOT: tilegpu.stage_layout

// NOPRODUCER-LABEL: func.func @persistent(
// NOPRODUCER-NOT: warp_specialized
// NOPRODUCER-NOT: tilegpu.stage_layout
// NOPRODUCER: tile.store
// NOPRODUCER-LABEL: func.func @persistent_for(

// ROOM-LABEL: func.func @persistent(
// ROOM: tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 3
// DEPTH4-LABEL: func.func @persistent(
// DEPTH4: tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 4

// GPU-LABEL: gpu.func @persistent(
// GPU-SAME: known_block_size = array<i32: 384, 1, 1>
// GPU: nvvm.setmaxregister decrease 40
// GPU: nvvm.cp.async.bulk.tensor.shared.cluster.global
// GPU: nvvm.setmaxregister increase 232
// GPU: nvvm.mbarrier.arrive
// GPU-NOT: gpu.barrier
// GPU: gpu.return

func.func @persistent(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                      %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                      %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                      %tiles_n: i32, %tiles: i32, %nk: i32) attributes {tile.kernel} {
  %first = tile.bid 0
  %grid = tile.num_blocks 0
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %last = scf.while (%t = %first) : (i32) -> i32 {
    %more = arith.cmpi slt, %t, %tiles : i32
    scf.condition(%more) %t : i32
  } do {
  ^bb0(%t: i32):
    %pm = arith.divsi %t, %tiles_n : i32
    %pn = arith.remsi %t, %tiles_n : i32
    %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
      %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
      %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x256xf16>
      %r = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
      scf.yield %r : tensor<128x256xf32>
    }
    %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
    tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
    %next = arith.addi %t, %grid : i32
    scf.yield %next : i32
  }
  return
}

// The same loop as cuTile users write it, a `for` over range(first tile,
// tiles, grid): an scf.for, split the same way, each role's for carrying
// the count.
// CHECK-LABEL: func.func @persistent_for(
// CHECK: %[[FFULL:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<3>
// CHECK: %[[FEMPTY:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<3>
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[FDONE:.*]] = %{{.*}}) -> (i32)
// CHECK: scf.for %[[FJ:.*]] =
// CHECK: arith.addi %[[FDONE]], %[[FJ]] : i32
// CHECK: tilegpu.mbarrier_wait %[[FEMPTY]]
// CHECK: tilegpu.tma_load
// CHECK: scf.yield %{{.*}} : i32
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 232
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[FCDONE:.*]] = %{{.*}}) -> (i32)
// CHECK: tilegpu.mbarrier_wait %[[FFULL]]
// CHECK: tilegpu.mma {{.*}}in_flight
// CHECK: tilegpu.wait_mma
// CHECK: tilegpu.mbarrier_arrive %[[FEMPTY]]
// CHECK: tile.store
// CHECK: arith.addi %[[FCDONE]]
// CHECK: scf.yield %{{.*}} : i32
// CHECK: tilegpu.mbarrier_inval %[[FFULL]]
// CHECK: } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
func.func @persistent_for(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                          %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                          %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                          %tiles_n: i32, %count: i32, %nk: i32) attributes {tile.kernel} {
  %first = tile.bid 0
  %grid = tile.num_blocks 0
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  scf.for %i = %c0 to %count step %c1 : i32 {
    %step = arith.muli %i, %grid : i32
    %t = arith.addi %first, %step : i32
    %pm = arith.divsi %t, %tiles_n : i32
    %pn = arith.remsi %t, %tiles_n : i32
    %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
      %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
      %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x256xf16>
      %r = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
      scf.yield %r : tensor<128x256xf32>
    }
    %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
    tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  }
  return
}
