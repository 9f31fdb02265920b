// RUN: tile-opt %s -split-input-file -verify-diagnostics
// A tile.ptx op in a file that names no LLVM type before it: its parser
// makes an !llvm.ptr, so the tile dialect loads LLVM with it (the parser
// crashed in the type uniquer; the compiler fuzzer's find).

func.func @no_llvm_type_before(%in: i1, %h: i16) {
  // expected-error @+1 {{use of undeclared SSA value name}}
  tile.ptx.st_global %p, %in, %h : i16
  return
}
