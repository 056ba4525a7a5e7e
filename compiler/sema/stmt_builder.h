// Collects the IR statements of one block in order.
//
// A scalar binding (`x = expr`) scopes over the rest of its block, so a
// `let` marks a point in the list; finish() nests everything after each mark
// inside a LetStmt. Assumes the caller hands statements in program order;
// guarantees the result is a single statement (an empty Seq for an empty
// block).
#pragma once

#include <vector>

#include "compiler/ir/ir.h"

namespace tlc::sema {

class StmtBuilder {
 public:
  void emit(ir::Stmt s) {
    if (s) items_.push_back(Item{std::move(s), nullptr, nullptr, {}});
  }
  void let(ir::Var var, ir::Expr value, SourceLoc loc) {
    items_.push_back(Item{nullptr, std::move(var), std::move(value), loc});
  }

  ir::Stmt finish(SourceLoc loc) {
    std::vector<ir::Stmt> tail;  // in reverse order
    for (auto it = items_.rbegin(); it != items_.rend(); ++it) {
      if (it->stmt) {
        tail.push_back(it->stmt);
        continue;
      }
      std::vector<ir::Stmt> body(tail.rbegin(), tail.rend());
      ir::Stmt let = std::make_shared<const ir::LetStmt>(it->var, it->value, ir::makeSeq(std::move(body), it->loc),
                                                         it->loc);
      tail.assign(1, let);
    }
    items_.clear();
    return ir::makeSeq(std::vector<ir::Stmt>(tail.rbegin(), tail.rend()), loc);
  }

 private:
  struct Item {
    ir::Stmt stmt;
    ir::Var var;
    ir::Expr value;
    SourceLoc loc;
  };
  std::vector<Item> items_;
};

}  // namespace tlc::sema
