// Name resolution: lexical scopes of a `.tl` module.
//
// A Scope maps names to Symbols and has a parent. Lookups walk outward. A
// scope marked as a frame root (a kernel's or a macro's outermost scope)
// bounds redefinition checks: names bound with `=` are immutable, so binding
// a name already bound in the same frame is an error, while a macro body may
// freely reuse its caller's names. The outermost scope of a module holds its
// macros, kernels and imports; builtins (the `T.` namespace and its
// prefix-free spellings) are resolved after every scope failed.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/sema/value.h"

namespace tlc::sema {

struct Symbol {
  Value value;
  SourceLoc declLoc;
  // A `T.alloc_var` scalar: `value.buffer` holds it; reads of the name load
  // element 0 and assignments store it.
  bool isMutableVar = false;
};

class Scope {
 public:
  Scope(Scope* parent, bool frameRoot) : parent_(parent), frameRoot_(frameRoot) {}

  Scope* parent() const { return parent_; }
  // The innermost binding of `name` in this scope or an enclosing one.
  const Symbol* lookup(const std::string& name) const;
  // The binding of `name` within the current frame (stops after the frame root).
  const Symbol* lookupInFrame(const std::string& name) const;
  const Symbol* lookupLocal(const std::string& name) const;
  void define(const std::string& name, Symbol symbol) { symbols_[name] = std::move(symbol); }
  void erase(const std::string& name) { symbols_.erase(name); }
  // Appends the names bound in this scope (not its parents).
  void names(std::vector<std::string>& out) const {
    for (const auto& [n, s] : symbols_) out.push_back(n);
  }

 private:
  Scope* parent_;
  bool frameRoot_;
  std::unordered_map<std::string, Symbol> symbols_;
};

}  // namespace tlc::sema
