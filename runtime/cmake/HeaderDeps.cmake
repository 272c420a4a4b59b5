# Header-only dependencies of the runtime and hymo-run: nlohmann/json and
# CLI11. Found as packages where installed (Debian: nlohmann-json3-dev,
# libcli11-dev), else in HYMO_CARRY_INCLUDE (.carry/include, filled by
# scripts/carry-headers.sh for machines without a package registry).
include_guard(GLOBAL)

function(hymo_header_dep target package header)
  if(TARGET ${target})
    return()
  endif()
  find_package(${package} QUIET CONFIG)
  add_library(${target} INTERFACE)
  if(package STREQUAL "nlohmann_json" AND TARGET nlohmann_json::nlohmann_json)
    target_link_libraries(${target} INTERFACE nlohmann_json::nlohmann_json)
    message(STATUS "hymo: ${package} found (package)")
    return()
  endif()
  if(package STREQUAL "CLI11" AND TARGET CLI11::CLI11)
    target_link_libraries(${target} INTERFACE CLI11::CLI11)
    message(STATUS "hymo: ${package} found (package)")
    return()
  endif()
  if(DEFINED HYMO_CARRY_INCLUDE AND EXISTS "${HYMO_CARRY_INCLUDE}/${header}")
    target_include_directories(${target} SYSTEM INTERFACE "${HYMO_CARRY_INCLUDE}")
    message(STATUS "hymo: ${package} found in ${HYMO_CARRY_INCLUDE}")
    return()
  endif()
  message(FATAL_ERROR
    "hymo: ${package} (header ${header}) was found neither as a package nor in "
    "HYMO_CARRY_INCLUDE='${HYMO_CARRY_INCLUDE}': install it (Debian: nlohmann-json3-dev, "
    "libcli11-dev) or run scripts/carry-headers.sh on a machine that has it and carry .carry/include")
endfunction()
