// Integrity of built CPU modules (the shared objects `tlc build --target=cpu`
// writes, and the kernel cache's copies of them), checked before dlopen.
//
// A tlc shared object ends with a 48-byte trailer after the ELF bytes:
//   SHA-256 of every byte before the trailer (32 bytes),
//   the number of those bytes (uint64, little-endian),
//   the magic "tlcimg1\0" (8 bytes).
// The dynamic loader ignores bytes past the ELF's section headers, so the
// trailer changes nothing about how the library loads.
//
// checkCpuModuleImage guarantees that the file is exactly what tlc wrote
// (no truncation, no changed byte) and that its ELF headers are consistent:
// every program-header segment and the section-header table lie inside the
// file, for this machine's ELF class, byte order and architecture. It does
// not make a hostile file safe: anyone can write a valid trailer, and dlopen
// runs a library's initializers. Load only modules from sources you trust.
// C++17; shared by the compiler and the host runtime.
#pragma once

#include <cstddef>
#include <string>

namespace tlc {

inline constexpr size_t kModuleTrailerBytes = 48;

// The trailer for `elf` (size bytes).
std::string moduleTrailer(const void* elf, size_t size);
// Appends the trailer to the file at `path`; false and *error on failure.
bool appendModuleTrailer(const std::string& path, std::string* error);

// Checks a whole module image (ELF bytes and trailer); false and *error
// (a sentence fragment: "it is truncated: ...") when it is not intact.
bool checkCpuModuleImage(const void* image, size_t size, std::string* error);

}  // namespace tlc
