// RUN: tile-opt %s --split-input-file --convert-tile-to-gpu | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-to-llvm-nvvm | FileCheck %s --check-prefix=ASM

// The PTX the GPU lowering writes itself. convert-tile-to-gpu builds no
// llvm.inline_asm: approximate special functions are calls of the NVVM
// intrinsics (pure: LLVM may CSE them); predicated, ordered global loads and
// stores and scoped atomics are tile.ptx ops, which convert-gpu-to-nvvm
// lowers to llvm.inline_asm with every operand in a register (constants
// too: nvvm.inline_ptx would make them immediates, which an f64 atomic
// cannot take).

// exp is ex2(x * log2(e)), log is lg2(x) * ln(2).
#blocked = #tile.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @special_functions
  // CHECK-NOT: llvm.inline_asm
  // CHECK: %[[E:.*]] = arith.mulf %{{.*}}, %cst{{.*}} : f32
  // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%[[E]]) : (f32) -> f32
  // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%{{.*}}) : (f32) -> f32
  // CHECK: %[[L:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%{{.*}}) : (f32) -> f32
  // CHECK: arith.mulf %[[L]], %{{.*}} : f32
  // CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%{{.*}}) : (f32) -> f32
  // CHECK: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"(%{{.*}}) : (f32) -> f32
  // CHECK-NOT: llvm.inline_asm
  // CHECK: gpu.return
  func.func @special_functions(%x: !tile.array<?xf32, strides = [1], align = 4>) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 4> -> tensor<128xf32, #blocked>
    %b = math.exp %a : tensor<128xf32, #blocked>
    %c = math.exp2 %b : tensor<128xf32, #blocked>
    %d = math.log %c : tensor<128xf32, #blocked>
    %e = math.log2 %d : tensor<128xf32, #blocked>
    %f = math.rsqrt %e : tensor<128xf32, #blocked>
    tile.store %x[%i], %f : !tile.array<?xf32, strides = [1], align = 4>, tensor<128xf32, #blocked>
    return
  }
}

// -----

// f32(f64(x) / f64(y)) of f32 x and y (the correctly rounded quotient of
// float `//`) is div.rn.f32 per element, an f64 constant divisor narrowed;
// a scalar one too. A plain f32 divf stays arith.divf (div.full).
#blocked = #tile.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @rounded_quotient
  // CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.div.rn.f"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
  // CHECK: arith.divf %{{.*}} : vector<2xf32>
  // CHECK: llvm.call_intrinsic "llvm.nvvm.div.rn.f"(%arg{{[0-9]+}}, %arg{{[0-9]+}}) : (f32, f32) -> f32
  // CHECK: gpu.return
  // ASM-LABEL: llvm.func @rounded_quotient
  // ASM-NOT: llvm.fdiv {{.*}}f64
  // ASM: llvm.return
  func.func @rounded_quotient(%x: !tile.array<?xf32, strides = [1], align = 4>, %s: f32) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 4> -> tensor<256xf32, #blocked>
    %wide = arith.extf %a : tensor<256xf32, #blocked> to tensor<256xf64, #blocked>
    %three = arith.constant dense<3.0> : tensor<256xf64, #blocked>
    %q = arith.divf %wide, %three : tensor<256xf64, #blocked>
    %r = arith.truncf %q : tensor<256xf64, #blocked> to tensor<256xf32, #blocked>
    %plain = arith.divf %r, %a : tensor<256xf32, #blocked>
    tile.store %x[%i], %plain : !tile.array<?xf32, strides = [1], align = 4>, tensor<256xf32, #blocked>
    %sw = arith.extf %s : f32 to f64
    %sq = arith.divf %sw, %sw : f64
    %sr = arith.truncf %sq : f64 to f32
    %st = tile.splat %sr : tensor<256xf32, #blocked>
    tile.store %x[%i], %st : !tile.array<?xf32, strides = [1], align = 4>, tensor<256xf32, #blocked>
    return
  }
}

// -----

// A v4 acquire load padded with 1.0 (the pad moves are not predicated), a
// release store, and a byte load and store.
#blocked = #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @ordered
  // CHECK: %[[IN:.*]] = arith.cmpi ult
  // CHECK: %[[P:.*]] = llvm.getelementptr
  // CHECK: %{{.*}}:4 = tile.ptx.ld_global %[[P]], %[[IN]] {memory_order = #tile.memory_order<acquire>, memory_scope = #tile.memory_scope<device>, pad = array<i64: 1065353216, 1065353216, 1065353216, 1065353216>} : i32, i32, i32, i32
  // CHECK: tile.ptx.st_global %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {memory_order = #tile.memory_order<release>, memory_scope = #tile.memory_scope<block>} : i32, i32, i32, i32
  // A byte: a b16 register, narrowed; a weak store.
  // CHECK: tile.ptx.ld_global %{{.*}}, %{{.*}} {byte, pad = array<i64: 0>} : i16
  // CHECK: tile.ptx.st_global %{{.*}}, %{{.*}}, %{{.*}} {byte} : i16
  // CHECK-NOT: llvm.inline_asm
  // ASM-LABEL: llvm.func @ordered
  // ASM: llvm.inline_asm has_side_effects asm_dialect = att "mov.b32 $0, 0x3f800000;{{.*}}@$5 ld.acquire.gpu.global.v4.b32 {$0, $1, $2, $3}, [$4 + 0];", "=r,=r,=r,=r,l,b"
  // ASM: llvm.inline_asm has_side_effects asm_dialect = att "@$1 st.release.cta.global.v4.b32 [$0 + 0], {$2, $3, $4, $5};", "l,b,r,r,r,r"
  // ASM: llvm.inline_asm has_side_effects asm_dialect = att "mov.b16 $0, 0x0;\0A\09@$2 ld.global.u8 $0, [$1 + 0];", "=h,l,b"
  // ASM: llvm.inline_asm has_side_effects asm_dialect = att "@$1 st.global.b8 [$0 + 0], $2;", "l,b,h"
  func.func @ordered(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                     %b: !tile.array<?xi8>) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] {padding = 1.0 : f32, memory_order = #tile.memory_order<acquire>, memory_scope = #tile.memory_scope<device>} : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<512xf32, #blocked>
    tile.store %x[%i], %a {memory_order = #tile.memory_order<release>, memory_scope = #tile.memory_scope<block>} : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<512xf32, #blocked>
    %c = tile.load %b[%i] : !tile.array<?xi8> -> tensor<512xi8, #blocked>
    tile.store %b[%i], %c : !tile.array<?xi8>, tensor<512xi8, #blocked>
    return
  }
}

// -----

// Relaxed atomics at block and system scope: atom.relaxed.{cta,sys}, the
// registers from the types (=r for i32, =d for f64, =l for i64), constant
// values in registers too. The device scope and the kinds PTX has no
// instruction for stay llvm.atomicrmw.
#blocked = #tile.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK-LABEL: gpu.func @scoped_atomics
  // CHECK: tile.ptx.atom_global add %{{.*}}, %{{.*}} {memory_scope = #tile.memory_scope<block>} : i32
  // CHECK: tile.ptx.atom_global add %{{.*}}, %{{.*}} {memory_scope = #tile.memory_scope<sys>} : f64
  // CHECK: tile.ptx.atom_global umin %{{.*}}, %{{.*}} {memory_scope = #tile.memory_scope<block>} : i64
  // CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i32
  // CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("block") monotonic : !llvm.ptr<1>, f16
  // CHECK-NOT: llvm.inline_asm
  // ASM-LABEL: llvm.func @scoped_atomics
  // ASM: llvm.inline_asm has_side_effects asm_dialect = att "atom.relaxed.cta.global.add.u32 $0, [$1], $2;", "=r,l,r"
  // ASM: llvm.inline_asm has_side_effects asm_dialect = att "atom.relaxed.sys.global.add.f64 $0, [$1], $2;", "=d,l,d"
  // ASM: llvm.inline_asm has_side_effects asm_dialect = att "atom.relaxed.cta.global.min.u64 $0, [$1], $2;", "=l,l,l"
  // ASM-NOT: tile.ptx
  func.func @scoped_atomics(%n: !tile.array<?xi32, strides = [1], align = 16>,
                            %d: !tile.array<?xf64, strides = [1], align = 16>,
                            %u: !tile.array<?xi64, strides = [1], align = 16>,
                            %h: !tile.array<?xf16, strides = [1], align = 16>) attributes {tile.kernel} {
    %idx = tile.iota : tensor<128xi32, #blocked>
    %one = arith.constant dense<1> : tensor<128xi32, #blocked>
    %oned = arith.constant dense<1.0> : tensor<128xf64, #blocked>
    %oneu = arith.constant dense<1> : tensor<128xi64, #blocked>
    %oneh = arith.constant dense<1.0> : tensor<128xf16, #blocked>
    %a = tile.atomic_rmw add %n[%idx], %one {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<block>} : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32, #blocked>], tensor<128xi32, #blocked>
    %b = tile.atomic_rmw add %d[%idx], %oned {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<sys>} : !tile.array<?xf64, strides = [1], align = 16>[tensor<128xi32, #blocked>], tensor<128xf64, #blocked>
    %c = tile.atomic_rmw umin %u[%idx], %oneu {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<block>} : !tile.array<?xi64, strides = [1], align = 16>[tensor<128xi32, #blocked>], tensor<128xi64, #blocked>
    %e = tile.atomic_rmw add %n[%idx], %one {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<device>} : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32, #blocked>], tensor<128xi32, #blocked>
    %f = tile.atomic_rmw add %h[%idx], %oneh {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<block>} : !tile.array<?xf16, strides = [1], align = 16>[tensor<128xi32, #blocked>], tensor<128xf16, #blocked>
    return
  }
}
