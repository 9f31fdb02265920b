#!/usr/bin/env bash
# Sets up, builds, and runs the vector-add example kernel (on the CPU backend
# when no GPU is usable).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
export PYTHONPATH="$PWD/python-frontend${PYTHONPATH:+:$PYTHONPATH}"
python3 examples/vector_add.py
