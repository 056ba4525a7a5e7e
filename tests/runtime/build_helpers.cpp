#include "tests/runtime/build_helpers.h"

#include <doctest/doctest.h>

#include "compiler/driver/cpu_target.h"
#include "compiler/sema/frontend.h"

namespace tlc::test {

std::filesystem::path scratchDir(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(TLC_BINARY_DIR) / "tests" / "runtime-scratch" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

std::optional<ir::Module> compileTl(SourceManager& sources, DiagnosticEngine& diags, const std::string& tlFile,
                                    const std::vector<std::string>& defines) {
  std::string error;
  uint32_t file = sources.addFile(std::string(TLC_SOURCE_DIR) + "/" + tlFile, error);
  if (file == 0) return std::nullopt;
  std::vector<Define> ds;
  for (const std::string& d : defines) ds.push_back(Define{d.substr(0, d.find('=')), d.substr(d.find('=') + 1)});
  return compileSource(sources, diags, file, ds);
}

bool buildCpuModule(const std::string& tlFile, const std::vector<std::string>& defines, const std::string& outSo,
                    bool checkBounds) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto module = compileTl(sources, diags, tlFile, defines);
  INFO(diags.renderAll());
  REQUIRE(module.has_value());
  cpu::CpuOptions options;
  options.checkBounds = checkBounds;
  int rc = driver::buildForCpu(*module, outSo, options, diags);
  INFO(diags.renderAll());
  REQUIRE(rc == 0);
  return rc == 0;
}

}  // namespace tlc::test
