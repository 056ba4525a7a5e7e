# Headers split into parts: the lines `#include "BASE_NAME.h"` of BASE.h name
# its parts, files beside it (runtime/cuda/tlc_cuda.h and its tlc_cuda_*.h).
# Where such a header is embedded as one text (NVRTC's in-memory header, the
# CUDA emulator, HIP), each of those lines is replaced by its part's text after
# the part's `#pragma once` line (the part's own comment stays out), so the
# embedded text is the header as it would be written in one file. Used by the
# embed scripts (cmake -P) and by the CMakeLists that run them (DEPENDS).

# tlc_header_parts(HEADER OUT): the part files HEADER includes, in order.
function(tlc_header_parts header out)
  get_filename_component(dir ${header} DIRECTORY)
  get_filename_component(base ${header} NAME_WE)
  file(STRINGS ${header} lines REGEX "^#include \"${base}_[A-Za-z0-9_]+\\.h\"$")
  set(parts)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"(.*)\"$" "${dir}/\\1" part "${line}")
    list(APPEND parts ${part})
  endforeach()
  if(NOT CMAKE_SCRIPT_MODE_FILE)
    # A part added or removed changes the DEPENDS lists: configure again.
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
  endif()
  set(${out} ${parts} PARENT_SCOPE)
endfunction()

# tlc_read_header(HEADER OUT): HEADER's text with its parts inlined.
function(tlc_read_header header out)
  file(READ ${header} text)
  tlc_header_parts(${header} parts)
  foreach(part IN LISTS parts)
    get_filename_component(name ${part} NAME)
    file(READ ${part} body)
    string(FIND "${body}" "#pragma once\n" at)
    if(at LESS 0)
      message(FATAL_ERROR "${part}: no `#pragma once` line")
    endif()
    math(EXPR at "${at} + 13")
    string(SUBSTRING "${body}" ${at} -1 body)
    string(REPLACE "\n#include \"${name}\"\n" "\n${body}" text "${text}")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
