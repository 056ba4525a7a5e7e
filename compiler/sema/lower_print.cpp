// T.print(obj, msg=""): a statement that prints a scalar or a whole buffer
// (docs/builtins.md). A scalar inside `T.Parallel` loops prints once per
// iteration, and the line names the iteration by the loops' variables; a
// whole buffer prints once per block, outside Parallel loops. Every line
// names the call's `.tl` location, so the IR node carries it as text.
#include "compiler/sema/sema.h"

namespace tlc::sema {

void Sema::lowerPrint(const ast::Expr& call, const CallArgs& args) {
  SourceLoc loc = call.loc;
  std::string message;
  if (const ast::Expr* m = args.slots[1]) {
    Value v = eval(*m);
    if (v.isError()) return;
    if (v.kind != ValueKind::String) {
      report(DiagKind::TypeMismatch, m->loc,
             "the message of `T.print` is a string literal such as `msg=\"after the gemm\"`, but this is " +
                 describeValue(v));
      return;
    }
    for (char c : v.str)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        report(DiagKind::TypeMismatch, m->loc,
               "the message of `T.print` is one line of text without control characters (a newline or tab here); "
               "print several messages instead");
        return;
      }
    message = v.str;
  }
  const ast::Expr& objExpr = *args.slots[0];
  Value obj = eval(objExpr);
  if (obj.isError()) return;
  auto p = std::make_shared<ir::PrintStmt>(nullptr, nullptr, message,
                                           sources_.name(loc.file) + ":" + std::to_string(loc.line), loc);
  if (obj.kind == ValueKind::Buffer) {
    if (parallelLoc_.known()) {
      std::string element = obj.buffer->name + "[";
      for (size_t d = 0; d < obj.buffer->shape.size(); ++d) element += (d ? ", " : "") + std::string(1, "ijklmnop"[d % 8]);
      report(DiagKind::ScopeViolation, objExpr.loc,
             "`T.print` of the whole buffer `" + obj.buffer->name +
                 "` prints once per block and cannot be inside a `T.Parallel` loop, whose body runs once per "
                 "element; move it out of the loop or print one element such as `" + element + "]`")
          .note(parallelLoc_, "the `T.Parallel` loop starts here");
      return;
    }
    p->buffer = obj.buffer;
  } else if (obj.isExpr()) {
    p->value = obj.expr;
    for (const auto& [name, var] : parallelIteration_) p->iteration.push_back({name, ir::makeVarRef(var, loc)});
  } else {
    std::string hint = obj.kind == ValueKind::Region ? "; copy the region into a buffer and print that buffer"
                       : obj.kind == ValueKind::String ? "; pass text as `msg=` next to a value"
                                                       : "";
    report(DiagKind::TypeMismatch, objExpr.loc,
           "`T.print` prints a scalar expression or a whole buffer, but this is " + describeValue(obj) + hint);
    return;
  }
  builder_->emit(p);
}

}  // namespace tlc::sema
