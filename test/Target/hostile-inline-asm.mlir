// Inline asm in IR resumed from an edited dump: a `$` reference the LLVM
// AsmPrinter cannot resolve aborted the process ("Bad $ operand number");
// now an error on the op. Valid references still reach the PTX.
// RUN: tile-opt %s --split-input-file --verify-diagnostics --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx

// CHECK: mov.b32 {{.*}}, 7;
module attributes {gpu.container_module} {
  gpu.module @ok {
    llvm.func @good(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %c = llvm.mlir.constant(7 : i32) : i32
      %v = llvm.inline_asm has_side_effects "mov.b32 $0, ${1}; // $$ and $(a$|b$)", "=r,r" %c : (i32) -> i32
      llvm.store %v, %p : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @negative {
    llvm.func @bad(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      // expected-error @+1 {{asm string refers to an operand with '$-0];...', which names none of its 2 operands}}
      %v = llvm.inline_asm has_side_effects "ld.global.b32 $0, [$-0];", "=r,l" %p : (!llvm.ptr<1>) -> i32
      llvm.store %v, %p : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @out_of_range {
    llvm.func @bad(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      // expected-error @+1 {{asm string refers to an operand with '$2];...', which names none of its 2 operands}}
      %v = llvm.inline_asm has_side_effects "ld.global.b32 $0, [$2];", "=r,l,~{memory}" %p : (!llvm.ptr<1>) -> i32
      llvm.store %v, %p : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @unclosed {
    llvm.func @bad(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      // expected-error @+1 {{which names none of its 2 operands}}
      %v = llvm.inline_asm has_side_effects "ld.global.b32 ${0, [$1];", "=r,l" %p : (!llvm.ptr<1>) -> i32
      llvm.store %v, %p : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

// A constraint string LLVM cannot parse (here an input tied to an output that
// does not exist; the fuzzer's nested brackets merged two outputs): code
// generation crashed on it (seed 20261210); now an error on the op.
module attributes {gpu.container_module} {
  gpu.module @constraints {
    llvm.func @unparsable(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %c = llvm.mlir.constant(7 : i32) : i32
      // expected-error @+1 {{has constraints LLVM cannot parse: '=r,1...'}}
      %v = llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,1" %c : (i32) -> i32
      llvm.store %v, %p : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}
