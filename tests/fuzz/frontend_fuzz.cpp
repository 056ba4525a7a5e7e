// libFuzzer target over the whole front end: any byte string is compiled as
// a `.tl` file (lex, parse, check, lower). The front end must report errors
// as diagnostics and never crash, hang, throw, or trip a sanitizer. When the
// input compiles, its IR must print and pass the verifier, and the AST dump
// and the rendered diagnostics must be producible.
//
// Built only in the fuzzing configuration (clang-19, -DTLC_ENABLE_FUZZER=ON);
// scripts/fuzz.sh builds and runs it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/parser/ast_dump.h"
#include "compiler/parser/parser.h"
#include "compiler/sema/frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);

  // The syntax phases alone, including the AST dump.
  {
    tlc::SourceManager sources;
    tlc::DiagnosticEngine diags(sources);
    uint32_t file = sources.addBuffer("fuzz.tl", text);
    auto module = tlc::parseModule(sources, diags, file);
    if (!module) std::abort();
    (void)tlc::dumpAst(*module);
    (void)diags.renderAll();
  }

  // The whole front end. An internal error (tlc::InternalError) escapes as an
  // uncaught exception, which libFuzzer reports as a crash: it is a bug.
  tlc::SourceManager sources;
  tlc::DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("fuzz.tl", text);
  std::optional<tlc::ir::Module> ir = tlc::compileSource(sources, diags, file, {});
  (void)diags.renderAll();
  if (ir.has_value() == diags.hasErrors()) std::abort();  // nullopt iff errors were reported
  if (ir) {
    (void)tlc::ir::printModule(*ir);
    tlc::DiagnosticEngine verifyDiags(sources);
    if (!tlc::ir::verifyModule(*ir, verifyDiags)) {
      // Lowering produced IR that breaks the IR's own invariants.
      std::fputs(verifyDiags.renderAll().c_str(), stderr);
      std::abort();
    }
  }
  return 0;
}
