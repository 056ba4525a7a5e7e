#include "compiler/backends/cuda/cubin_info.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace tlc::cuda {
namespace {

template <class T>
bool readAt(const std::string& b, uint64_t offset, T* out) {
  if (offset > b.size() || b.size() - offset < sizeof(T)) return false;
  std::memcpy(out, b.data() + offset, sizeof(T));
  return true;
}

struct Section {
  uint32_t name = 0, type = 0, link = 0;
  uint64_t offset = 0, size = 0, entsize = 0;
};

std::string stringAt(const std::string& b, const Section& strtab, uint32_t at) {
  if (at >= strtab.size || strtab.offset + at >= b.size()) return "";
  const char* s = b.data() + strtab.offset + at;
  size_t limit = std::min<uint64_t>(b.size() - (strtab.offset + at), strtab.size - at);
  return std::string(s, strnlen(s, limit));
}

constexpr uint32_t kSymtab = 2;
constexpr uint8_t kFormatSval = 4;      // EIFMT_SVAL: a 16-bit size, then that many bytes
constexpr uint8_t kAttrRegCount = 0x2f; // EIATTR_REGCOUNT: {u32 symbol, u32 registers}

}  // namespace

std::map<std::string, int> cubinRegisterCounts(const std::string& b) {
  std::map<std::string, int> out;
  if (b.size() < 64 || b.compare(0, 4, "\x7f" "ELF") != 0 || b[4] != 2) return out;  // ELFCLASS64
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!readAt(b, 0x28, &shoff) || !readAt(b, 0x3a, &shentsize) || !readAt(b, 0x3c, &shnum) ||
      !readAt(b, 0x3e, &shstrndx) || shentsize < 64)
    return out;
  std::vector<Section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t o = shoff + uint64_t(i) * shentsize;
    Section& s = sections[i];
    if (!readAt(b, o, &s.name) || !readAt(b, o + 4, &s.type) || !readAt(b, o + 24, &s.offset) ||
        !readAt(b, o + 32, &s.size) || !readAt(b, o + 40, &s.link) || !readAt(b, o + 56, &s.entsize))
      return out;
  }
  if (shstrndx >= shnum) return out;
  const Section* symtab = nullptr;
  const Section* info = nullptr;
  for (const Section& s : sections) {
    if (s.type == kSymtab) symtab = &s;
    if (stringAt(b, sections[shstrndx], s.name) == ".nv.info") info = &s;
  }
  if (!symtab || !info || symtab->link >= shnum || symtab->entsize < 24) return out;
  const Section& symstr = sections[symtab->link];
  for (uint64_t p = info->offset; p + 4 <= info->offset + info->size;) {
    uint8_t format = 0, attr = 0;
    uint16_t value = 0;
    if (!readAt(b, p, &format) || !readAt(b, p + 1, &attr) || !readAt(b, p + 2, &value)) break;
    p += 4;
    if (format != kFormatSval) continue;
    if (attr == kAttrRegCount && value >= 8) {
      uint32_t symbol = 0, registers = 0, name = 0;
      if (readAt(b, p, &symbol) && readAt(b, p + 4, &registers) && symbol < symtab->size / symtab->entsize &&
          readAt(b, symtab->offset + uint64_t(symbol) * symtab->entsize, &name))
        out[stringAt(b, symstr, name)] = int(registers);
    }
    p += value;
  }
  return out;
}

}  // namespace tlc::cuda
