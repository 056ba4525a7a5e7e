// compileSource and the stdlib search path; see frontend.h.
#include "compiler/sema/frontend.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "compiler/sema/sema.h"

#ifndef TLC_STDLIB_DIR
#define TLC_STDLIB_DIR ""
#endif

namespace tlc {

std::optional<ir::Module> compileSource(SourceManager& sources, DiagnosticEngine& diags, uint32_t file,
                                        const std::vector<Define>& defines, FrontendTuning* tuning,
                                        const std::string& onlyKernel, const std::string& target) {
  int before = diags.errorCount();
  sema::Sema sema(sources, diags, defines);
  sema.tuning_ = tuning;
  sema.onlyKernel_ = onlyKernel;
  sema.target_ = target;
  std::optional<ir::Module> module = sema.run(file);
  if (diags.errorCount() > before) return std::nullopt;
  return module;
}

std::vector<std::string> stdlibSearchPath(const SourceManager& sources, uint32_t importingFile) {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("TLC_STDLIB_PATH")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t colon = s.find(':', start);
      if (colon == std::string::npos) colon = s.size();
      if (colon > start) dirs.push_back(s.substr(start, colon - start));
      start = colon + 1;
    }
  }
  if (importingFile != 0) {
    fs::path p = fs::path(sources.name(importingFile)).parent_path();
    dirs.push_back(p.empty() ? "." : p.string());
  }
  if (std::string(TLC_STDLIB_DIR).size()) dirs.push_back(TLC_STDLIB_DIR);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    dirs.push_back((fs::path(exe).parent_path().parent_path() / "share" / "tlc" / "stdlib").string());
  }
  return dirs;
}

}  // namespace tlc
