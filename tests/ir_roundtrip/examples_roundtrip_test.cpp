// Every kernel under examples/ lowers to tile IR that verifies, prints, and
// parses back to an identical print; so does its IR after simplify and after
// the whole CPU lowering pipeline (whose output uses target intrinsics).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/cpu_pipeline.h"
#include "compiler/passes/simplify.h"
#include "compiler/sema/frontend.h"

using namespace tlc;

namespace fs = std::filesystem;

namespace {

std::string reprint(const std::string& text, const std::string& name, bool lowered = false) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer(name, text);
  ir::IRParseOptions options;
  options.verifyOptions.lowered = lowered;
  auto m = ir::parseIRModule(sources, diags, file, options);
  INFO("reparsing:\n" << text << "\n" << diags.renderAll());
  REQUIRE(m.has_value());
  return ir::printModule(*m);
}

}  // namespace

TEST_CASE("every example's tile IR round-trips through its text") {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(TLC_SOURCE_DIR) / "examples"))
    if (entry.path().extension() == ".tl") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const fs::path& path : files) {
    INFO("example: " << path.string());
    SourceManager sources;
    DiagnosticEngine diags(sources);
    std::string error;
    uint32_t file = sources.addFile(path.string(), error);
    REQUIRE(file != 0);
    auto module = compileSource(sources, diags, file, {});
    INFO(diags.renderAll());
    REQUIRE(module.has_value());
    CHECK(ir::verifyModule(*module, diags));

    std::string text = ir::printModule(*module);
    CHECK(reprint(text, path.filename().string() + ".tir") == text);

    // With locations the text names the .tl file and still parses.
    ir::PrintOptions withLocs;
    withLocs.locations = &sources;
    std::string located = ir::printModule(*module, withLocs);
    CHECK(located.find("loc(\"") != std::string::npos);
    CHECK(reprint(located, "located.tir") == text);

    ir::Module simplified = passes::simplify(*module);
    CHECK(ir::verifyModule(simplified, diags));
    std::string simple = ir::printModule(simplified);
    CHECK(reprint(simple, "simplified.tir") == simple);

    passes::PassContext ctx(diags);
    auto lowered = cpu::lowerForCpu(*module, ctx, cpu::CpuLoweringOptions{});
    REQUIRE(lowered.has_value());
    std::string low = ir::printModule(*lowered);
    CHECK(reprint(low, "cpu.tir", /*lowered=*/true) == low);
  }
}
