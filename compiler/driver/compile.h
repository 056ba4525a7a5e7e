// Loading a program for the driver: a .tl file through the front end, or a
// .tir file through the tile-IR text parser. Owns the sources and the
// diagnostics of one compilation and prints them to stderr.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/sema/frontend.h"
#include "compiler/support/diagnostics.h"

namespace tlc::driver {

class Compilation {
 public:
  Compilation();
  ~Compilation();  // prints any diagnostics not yet printed

  SourceManager& sources() { return sources_; }
  DiagnosticEngine& diags() { return diags_; }

  // Parses "NAME=VALUE" strings; reports bad-define for malformed ones.
  std::optional<std::vector<Define>> parseDefines(const std::vector<std::string>& raw);
  // Reads `path`; returns its file id or 0 after reporting file-not-readable.
  uint32_t load(const std::string& path);
  // .tir files are parsed as tile IR (defines must be empty); anything else is
  // compiled as .tl source. nullopt iff errors were reported.
  // With `tuning`, the front end also reports tuning spaces (frontend.h).
  // With `onlyKernel`, a .tl file's other kernels are not lowered (frontend.h).
  std::optional<ir::Module> compile(const std::string& path, const std::vector<std::string>& defines,
                                    FrontendTuning* tuning = nullptr, const std::string& onlyKernel = "");
  // The text of every file read (the program and the modules it imports),
  // in the order read; command-line buffers are left out.
  std::vector<std::string> sourceTexts() const;
  // The target the program is compiled for, which `T.target(...)` tests
  // ("cuda:sm_90a", "hip:gfx942", "cpu", "interp"; empty: none).
  void setTarget(std::string target) { target_ = std::move(target); }
  // Keeps the diagnostics instead of printing them (each candidate of
  // `tlc tune` is compiled quietly; its errors become its note).
  void setQuiet() { quiet_ = true; }
  // The first error's message ("" when none).
  std::string firstError() const;

  // Prints the diagnostics reported so far (once each).
  void flush();
  bool hasErrors() const { return diags_.hasErrors(); }

 private:
  SourceManager sources_;
  DiagnosticEngine diags_;
  size_t printed_ = 0;
  bool quiet_ = false;
  std::string target_;
};

bool endsWith(const std::string& s, const std::string& suffix);

}  // namespace tlc::driver
