// The differential tester's program generator (tools/tlc_difftest): the same
// program for the same seed, every kind of program, and only programs the
// front end accepts (a rejected one is a generator or front-end bug).
#include <doctest/doctest.h>

#include <set>

#include "compiler/sema/frontend.h"
#include "tools/tlc_difftest/generator.h"

using namespace tlc;
using tlc::difftest::generateProgram;

TEST_CASE("a seed always generates the same program, and seeds differ") {
  for (uint64_t seed : {0ull, 1ull, 77ull, 123456789ull}) {
    auto a = generateProgram(seed), b = generateProgram(seed);
    CHECK(a.source == b.source);
    CHECK(a.dims == b.dims);
    CHECK(a.kind == b.kind);
  }
  std::set<std::string> texts;
  for (uint64_t seed = 1; seed <= 50; ++seed) texts.insert(generateProgram(seed).source);
  CHECK(texts.size() == 50);
}

TEST_CASE("the generator makes every kind of program, with static and dynamic sizes") {
  std::set<std::string> kinds;
  bool dynamic = false, fixed = false;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    auto p = generateProgram(seed);
    kinds.insert(p.kind);
    (p.dims.empty() ? fixed : dynamic) = true;
  }
  CHECK(kinds == std::set<std::string>{"atomic", "copy", "gemm", "map", "reduce"});
  CHECK(dynamic);
  CHECK(fixed);
}

TEST_CASE("a skipped dtype appears in no program") {
  tlc::difftest::GeneratorOptions options;
  options.skipDtypes = {"bfloat16", "float16"};
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    auto p = generateProgram(seed, options);
    INFO(p.source);
    CHECK(p.source.find("float16") == std::string::npos);
  }
}

TEST_CASE("every generated program passes the front end's checks") {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    auto p = generateProgram(seed);
    SourceManager sources;
    DiagnosticEngine diags(sources);
    uint32_t file = sources.addBuffer("seed" + std::to_string(seed) + ".tl", p.source);
    auto module = compileSource(sources, diags, file, {});
    INFO("seed ", seed, ":\n", p.source, diags.renderAll());
    REQUIRE(module);
    CHECK_FALSE(diags.hasErrors());
    REQUIRE(module->funcs.size() == 1);
    CHECK(module->funcs[0]->name == p.kernel);
    CHECK(module->funcs[0]->shapeVars.size() == p.dims.size());
  }
}
