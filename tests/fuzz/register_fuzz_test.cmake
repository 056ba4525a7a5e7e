# Registers the ctest test `fuzz_frontend` in the regular build: it runs
# scripts/fuzz.sh, which configures and builds the fuzzer in its own clang-19
# build directory (inside this build tree) and fuzzes the front end for about
# a minute. Skipped when clang++-19 is not installed.
find_program(TLC_FUZZ_CLANGXX clang++-19)
if(TLC_FUZZ_CLANGXX)
  add_test(NAME fuzz_frontend COMMAND ${CMAKE_SOURCE_DIR}/scripts/fuzz.sh ${CMAKE_BINARY_DIR}/fuzz)
  # The first run builds the front end with sanitizers; later runs only fuzz.
  set_tests_properties(fuzz_frontend PROPERTIES TIMEOUT 1800)
else()
  message(STATUS "clang++-19 not found: the fuzz_frontend test is not registered")
endif()
