# The Python package's tests (python/, docs/python.md): numpy against the CPU
# target. They need a python3 with numpy (scripts/install-deps.sh installs
# python3-numpy and python3-venv): the first python3 on PATH that imports
# numpy is used, then /usr/bin/python3. Without one the tests still register
# and fail, saying what to install.
set(TLC_TEST_PYTHON "")
find_program(_tlc_path_python python3)
foreach(candidate ${_tlc_path_python} /usr/bin/python3)
  if(candidate AND EXISTS ${candidate} AND NOT TLC_TEST_PYTHON)
    execute_process(COMMAND ${candidate} -c "import numpy, venv" RESULT_VARIABLE _tlc_has_numpy
                    OUTPUT_QUIET ERROR_QUIET)
    if(_tlc_has_numpy EQUAL 0)
      set(TLC_TEST_PYTHON ${candidate})
    endif()
  endif()
endforeach()

set(_tlc_py_dir ${CMAKE_CURRENT_SOURCE_DIR}/python)
set(_tlc_py_scratch ${CMAKE_BINARY_DIR}/tests/python-scratch)
set(_tlc_py_env
  "TLC_COMPILER=$<TARGET_FILE:tlc>"
  "TLC_RUNTIME_LIBRARY=$<TARGET_FILE:tlc_runtime>"
  "TLC_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
if(TLC_TEST_PYTHON)
  foreach(suite examples errors)
    add_test(NAME python_${suite} COMMAND ${TLC_TEST_PYTHON} -m unittest -v test_${suite}
             WORKING_DIRECTORY ${_tlc_py_dir})
    set_tests_properties(python_${suite} PROPERTIES TIMEOUT 900 ENVIRONMENT
      "${_tlc_py_env};TLC_TEST_SCRATCH=${_tlc_py_scratch}/${suite};TLC_CACHE_DIR=${_tlc_py_scratch}/${suite}/cache")
  endforeach()
  add_test(NAME python_pip_install COMMAND bash ${_tlc_py_dir}/pip_install.sh ${TLC_TEST_PYTHON}
           ${CMAKE_SOURCE_DIR} ${_tlc_py_scratch}/pip)
  set_tests_properties(python_pip_install PROPERTIES TIMEOUT 600 ENVIRONMENT
    "${_tlc_py_env};TLC_CACHE_DIR=${_tlc_py_scratch}/pip-cache")
else()
  add_test(NAME python_package COMMAND sh -c
           "echo 'no python3 with numpy and venv: run scripts/install-deps.sh (python3-numpy, python3-venv)' >&2; exit 1")
endif()
