// RUN: tile-opt %s --split-input-file --verify-diagnostics -o /dev/null

func.func @three_words(%p: !llvm.ptr<1>, %in: i1) {
  // expected-error @+1 {{moves 1, 2 or 4 words, not 3}}
  %w:3 = tile.ptx.ld_global %p, %in {pad = array<i64: 0, 0, 0>} : i32, i32, i32
  return
}

// -----

func.func @pad_count(%p: !llvm.ptr<1>, %in: i1) {
  // expected-error @+1 {{has 1 pad words for 2 words}}
  %w:2 = tile.ptx.ld_global %p, %in {pad = array<i64: 0>} : i32, i32
  return
}

// -----

func.func @two_b16(%p: !llvm.ptr<1>, %in: i1, %h: i16) {
  // expected-error @+1 {{moves one i16 word (a b16 or a byte)}}
  tile.ptx.st_global %p, %in, %h, %h : i16, i16
  return
}

// -----

func.func @byte_in_b32(%p: !llvm.ptr<1>, %in: i1, %v: i32) {
  // expected-error @+1 {{moves a byte in an i16 word}}
  tile.ptx.st_global %p, %in, %v {byte} : i32
  return
}

// -----

func.func @acquire_store(%p: !llvm.ptr<1>, %in: i1, %v: i32) {
  // expected-error @+1 {{memory order acquire must be relaxed or release}}
  tile.ptx.st_global %p, %in, %v {memory_order = #tile.memory_order<acquire>, memory_scope = #tile.memory_scope<block>} : i32
  return
}

// -----

func.func @order_without_scope(%p: !llvm.ptr<1>, %in: i1) {
  // expected-error @+1 {{memory_order and memory_scope go together}}
  %w = tile.ptx.ld_global %p, %in {pad = array<i64: 0>, memory_order = #tile.memory_order<relaxed>} : i32
  return
}

// -----

func.func @shared_pointer(%p: !llvm.ptr<3>, %in: i1) {
  // expected-error @+1 {{operand #0 must be LLVM pointer in address space 1}}
  %w = "tile.ptx.ld_global"(%p, %in) <{pad = array<i64: 0>}> : (!llvm.ptr<3>, i1) -> i32
  return
}

// -----

func.func @float_max(%p: !llvm.ptr<1>, %v: f32) {
  // expected-error @+1 {{PTX has no atom.max for 'f32'}}
  %r = tile.ptx.atom_global max %p, %v {memory_scope = #tile.memory_scope<block>} : f32
  return
}

// -----

func.func @no_scope(%p: !llvm.ptr<1>, %v: i32) {
  // expected-error @+1 {{memory scope must be block, device or sys}}
  %r = tile.ptx.atom_global add %p, %v {memory_scope = #tile.memory_scope<none>} : i32
  return
}

// -----

func.func @wgmma_acc(%c: f32, %a: i32, %desc: i64) {
  // expected-error @+1 {{m64n16 accumulates 8 f32 per thread}}
  %d:4 = tile.ptx.wgmma_reg_a(%c, %c, %c, %c), (%a, %a, %a, %a), %desc {n = 16, input_type = f16} : (f32, f32, f32, f32), (i32, i32, i32, i32) -> f32, f32, f32, f32
  return
}

// -----

func.func @wgmma_a(%c: f32, %a: i32, %desc: i64) {
  // expected-error @+1 {{A is four 32-bit fragment registers}}
  %d:4 = tile.ptx.wgmma_reg_a(%c, %c, %c, %c), (%a, %a), %desc {n = 8, input_type = f16} : (f32, f32, f32, f32), (i32, i32) -> f32, f32, f32, f32
  return
}

// -----

func.func @wgmma_wait(%c: f32) {
  // expected-error @+1 {{returns each of its 2 values}}
  %w = tile.ptx.wgmma_wait %c, %c pending = 0 : f32, f32 -> f32
  return
}
