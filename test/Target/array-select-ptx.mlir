// A list argument indexed at run time on the GPU: the kernel takes each
// array's parts (pointer, extents, strides) as usual, and the selected array's
// parts are selects over them, array k taken when index > k - 1 (the index
// clamped into the list). ptxas accepts the result for sm_90.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-map-threads --convert-tile-to-gpu | FileCheck %s --check-prefix=IR
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// IR-LABEL: gpu.func @select
// IR-SAME: (%[[I:[^:]*]]: i32, %[[A:[^:]*]]: !llvm.ptr<1>, %[[AN0:[^:]*]]: i64, %[[AN1:[^:]*]]: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[B:[^:]*]]: !llvm.ptr<1>, %[[BN0:[^:]*]]: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[C:[^:]*]]: !llvm.ptr<1>, %[[CN0:[^:]*]]: i64,
// IR: %[[GE1:.*]] = arith.cmpi sge, %[[I]], %{{.*}} : i32
// IR-NEXT: %[[P1:.*]] = arith.select %[[GE1]], %[[B]], %[[A]] : !llvm.ptr<1>
// IR-NEXT: %[[N1:.*]] = arith.select %[[GE1]], %[[BN0]], %[[AN0]] : i64
// IR: %[[GE2:.*]] = arith.cmpi sge, %[[I]], %{{.*}} : i32
// IR-NEXT: arith.select %[[GE2]], %[[C]], %[[P1]] : !llvm.ptr<1>
// IR-NEXT: arith.select %[[GE2]], %[[CN0]], %[[N1]] : i64

// CHECK-LABEL: .visible .entry select(
// CHECK: setp.gt.s32 %[[P1:p[0-9]+]], %[[I:r[0-9]+]], 0;
// CHECK: selp.b64 %[[S:rd[0-9]+]], %{{rd[0-9]+}}, %{{rd[0-9]+}}, %[[P1]];
// CHECK: setp.gt.s32 %[[P2:p[0-9]+]], %[[I]], 1;
// CHECK: selp.b64 %{{rd[0-9]+}}, %{{rd[0-9]+}}, %[[S]], %[[P2]];
// CHECK: ld.global
// CHECK: st.global
// CHECK: ret;
module {
  func.func @select(%i: i32, %a: !tile.array<?x?xf32, strides = [?, 1], align = 16>, %b: !tile.array<?x?xf32, strides = [?, 1], align = 16>, %c: !tile.array<?x?xf32, strides = [?, 1], align = 16>, %o: !tile.array<?x?xf32, strides = [?, 1], align = 16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %s = tile.array_select %i, %a, %b, %c : i32, !tile.array<?x?xf32, strides = [?, 1], align = 16>
    %t = tile.load %s[%c0, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16> -> tensor<16x32xf32>
    tile.store %o[%c0, %c0], %t : !tile.array<?x?xf32, strides = [?, 1], align = 16>, tensor<16x32xf32>
    return
  }
}
