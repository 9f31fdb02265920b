// REQUIRES: ptxas
// RUN: tile-opt %s --convert-tile-to-gpu | FileCheck %s
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin

// mbarriers and TMA (TileToGpuTma.cpp): barrier i is 8 * i bytes into the
// mbarriers; thread 0 initializes (then, once after its last init, a
// fence and a block barrier),
// expects the bytes and issues the copies; every thread waits (a loop of
// try_wait.parity) and arrives. The tensor map is a 128-byte grid-constant
// parameter used through its generic address (cvta.param). The store fences
// the buffer for the async proxy, and its bulk group has read the buffer
// before the closing barrier.

// CHECK: gpu.func @tma(%[[MAP:.*]]: !llvm.ptr, %[[I:.*]]: i32, %[[J:.*]]: i32, %[[S:.*]]: i32) kernel attributes {{{.*}}tile.grid_constant_args = array<i32: 0>
// CHECK: %[[WINDOW:.*]] = llvm.mlir.addressof @tile_shared
// CHECK: %[[RING:.*]] = llvm.getelementptr %[[WINDOW]][0]
// CHECK: %[[BARS:.*]] = llvm.getelementptr %{{.*}}[65536] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 128 : i32
// CHECK-DAG: %[[BYTES:.*]] = arith.constant 16384 : i32

// init: thread 0; after a run of inits (constants between them do not
// break it) one fence.mbarrier_init and one barrier.
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : i32
// CHECK: scf.if %[[FIRST]] {
// CHECK:   %[[FULL:.*]] = llvm.getelementptr %[[BARS]][%[[C1]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK:   nvvm.mbarrier.init %[[FULL]], %[[C1]] : !llvm.ptr<3>, i32
// CHECK-NOT: nvvm.fence.mbarrier.init
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK:   %[[EMPTY:.*]] = llvm.getelementptr %[[BARS]][%[[C2]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK:   nvvm.mbarrier.init %[[EMPTY]], %[[THREADS]] : !llvm.ptr<3>, i32
// CHECK:   nvvm.fence.mbarrier.init
// CHECK: }
// CHECK: gpu.barrier

// The slot: 16 KB per slot into the ring.
// CHECK: %[[OFF:.*]] = arith.muli %[[S]], %{{.*}} : i32
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[RING]][%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8

// expect_tx and the load: thread 0; coordinates innermost first, as given.
// CHECK: scf.if
// CHECK:   nvvm.mbarrier.arrive.expect_tx %{{.*}}, %[[BYTES]] : !llvm.ptr<3>, i32
// CHECK: scf.if
// CHECK:   %[[FULL2:.*]] = llvm.getelementptr %[[BARS]][%[[C1]]]
// CHECK:   %[[DST:.*]] = llvm.addrspacecast %[[SLOT]] : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK:   nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %[[MAP]], %[[FULL2]], box[%[[J]], %[[I]]] : !llvm.ptr<7>, !llvm.ptr
// CHECK: }

// wait and arrive: every thread.
// CHECK-NOT: scf.if
// CHECK: %[[HINT:.*]] = arith.constant 10000000 : i32
// CHECK: %[[FULL3:.*]] = llvm.getelementptr %[[BARS]][%[[C1]]]
// CHECK: nvvm.mbarrier.try_wait.parity %[[FULL3]], %{{.*}}, %[[HINT]] : !llvm.ptr<3>, i32, i32
// CHECK: %[[EMPTY2:.*]] = llvm.getelementptr %[[BARS]][%[[C2]]]
// CHECK: nvvm.mbarrier.arrive %[[EMPTY2]] : !llvm.ptr<3>

// store: fence, barrier, thread 0 stores and waits for the read, barrier.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK:   nvvm.cp.async.bulk.tensor.global.shared.cta %[[MAP]], %[[SLOT]], box[%[[J]], %[[I]]]
// CHECK:   nvvm.cp.async.bulk.commit.group
// CHECK:   nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: }
// CHECK: gpu.barrier
// CHECK: gpu.return
// CHECK-NOT: unrealized_conversion_cast

// PTX: .entry tma(
// PTX: .param .align 64 .b8 tma_param_0[128]
// PTX: mov.b64 %[[PARAM:rd[0-9]+]], tma_param_0;
// PTX: cvta.param.u64 %[[DESC:rd[0-9]+]], %[[PARAM]];
// PTX: mbarrier.init.shared.b64 [tile_shared+65544], %{{r[0-9]+}};
// PTX-NOT: bar.sync
// PTX: mbarrier.init.shared.b64 [tile_shared+65552], %{{r[0-9]+}};
// PTX: fence.mbarrier_init.release.cluster;
// PTX: bar.sync 0;
// PTX: mbarrier.arrive.expect_tx.shared.b64 %{{rd[0-9]+}}, [tile_shared+65544], %{{r[0-9]+}};
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%{{r[0-9]+}}], [%[[DESC]], {%[[J:r[0-9]+]], %[[I:r[0-9]+]]}], [tile_shared+65544];
// PTX: mbarrier.try_wait.parity.shared.b64 P1, [%{{r[0-9]+}}], 0, 10000000;
// PTX: @P1 bra.uni DONE;
// PTX: bra.uni LAB_WAIT;
// PTX: mbarrier.arrive.shared.b64 %{{rd[0-9]+}}, [tile_shared+65552];
// PTX: fence.proxy.async.shared::cta;
// PTX: bar.sync 0;
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%[[DESC]], {%[[J]], %[[I]]}], [%{{r[0-9]+}}];
// PTX: cp.async.bulk.commit_group;
// PTX: cp.async.bulk.wait_group.read 0;
// PTX: bar.sync 0;

module attributes {tile.num_warps = 4 : i32} {
  func.func @tma(%map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>,
                 %i: i32, %j: i32, %s: i32)
      attributes {tile.kernel, tilegpu.shared_bytes = 65568 : i64} {
    // Four 16 KB slots, then the barriers: 1 = full (one arrival plus the
    // bytes), 2 = empty (every thread arrives).
    %ring = tilegpu.alloc_shared {offset = 0} : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
    %bars = tilegpu.alloc_mbarriers {offset = 65536} : !tilegpu.mbarriers<4>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %threads = arith.constant 128 : i32
    %bytes = arith.constant 16384 : i32
    tilegpu.mbarrier_init %bars[%c1], %c1 : !tilegpu.mbarriers<4>
    %unused = arith.constant 7 : i32
    tilegpu.mbarrier_init %bars[%c2], %threads : !tilegpu.mbarriers<4>
    %slot = tilegpu.slot %ring[%s] : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    tilegpu.mbarrier_arrive_expect_tx %bars[%c1], %bytes : !tilegpu.mbarriers<4>
    tilegpu.tma_load %map[%j, %i] into %slot, %bars[%c1] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<4>
    tilegpu.mbarrier_wait %bars[%c1], %c0 : !tilegpu.mbarriers<4>
    tilegpu.mbarrier_arrive %bars[%c2] : !tilegpu.mbarriers<4>
    tilegpu.tma_store %slot into %map[%j, %i] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.tensor_map<128x64xf16, swizzle = 128>
    return
  }
}
