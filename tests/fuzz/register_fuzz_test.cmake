# Registers the ctest tests `fuzz_frontend` and `fuzz_tir` in the regular
# build: each runs scripts/fuzz.sh, which configures and builds its fuzzer in
# one clang-19 build directory (inside this build tree) and fuzzes briefly
# (the two budgets together stay under two minutes of fuzzing). The tests
# share that directory, so they never run at the same time. Skipped when
# clang++-19 is not installed.
find_program(TLC_FUZZ_CLANGXX clang++-19)
if(TLC_FUZZ_CLANGXX)
  foreach(target_seconds frontend:60 tir:40)
    string(REPLACE ":" ";" pair ${target_seconds})
    list(GET pair 0 target)
    list(GET pair 1 seconds)
    add_test(NAME fuzz_${target}
             COMMAND ${CMAKE_SOURCE_DIR}/scripts/fuzz.sh --target=${target} --seconds=${seconds} ${CMAKE_BINARY_DIR}/fuzz)
    # The first run builds the libraries with sanitizers; later runs only fuzz.
    set_tests_properties(fuzz_${target} PROPERTIES TIMEOUT 1800 RESOURCE_LOCK tlc_fuzz_build)
  endforeach()
else()
  message(STATUS "clang++-19 not found: the fuzz_frontend and fuzz_tir tests are not registered")
endif()
