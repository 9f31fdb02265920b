#!/usr/bin/env bash
# Regenerates docs/dialect and docs/passes from ODS.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ninja -C "$BUILD_DIR" mlir-doc >/dev/null
cp "$BUILD_DIR/docs/dialect/TileDialect.md" docs/dialect/
cp "$BUILD_DIR/docs/dialect/TileGpuDialect.md" docs/dialect/
cp "$BUILD_DIR/docs/passes/TilePasses.md" docs/passes/
