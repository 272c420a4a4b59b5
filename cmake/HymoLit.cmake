# lit + FileCheck tests under test/ (Dialect/, Model/, Transforms/), run by
# `ninja check-hymo` and registered with ctest as `lit`.
if(NOT LLVM_EXTERNAL_LIT)
  set(LLVM_EXTERNAL_LIT ${LLVM_TOOLS_BINARY_DIR}/lit)
endif()
if(NOT EXISTS ${LLVM_EXTERNAL_LIT})
  message(FATAL_ERROR "lit not found at ${LLVM_EXTERNAL_LIT}: install llvm-22-tools "
    "or pass -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit")
endif()
configure_lit_site_cfg(
  ${PROJECT_SOURCE_DIR}/test/lit.site.cfg.py.in
  ${PROJECT_BINARY_DIR}/test/lit.site.cfg.py
  MAIN_CONFIG ${PROJECT_SOURCE_DIR}/test/lit.cfg.py)
set(HYMO_LIT_DEPENDS hymo-opt hymo-gradcheck)
add_lit_testsuite(check-hymo "Running the hymo lit tests"
  ${PROJECT_BINARY_DIR}/test
  DEPENDS ${HYMO_LIT_DEPENDS})
add_test(NAME lit
  COMMAND ${LLVM_EXTERNAL_LIT} -sv ${PROJECT_BINARY_DIR}/test)
