# Helpers that give every drkernel target the same shape.

# drk_library(NAME SOURCES ... DEPS ...): a static library whose headers are included
# from the repository root ("base/result.h").
function(drk_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  target_compile_options(${name} PRIVATE -Wall -Wextra)
endfunction()

# drk_test(NAME SOURCES ... DEPS ...): a doctest executable registered with CTest.
# LibTorch defines its own CHECK macro (docs/pitfalls.md #1), so tests never use doctest's short
# names: they include tests/doctest_drk.h and use DRK_CHECK / DRK_REQUIRE.
function(drk_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
  # A test may also use tests/ (cmake/DrkLayers.cmake).
  set_target_properties(${name} PROPERTIES DRK_TEST TRUE)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_compile_definitions(${name} PRIVATE DOCTEST_CONFIG_NO_SHORT_MACRO_NAMES)
  target_link_libraries(${name} PRIVATE doctest::doctest ${ARG_DEPS})
  # Function names in the stack a crashing test prints (tests/doctest_main.cpp).
  target_link_options(${name} PRIVATE -rdynamic)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "DRK_SOURCE_DIR=${PROJECT_SOURCE_DIR};DRK_BINARY_DIR=${PROJECT_BINARY_DIR}")
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
  # A GPU test binary that found no device exits 77 (tests/support/device_skip.h): skipped, not passed.
  if("gpu" IN_LIST ARG_LABELS)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()
