// The registry of passes by name, used by `// RUN:` lines in tests/passes/
// and by tools that build pipelines from names (e.g. a --passes option).
//
// To register a pass, add one entry to the list in pass_registry.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/passes/pass_manager.h"

namespace tlc::passes {

// Every registered pass, in registration order.
const std::vector<Pass>& allPasses();
// The pass called `name`, or nullptr.
const Pass* findPass(std::string_view name);
// Builds a pipeline from a comma-separated list of names ("simplify,foo").
// On an unknown or empty name returns nullopt and sets `error`.
std::optional<PassPipeline> pipelineFromNames(std::string_view names, std::string& error);

}  // namespace tlc::passes
