# Writes the device helper header, its parts inlined, as a C++ raw string
# literal (kTlcCudaHeader).
include(${CMAKE_CURRENT_LIST_DIR}/../../../cmake/TlcHeaderParts.cmake)
tlc_read_header(${INPUT} content)
file(WRITE ${OUTPUT} "static const char kTlcCudaHeader[] = R\"TLCHDR(${content})TLCHDR\";\n")
