// libFuzzer target over the tile IR's text form: any byte string is parsed
// as a `.tir` file and verified. The parser and the verifier must report
// errors as diagnostics and never crash, hang, throw, or trip a sanitizer.
// When the input is accepted, the module must print, the printed text must
// parse and verify again and print the same, and the simplifier (a walker
// over every node) must keep it valid.
//
// Built only in the fuzzing configuration (clang-19, -DTLC_ENABLE_FUZZER=ON);
// scripts/fuzz.sh builds and runs it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "compiler/ir/ir_parser.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/simplify.h"

namespace {

void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tlc::SourceManager sources;
  tlc::DiagnosticEngine diags(sources);
  uint32_t file = sources.addBuffer("fuzz.tir", text);
  // An internal error (tlc::InternalError) escapes as an uncaught exception,
  // which libFuzzer reports as a crash: it is a bug.
  std::optional<tlc::ir::Module> module = tlc::ir::parseIRModule(sources, diags, file);
  (void)diags.renderAll();
  if (module.has_value() == diags.hasErrors()) fail("parseIRModule: nullopt iff errors were reported", diags.renderAll());
  if (!module) return 0;

  std::string printed = tlc::ir::printModule(*module);
  tlc::DiagnosticEngine again(sources);
  uint32_t printedFile = sources.addBuffer("printed.tir", printed);
  std::optional<tlc::ir::Module> reparsed = tlc::ir::parseIRModule(sources, again, printedFile);
  if (!reparsed) fail("the printed module does not parse again:", again.renderAll() + printed);
  if (tlc::ir::printModule(*reparsed) != printed) fail("printing is not stable:", printed);

  tlc::ir::Module simplified = tlc::passes::simplify(*module);
  tlc::DiagnosticEngine verify(sources);
  if (!tlc::ir::verifyModule(simplified, verify))
    fail("the simplified module does not verify:", verify.renderAll() + tlc::ir::printModule(simplified));
  return 0;
}
