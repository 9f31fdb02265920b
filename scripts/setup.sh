#!/usr/bin/env bash
# Installs what tile needs on a Debian 12 machine, quietly and idempotently:
# LLVM/MLIR 22, the build tools, GoogleTest, and the Python packages.
set -euo pipefail

APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libzstd-dev
              cmake ninja-build g++ libgtest-dev python3-dev)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY_PACKAGES=(pybind11 numpy pytest hypothesis lit)
if ! python3 -c "import pybind11, numpy, pytest, hypothesis, lit" >/dev/null 2>&1; then
  echo "setup: installing ${PY_PACKAGES[*]}"
  python3 -m pip install -q --disable-pip-version-check "${PY_PACKAGES[@]}"
fi
