#include "compiler/support/module_image.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "compiler/support/file_io.h"
#include "compiler/support/sha256.h"

namespace tlc {
namespace {

constexpr char kMagic[8] = {'t', 'l', 'c', 'i', 'm', 'g', '1', '\0'};

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
constexpr uint16_t kHostMachine = EM_NONE;
#endif

// offset + count * entrySize <= size, without overflow.
bool fits(uint64_t offset, uint64_t count, uint64_t entrySize, uint64_t size) {
  if (offset > size) return false;
  if (entrySize != 0 && count > (size - offset) / entrySize) return false;
  return true;
}

bool checkElf(const unsigned char* p, size_t size, std::string* error) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(p, ELFMAG, SELFMAG) != 0) {
    *error = "it is not an ELF shared object";
    return false;
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, p, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_ident[EI_VERSION] != EV_CURRENT) {
    *error = "it is not a 64-bit little-endian ELF file";
    return false;
  }
  if (eh.e_type != ET_DYN) {
    *error = "it is an ELF file but not a shared object";
    return false;
  }
  if (kHostMachine != EM_NONE && eh.e_machine != kHostMachine) {
    *error = "it is a shared object for another architecture (ELF machine " + std::to_string(eh.e_machine) + ")";
    return false;
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || !fits(eh.e_phoff, eh.e_phnum, sizeof(Elf64_Phdr), size)) {
    *error = "it is truncated or damaged: its program headers lie past the end of the file";
    return false;
  }
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, p + eh.e_phoff + uint64_t(i) * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD && (ph.p_filesz > ph.p_memsz || !fits(ph.p_offset, 1, ph.p_filesz, size))) {
      *error = "it is truncated or damaged: segment " + std::to_string(i) + " needs bytes up to offset " +
               std::to_string(ph.p_offset + ph.p_filesz) + " but the file has " + std::to_string(size);
      return false;
    }
  }
  if (eh.e_shnum != 0) {
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || !fits(eh.e_shoff, eh.e_shnum, sizeof(Elf64_Shdr), size)) {
      *error = "it is truncated or damaged: its section headers lie past the end of the file";
      return false;
    }
    for (uint16_t i = 0; i < eh.e_shnum; ++i) {
      Elf64_Shdr sh;
      std::memcpy(&sh, p + eh.e_shoff + uint64_t(i) * sizeof sh, sizeof sh);
      if (sh.sh_type != SHT_NOBITS && !fits(sh.sh_offset, 1, sh.sh_size, size)) {
        *error = "it is truncated or damaged: section " + std::to_string(i) + " lies past the end of the file";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::string moduleTrailer(const void* elf, size_t size) {
  std::array<uint8_t, 32> digest = sha256(elf, size);
  std::string t(reinterpret_cast<const char*>(digest.data()), digest.size());
  for (int i = 0; i < 8; ++i) t += static_cast<char>((uint64_t(size) >> (8 * i)) & 0xff);
  t.append(kMagic, sizeof kMagic);
  return t;
}

bool appendModuleTrailer(const std::string& path, std::string* error) {
  std::string bytes;
  if (readRegularFile(path, &bytes, error) != ReadStatus::Ok) return false;
  std::string trailer = moduleTrailer(bytes.data(), bytes.size());
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open '" + path + "' to finish it: " + std::strerror(errno);
    return false;
  }
  ssize_t w;
  do w = ::write(fd, trailer.data(), trailer.size());
  while (w < 0 && errno == EINTR);
  bool ok = w == static_cast<ssize_t>(trailer.size());
  if (!ok) *error = "cannot write '" + path + "': " + (w < 0 ? std::strerror(errno) : "short write");
  if (::close(fd) != 0 && ok) {
    *error = "cannot write '" + path + "': " + std::strerror(errno);
    ok = false;
  }
  return ok;
}

bool checkCpuModuleImage(const void* image, size_t size, std::string* error) {
  const unsigned char* p = static_cast<const unsigned char*>(image);
  if (size < kModuleTrailerBytes || std::memcmp(p + size - sizeof kMagic, kMagic, sizeof kMagic) != 0) {
    if (!checkElf(p, size, error)) return false;
    *error = "it has no tlc integrity trailer: it was not built by `tlc build --target=cpu` (or by an older "
             "tlc), or it was modified afterwards (stripped, truncated)";
    return false;
  }
  size_t elfSize = size - kModuleTrailerBytes;
  uint64_t recorded = 0;
  for (int i = 0; i < 8; ++i) recorded |= uint64_t(p[elfSize + 32 + i]) << (8 * i);
  if (recorded != elfSize) {
    *error = "it is damaged: its trailer records " + std::to_string(recorded) + " bytes but " +
             std::to_string(elfSize) + " precede it";
    return false;
  }
  if (!checkElf(p, elfSize, error)) return false;
  if (moduleTrailer(p, elfSize) != std::string(reinterpret_cast<const char*>(p + elfSize), kModuleTrailerBytes)) {
    *error = "it is damaged: its bytes do not match the checksum written when it was built";
    return false;
  }
  return true;
}

}  // namespace tlc
