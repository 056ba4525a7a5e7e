#include "compiler/driver/compile.h"

#include <unistd.h>

#include <iostream>

#include "compiler/ir/ir_parser.h"
#include "compiler/ir/verifier.h"

namespace tlc::driver {

Compilation::Compilation() : diags_(sources_) {}

Compilation::~Compilation() { flush(); }

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<std::vector<Define>> Compilation::parseDefines(const std::vector<std::string>& raw) {
  std::vector<Define> out;
  bool ok = true;
  for (const std::string& d : raw) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == d.size()) {
      diags_.report(DiagKind::BadDefine, {},
                    "malformed `-D " + d + "`: write `-D NAME=VALUE`, e.g. `-D block_M=64`");
      ok = false;
      continue;
    }
    out.push_back(Define{d.substr(0, eq), d.substr(eq + 1)});
  }
  if (!ok) return std::nullopt;
  return out;
}

uint32_t Compilation::load(const std::string& path) {
  std::string error;
  uint32_t id = sources_.addFile(path, error);
  if (id == 0) diags_.report(DiagKind::FileNotReadable, {}, error);
  return id;
}

std::vector<std::string> Compilation::sourceTexts() const {
  std::vector<std::string> out;
  for (uint32_t id = 1; sources_.hasFile(id); ++id)
    if (!sources_.name(id).empty() && sources_.name(id)[0] != '<') out.push_back(sources_.text(id));
  return out;
}

std::string Compilation::firstError() const {
  for (const Diagnostic& d : diags_.diagnostics())
    if (d.severity == Severity::Error) return d.message;
  return "";
}

std::optional<ir::Module> Compilation::compile(const std::string& path, const std::vector<std::string>& rawDefines,
                                               FrontendTuning* tuning, const std::string& onlyKernel) {
  auto defines = parseDefines(rawDefines);
  if (!defines) return std::nullopt;
  uint32_t file = load(path);
  if (file == 0) return std::nullopt;
  if (endsWith(path, ".tir")) {
    if (!defines->empty()) {
      diags_.report(DiagKind::BadDefine, {},
                    "`-D` does not apply to a .tir file: its compile-time parameters are already bound");
      return std::nullopt;
    }
    auto module = ir::parseIRModule(sources_, diags_, file);
    if (!module || diags_.hasErrors()) return std::nullopt;
    if (!ir::verifyModule(*module, diags_)) return std::nullopt;
    return module;
  }
  auto module = compileSource(sources_, diags_, file, *defines, tuning, onlyKernel, target_);
  if (diags_.hasErrors()) return std::nullopt;
  return module;
}

void Compilation::flush() {
  if (quiet_) return;
  static const bool color = isatty(2) && getenv("NO_COLOR") == nullptr;
  const auto& all = diags_.diagnostics();
  for (; printed_ < all.size(); ++printed_) std::cerr << diags_.render(all[printed_], color);
}

}  // namespace tlc::driver
