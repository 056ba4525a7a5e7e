#include "compiler/ir/gemm_flops.h"

#include <cmath>

#include "compiler/ir/functor.h"

namespace tlc::ir {

namespace {

class FlopCounter : public IRVisitor {
 public:
  explicit FlopCounter(const std::function<std::optional<double>(const Expr&)>& eval) : eval_(eval) {}
  double flops = 0;
  bool ok = true, sawGemm = false;

  void visitKernel(const KernelStmt* k) override {
    double saved = trips_;
    for (const Expr& g : k->grid) trips_ *= value(g);
    IRVisitor::visitKernel(k);
    trips_ = saved;
  }
  void visitFor(const ForStmt* f) override {
    double saved = trips_;
    trips_ *= value(f->extent);
    IRVisitor::visitFor(f);
    trips_ = saved;
  }
  void visitGemm(const GemmStmt* g) override {
    sawGemm = true;
    double a = size(g->a), b = size(g->b), c = size(g->c);
    if (c <= 0) return;
    double k = std::round(std::sqrt(a * b / c));
    flops += 2.0 * c * k * trips_;
  }

 private:
  double value(const Expr& e) {
    auto v = eval_(e);
    if (!v) ok = false;
    return v ? *v : 0;
  }
  double size(const Region& r) {
    double n = 1;
    for (auto& rg : r.ranges) n *= value(rg.extent);
    return n;
  }
  const std::function<std::optional<double>(const Expr&)>& eval_;
  double trips_ = 1;
};

}  // namespace

std::optional<double> gemmFlops(const Stmt& s, const std::function<std::optional<double>(const Expr&)>& eval) {
  FlopCounter counter(eval);
  counter.visit(s);
  if (!counter.sawGemm || !counter.ok) return std::nullopt;
  return counter.flops;
}

}  // namespace tlc::ir
