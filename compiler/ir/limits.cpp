#include "compiler/ir/limits.h"

#include <algorithm>
#include <unordered_map>

namespace tlc::ir {

std::vector<const ExprNode*> exprOperands(const ExprNode& e) {
  std::vector<const ExprNode*> out;
  auto add = [&](const Expr& x) {
    if (x) out.push_back(x.get());
  };
  switch (e.kind) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::VarRef: break;
    case ExprKind::Binary:
      add(static_cast<const Binary&>(e).a);
      add(static_cast<const Binary&>(e).b);
      break;
    case ExprKind::Unary: add(static_cast<const Unary&>(e).a); break;
    case ExprKind::Cast: add(static_cast<const Cast&>(e).value); break;
    case ExprKind::Select: {
      const auto& s = static_cast<const Select&>(e);
      add(s.cond);
      add(s.t);
      add(s.f);
      break;
    }
    case ExprKind::Call:
      for (const Expr& a : static_cast<const Call&>(e).args) add(a);
      break;
    case ExprKind::Load:
      for (const Expr& i : static_cast<const Load&>(e).indices) add(i);
      break;
  }
  return out;
}

int exprHeight(const Expr& e) {
  if (!e) return 0;
  std::unordered_map<const ExprNode*, int> height;
  // Post-order over an explicit stack: a node is finished once all its
  // operands are.
  std::vector<const ExprNode*> stack{e.get()};
  while (!stack.empty()) {
    const ExprNode* n = stack.back();
    if (height.count(n)) {
      stack.pop_back();
      continue;
    }
    int h = 1;
    bool ready = true;
    for (const ExprNode* op : exprOperands(*n)) {
      auto it = height.find(op);
      if (it == height.end()) {
        stack.push_back(op);
        ready = false;
      } else {
        h = std::max(h, it->second + 1);
      }
    }
    if (ready) {
      height[n] = h;
      stack.pop_back();
    }
  }
  return height[e.get()];
}

}  // namespace tlc::ir
