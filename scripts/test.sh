#!/usr/bin/env bash
# Sets up, builds, and runs every test suite: lit, ctest (GoogleTest), pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}

echo "== lit"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test"
echo "== ctest"
ctest --test-dir "$BUILD_DIR" --output-on-failure
echo "== pytest"
export PYTHONPATH="$PWD/python-frontend${PYTHONPATH:+:$PYTHONPATH}"
export TILE_OPT="$PWD/$BUILD_DIR/bin/tile-opt"
export TILE_CACHE_DIR="${TILE_CACHE_DIR:-$(mktemp -d)}"
python3 -m pytest -q test/python "$@"
