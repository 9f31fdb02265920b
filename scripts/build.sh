#!/usr/bin/env bash
# Configures (once) and builds everything into build/ incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -B "$BUILD_DIR" -S . \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
fi
# Quiet on success; on failure, the errors (without progress lines).
if ! ninja -C "$BUILD_DIR" ${NINJA_FLAGS:-} all mlir-doc >"$BUILD_DIR/build.log" 2>&1; then
  grep -vE '^\[[0-9]+/[0-9]+\]' "$BUILD_DIR/build.log" | tail -60
  echo "build failed (full log: $BUILD_DIR/build.log)" >&2
  exit 1
fi
