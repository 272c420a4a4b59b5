# The MLIR half of the build: the hymo dialect, passes, the model builder,
# hymo-opt and the lit tests. Included from the top level after the runtime,
# so that LLVM's global flags do not reach the runtime's targets.
message(STATUS "hymo: MLIR ${MLIR_PACKAGE_VERSION} from ${MLIR_DIR}")
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
set(LLVM_RUNTIME_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/lib)
set(MLIR_BINARY_DIR ${CMAKE_BINARY_DIR})
set(MLIR_LINK_MLIR_DYLIB ON)
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include(HandleLLVMOptions)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
include_directories(${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})

find_package(yaml-cpp REQUIRED)

add_subdirectory(dialects)
add_subdirectory(models)
add_subdirectory(passes)
add_subdirectory(tools/hymo-opt)
include(${PROJECT_SOURCE_DIR}/cmake/HymoLit.cmake)
