# Writes the device helper header as a C++ raw string literal (kTlcCudaHeader).
file(READ ${INPUT} content)
file(WRITE ${OUTPUT} "static const char kTlcCudaHeader[] = R\"TLCHDR(${content})TLCHDR\";\n")
