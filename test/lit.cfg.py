# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "TILE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tile_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "python", "unittests"]

# Variables in one CHECK block never leak into the next (as Triton does).
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tile_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["tile-opt"], [config.tile_tools_dir])

if os.path.exists(os.path.join(config.cuda_bin_dir, "ptxas")):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", os.path.join(config.cuda_bin_dir, "ptxas")))

# Python kernels traced by tilec (test/Frontend): the frontend as a user runs it,
# with the python3 the other suites use (lit itself may run on another one).
import shutil
import sys
_python = shutil.which("python3") or sys.executable
config.substitutions.append(
    ("%tilec", f"env PYTHONPATH={os.path.join(config.tile_src_root, 'python-frontend')} "
               f"TILE_OPT={os.path.join(config.tile_tools_dir, 'tile-opt')} "
               f"{_python} -m tile.tilec"))
