// Test helpers: compile a .tl file and build it for the CPU into a shared
// object with kernel metadata (what `tlc build --target=cpu` does).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/support/diagnostics.h"

namespace tlc::test {

// A fresh directory under the build tree, removed first if it exists.
std::filesystem::path scratchDir(const std::string& name);

// Compiles a .tl file of the source tree with NAME=VALUE defines.
std::optional<ir::Module> compileTl(SourceManager& sources, DiagnosticEngine& diags, const std::string& tlFile,
                                    const std::vector<std::string>& defines);

// Builds `tlFile` (relative to the source tree) with `defines` (NAME=VALUE)
// into `outSo` (with bounds checks when asked); fails the current test with
// the diagnostics on error.
bool buildCpuModule(const std::string& tlFile, const std::vector<std::string>& defines, const std::string& outSo,
                    bool checkBounds = false);

}  // namespace tlc::test
