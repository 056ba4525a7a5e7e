// Helpers for sema tests: compile `.tl` text or files, collect IR nodes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/functor.h"
#include "compiler/sema/frontend.h"

namespace tlc::test {

struct Compiled {
  std::unique_ptr<SourceManager> sources = std::make_unique<SourceManager>();
  std::unique_ptr<DiagnosticEngine> diags = std::make_unique<DiagnosticEngine>(*sources);
  std::optional<ir::Module> module;
  uint32_t file = 0;
  std::string rendered() const { return diags->renderAll(); }
  const ir::PrimFunc& func(size_t i = 0) const { return *module->funcs.at(i); }
};

inline Compiled compileText(const std::string& text, const std::vector<Define>& defines = {},
                            const std::string& name = "test.tl", const std::string& target = "") {
  Compiled c;
  c.file = c.sources->addBuffer(name, text);
  c.module = compileSource(*c.sources, *c.diags, c.file, defines, nullptr, "", target);
  return c;
}

inline Compiled compileFile(const std::string& path, const std::vector<Define>& defines = {}) {
  Compiled c;
  std::string error;
  c.file = c.sources->addFile(path, error);
  if (c.file == 0) return c;
  c.module = compileSource(*c.sources, *c.diags, c.file, defines);
  return c;
}

// Every statement of kind T in a tree, in program order.
template <class T>
std::vector<const T*> collect(const ir::Stmt& root) {
  struct Collector : ir::IRVisitor {
    std::vector<const T*> found;
    void visit(const ir::Stmt& s) override {
      if (auto* x = ir::as<T>(s)) found.push_back(x);
      ir::IRVisitor::visit(s);
    }
  } c;
  c.visit(root);
  return c.found;
}

// Every expression of kind T in a tree.
template <class T>
std::vector<const T*> collectExprs(const ir::Stmt& root) {
  struct Collector : ir::IRVisitor {
    std::vector<const T*> found;
    void visit(const ir::Expr& e) override {
      if (auto* x = ir::as<T>(e)) found.push_back(x);
      ir::IRVisitor::visit(e);
    }
    void visit(const ir::Stmt& s) override { ir::IRVisitor::visit(s); }
  } c;
  c.visit(root);
  return c.found;
}

}  // namespace tlc::test
