# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "hymo"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "runtime", "gradcheck", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.hymo_obj_root, "test")

config.substitutions.append(("%configs", os.path.join(config.hymo_src_root, "models", "configs")))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.hymo_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["hymo-opt", "hymo-gradcheck"], [config.hymo_tools_dir])

import sys
config.substitutions.append(("%python", sys.executable))
