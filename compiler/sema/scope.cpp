#include "compiler/sema/scope.h"

namespace tlc::sema {

const Symbol* Scope::lookupLocal(const std::string& name) const {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : &it->second;
}

const Symbol* Scope::lookup(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_)
    if (const Symbol* sym = s->lookupLocal(name)) return sym;
  return nullptr;
}

const Symbol* Scope::lookupInFrame(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_) {
    if (const Symbol* sym = s->lookupLocal(name)) return sym;
    if (s->frameRoot_) break;
  }
  return nullptr;
}

std::string describeValue(const Value& v) {
  switch (v.kind) {
    case ValueKind::Error: return "an erroneous value";
    case ValueKind::Expr: return std::string("a scalar of type ") + std::string(dtypeName(v.expr->dtype));
    case ValueKind::Buffer: return std::string("a ") + ir::memScopeName(v.buffer->scope) + " buffer";
    case ValueKind::Region: return "a buffer region";
    case ValueKind::DType: return "a dtype";
    case ValueKind::Tuple: return "a tuple";
    case ValueKind::String: return "a string";
    case ValueKind::None: return "None";
    case ValueKind::Module: return "a module";
    case ValueKind::Macro: return "a function";
    case ValueKind::Builtin: return "a builtin";
    case ValueKind::Layout: return "a layout";
  }
  return "a value";
}

}  // namespace tlc::sema
