// Argument binding and the entry point of the interpreter.
#include "compiler/interp/interpreter.h"

#include <new>
#include <optional>
#include <string>

#include "compiler/interp/machine.h"
#include "compiler/interp/program.h"

namespace tlc::interp {
namespace {

using namespace tlc::ir;

std::string shapeString(const std::vector<int64_t>& s) { return formatIndex(s); }

// Binds arguments to the machine: tensors, scalars, dynamic dimensions.
bool bindArguments(const Program& prog, Machine& m, std::vector<ArgValue>& args, DiagnosticEngine& diags) {
  const PrimFunc& f = *prog.func;
  if (args.size() != f.params.size()) {
    diags.report(DiagKind::InterpArgumentMismatch, f.loc,
                 "`" + f.name + "` takes " + std::to_string(f.params.size()) + " argument(s) but " +
                     std::to_string(args.size()) + " were given");
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    ArgValue& a = args[i];
    if (p.buffer) {
      if (a.kind != ArgValue::Kind::Tensor || !a.tensor) {
        diags.report(DiagKind::InterpArgumentMismatch, p.loc, "parameter `" + p.name + "` needs a tensor argument");
        ok = false;
        continue;
      }
      if (a.tensor->dtype != p.buffer->dtype) {
        diags.report(DiagKind::InterpArgumentMismatch, p.loc,
                     "the tensor given for `" + p.name + "` holds " + std::string(dtypeName(a.tensor->dtype)) +
                         " but the parameter is " + std::string(dtypeName(p.buffer->dtype)));
        ok = false;
        continue;
      }
      if (a.tensor->shape.size() != p.buffer->shape.size()) {
        diags.report(DiagKind::InterpArgumentMismatch, p.loc,
                     "the tensor given for `" + p.name + "` has " + std::to_string(a.tensor->shape.size()) +
                         " dimension(s) but the parameter has " + std::to_string(p.buffer->shape.size()));
        ok = false;
        continue;
      }
      m.bindTensor(prog.paramSlots[i], a.tensor);
    } else {
      if (a.kind == ArgValue::Kind::Tensor) {
        diags.report(DiagKind::InterpArgumentMismatch, p.loc, "parameter `" + p.name + "` is a scalar, not a tensor");
        ok = false;
        continue;
      }
      Value v = a.kind == ArgValue::Kind::Int ? intValue(a.intValue) : floatValue(a.floatValue);
      DType from = a.kind == ArgValue::Kind::Int ? DType::Int64 : DType::Float64;
      m.setVar(prog.paramSlots[i], castValue(v, from, p.scalar->dtype));
    }
  }
  if (!ok) return false;

  // Dynamic dimensions: bound by the first tensor dimension declared as exactly that variable.
  struct Binder {
    int64_t value;
    size_t param;
    size_t dim;
  };
  std::vector<std::optional<Binder>> bound(f.shapeVars.size());
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    if (!p.buffer) continue;
    for (size_t d = 0; d < p.buffer->shape.size(); ++d) {
      auto* ref = as<VarRef>(p.buffer->shape[d]);
      if (!ref) continue;
      for (size_t v = 0; v < f.shapeVars.size(); ++v) {
        if (f.shapeVars[v] != ref->var) continue;
        int64_t actual = args[i].tensor->shape[d];
        if (!bound[v]) {
          bound[v] = Binder{actual, i, d};
          m.setVar(prog.shapeVarSlots[v], castValue(intValue(actual), DType::Int64, ref->var->dtype));
        } else if (bound[v]->value != actual) {
          const Param& first = f.params[bound[v]->param];
          diags
              .report(DiagKind::InterpShapeMismatch, p.loc,
                      "dimension `" + ref->var->name + "` is " + std::to_string(actual) + " in `" + p.name +
                          "` (dimension " + std::to_string(d) + ") but " + std::to_string(bound[v]->value) +
                          " in `" + first.name + "` (dimension " + std::to_string(bound[v]->dim) + ")")
              .note(first.loc, "`" + ref->var->name + "` was bound from `" + first.name + "` here");
          ok = false;
        }
      }
    }
  }
  for (size_t v = 0; v < f.shapeVars.size(); ++v) {
    if (!bound[v]) {
      diags.report(DiagKind::InterpArgumentMismatch, f.shapeVars[v]->loc.known() ? f.shapeVars[v]->loc : f.loc,
                   "dynamic dimension `" + f.shapeVars[v]->name +
                       "` is not the size of any tensor parameter's dimension, so no argument determines it");
      ok = false;
    }
  }
  if (!ok) return false;

  // Every declared dimension must now agree with the tensor given.
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    if (!p.buffer) continue;
    const BufferSlot& bs = prog.buffers[prog.paramSlots[i]];
    for (size_t d = 0; d < bs.shape.size(); ++d) {
      int64_t want;
      try {
        Value v = m.eval(*bs.shape[d]);
        want = isFloat(bs.shape[d]->dtype) ? static_cast<int64_t>(v.f) : v.i;
      } catch (const Abort&) {
        return false;
      }
      int64_t actual = args[i].tensor->shape[d];
      if (want != actual) {
        diags.report(DiagKind::InterpShapeMismatch, p.loc,
                     "the tensor given for `" + p.name + "` has shape " + shapeString(args[i].tensor->shape) +
                         " but dimension " + std::to_string(d) + " of the parameter must be " +
                         std::to_string(want));
        ok = false;
      }
    }
  }
  return ok;
}

}  // namespace

bool interpret(const ir::PrimFunc& func, std::vector<ArgValue>& args, DiagnosticEngine& diags, std::FILE* printTo) {
  int errorsBefore = diags.errorCount();
  std::optional<Program> prog = compileProgram(func, diags);
  if (!prog) return false;
  Machine m(*prog, diags, printTo);
  if (!bindArguments(*prog, m, args, diags)) return false;
  try {
    m.exec(*prog->body);
  } catch (const Abort&) {
    return false;
  } catch (const std::bad_alloc&) {
    diags.report(DiagKind::InterpUnsupported, func.loc, "the interpreter ran out of host memory running `" + func.name + "`");
    return false;
  }
  return diags.errorCount() == errorsBefore;
}

}  // namespace tlc::interp
