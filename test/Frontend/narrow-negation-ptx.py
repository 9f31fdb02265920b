# 16-bit negation and abs reach ptxas computed in 32 bits (compiler/gpu/
# PtxasWorkarounds.cpp): ptxas 13.0 turns cvt.s32.s16(neg.s16 x) into
# -sext(x), which gives +32768 for x = -32768 instead of -32768.
# REQUIRES: ptxas
# RUN: %tilec %s::widen --args "i16[64], i32[64], i32[64]" -D B=64 --target sm_90 \
# RUN:   --emit ptx | FileCheck %s
# RUN: %tilec %s::widen --args "i16[64], i32[64], i32[64]" -D B=64 --target sm_90 \
# RUN:   --emit llvm | FileCheck %s --check-prefix=LLVM
import tile


@tile.kernel
def widen(x, neg, mag, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    tile.store(neg, index=(0,), tile=(-t).astype(tile.int32))
    tile.store(mag, index=(0,), tile=abs(t).astype(tile.int32))

# CHECK-NOT: neg.s16
# CHECK-NOT: abs.s16
# CHECK: cvt.u32.u16 t, %rs{{[0-9]+}}; neg.s32 t, t; cvt.u16.u32 %rs{{[0-9]+}}, t;
# CHECK: cvt.s32.s16 t, %rs{{[0-9]+}}; abs.s32 t, t; cvt.u16.u32 %rs{{[0-9]+}}, t;
# LLVM-NOT: sub <{{.*}}> zeroinitializer
# LLVM-NOT: sub i16 0,
# LLVM: call i16 asm "{ .reg .b32 t; cvt.u32.u16 t, $1; neg.s32 t, t; cvt.u16.u32 $0, t; }", "=h,h"
