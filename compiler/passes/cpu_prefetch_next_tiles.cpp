#include "compiler/passes/cpu_prefetch_next_tiles.h"

#include <optional>

#include "compiler/ir/functor.h"
#include "compiler/ir/linear_form.h"
#include "compiler/ir/module_rewrite.h"
#include "compiler/ir/substitute.h"
#include "compiler/passes/cpu_index_math.h"
#include "compiler/passes/cpu_intrinsics.h"
#include "compiler/passes/simplify.h"

namespace tlc::cpu {

using namespace ir;

namespace {

constexpr size_t kMaxStreams = 4;
constexpr int64_t kMaxInnerValues = 64;  // values of inner loop variables enumerated

// A 2-D region of a global tensor: rows x cols elements from `start`, rows
// along dimension rowDim (-1: a single row), columns along the last dimension.
struct Stream {
  Buffer buffer;
  std::vector<Expr> start;
  int rowDim = -1;
  int64_t rows = 1, cols = 0;
};

bool mentions(const Expr& e, const VarNode* v) {
  struct Finder : IRVisitor {
    const VarNode* var;
    bool found = false;
    void visitVarRef(const VarRef* r) override { found = found || r->var.get() == var; }
  } f;
  f.var = v;
  f.visit(e);
  return f.found;
}

bool regionMentions(const Region& r, const VarNode* v) {
  for (const Range& rg : r.ranges)
    if (mentions(rg.min, v) || mentions(rg.extent, v)) return true;
  return false;
}

// The stream of a copy source region, when its extents are constants and at
// most its last two dimensions with extent > 1 (of which the last is the row).
std::optional<Stream> streamOf(const Region& r) {
  Stream s;
  s.buffer = r.buffer;
  size_t n = r.ranges.size();
  if (n == 0) return std::nullopt;
  for (size_t d = 0; d < n; ++d) {
    int64_t e;
    if (!constInt(passes::simplifyExpr(r.ranges[d].extent), &e) || e <= 0) return std::nullopt;
    s.start.push_back(passes::simplifyExpr(r.ranges[d].min));
    if (d + 1 == n) {
      s.cols = e;
    } else if (e > 1) {
      if (d + 2 != n) return std::nullopt;
      s.rowDim = int(d);
      s.rows = e;
    }
  }
  return s;
}

// Whether b's start is a's start moved by `delta` along dimension `dim` and
// equal elsewhere.
bool continues(const Stream& a, const Stream& b, size_t dim, int64_t delta) {
  for (size_t d = 0; d < a.start.size(); ++d) {
    std::optional<int64_t> diff = constantDifference(b.start[d], a.start[d]);
    if (!diff || *diff != (d == dim ? delta : 0)) return false;
  }
  return true;
}

// Merges b into a when b continues a along its rows or its columns.
bool merge(Stream& a, const Stream& b) {
  if (a.buffer != b.buffer || a.start.size() != b.start.size()) return false;
  size_t last = a.start.size() - 1;
  if (a.rows == b.rows && a.rowDim == b.rowDim && continues(a, b, last, a.cols)) {
    a.cols += b.cols;
    return true;
  }
  if (a.cols == b.cols && a.rowDim >= 0 && a.rowDim == b.rowDim && continues(a, b, size_t(a.rowDim), a.rows)) {
    a.rows += b.rows;
    return true;
  }
  return false;
}

// Whether b lies inside a (same tensor, provably).
bool contains(const Stream& a, const Stream& b) {
  if (a.buffer != b.buffer || a.start.size() != b.start.size() || a.rowDim != b.rowDim) return false;
  size_t last = a.start.size() - 1;
  for (size_t d = 0; d < a.start.size(); ++d) {
    std::optional<int64_t> diff = constantDifference(b.start[d], a.start[d]);
    if (!diff || *diff < 0) return false;
    if (d == last && *diff + b.cols > a.cols) return false;
    if (int(d) == a.rowDim && *diff + b.rows > a.rows) return false;
    if (d != last && int(d) != a.rowDim && *diff != 0) return false;
  }
  return true;
}

// The next-iteration source regions of a loop body's global-to-block copies.
class Collector {
 public:
  explicit Collector(const ForStmt* loop) : loop_(loop) {
    next_[loop->var.get()] = add(makeVarRef(loop->var, loop->loc), makeInt(1, loop->var->dtype));
  }
  std::vector<Stream> streams;
  bool ok = true;

  void walk(const Stmt& s) {
    if (!s || !ok) return;
    switch (s->kind) {
      case StmtKind::Seq:
        for (const Stmt& c : as<SeqStmt>(s)->stmts) walk(c);
        return;
      case StmtKind::If: {
        auto* i = as<IfStmt>(s);
        walk(i->thenBody);
        walk(i->elseBody);
        return;
      }
      case StmtKind::For: {
        auto* f = as<ForStmt>(s);
        int64_t lo, ext;
        if (f->forKind != ForKind::Serial || !constInt(f->min, &lo) || !constInt(f->extent, &ext) ||
            ext > kMaxInnerValues) {
          return;  // copies under other loops are not followed
        }
        for (int64_t v = lo; v < lo + ext; ++v) {
          next_[f->var.get()] = makeInt(v, f->var->dtype);
          walk(f->body);
        }
        next_.erase(f->var.get());
        return;
      }
      case StmtKind::Copy: {
        auto* c = as<CopyStmt>(s);
        if (c->src.buffer->scope != MemScope::Global || c->dst.buffer->scope == MemScope::Global) return;
        if (!regionMentions(c->src, loop_->var.get())) return;
        Region r = c->src;
        for (Range& rg : r.ranges) {
          rg.min = substitute(rg.min, next_);
          rg.extent = substitute(rg.extent, next_);
        }
        std::optional<Stream> st = streamOf(r);
        if (!st) return;
        for (Stream& prev : streams)
          if (contains(prev, *st) || merge(prev, *st)) return;
        streams.push_back(*st);
        return;
      }
      default:
        return;
    }
  }

 private:
  const ForStmt* loop_;
  VarMap next_;
};

bool isGemmCall(const Stmt& s) {
  auto* e = as<EvaluateStmt>(s);
  if (!e) return false;
  auto* c = as<Call>(e->value);
  return c && c->callee == cpu_intrinsics::kGemm;
}

class Prefetching : public IRMutator {
 protected:
  Stmt mutateFor(const ForStmt* f, const Stmt& self) override {
    Stmt inner = IRMutator::mutateFor(f, self);
    if (f->forKind != ForKind::Serial && f->forKind != ForKind::Pipelined) return inner;
    auto* loop = as<ForStmt>(inner);
    int64_t trips;
    if (constInt(loop->extent, &trips) && trips <= 1) return inner;  // no next iteration
    std::vector<Stmt> body = seqStmts(loop->body);
    int gemmAt = -1;
    for (size_t i = 0; i < body.size(); ++i) {
      if (!isGemmCall(body[i])) continue;
      if (gemmAt >= 0) return inner;  // one gemm to spread the prefetches over
      gemmAt = int(i);
    }
    if (gemmAt < 0) return inner;
    Collector col(loop);
    for (size_t i = 0; i < body.size(); ++i)
      if (int(i) != gemmAt) col.walk(body[i]);
    // Streams that another one covers (a copy of the whole tile and, on
    // another path, of its slices) are dropped.
    std::vector<Stream> kept;
    for (size_t i = 0; i < col.streams.size(); ++i) {
      bool covered = false;
      for (size_t j = 0; j < col.streams.size() && !covered; ++j)
        covered = j != i && contains(col.streams[j], col.streams[i]) && (j < i || !contains(col.streams[i], col.streams[j]));
      if (!covered) kept.push_back(col.streams[i]);
    }
    col.streams = std::move(kept);
    if (col.streams.empty()) return inner;
    if (col.streams.size() > kMaxStreams) col.streams.resize(kMaxStreams);

    SourceLoc loc = body[size_t(gemmAt)]->loc;
    DType t = loop->var->dtype;
    Expr next = add(makeVarRef(loop->var, loc), makeInt(1, t));
    Expr enabled = lt(next, add(loop->min, loop->extent->dtype == t ? loop->extent : makeCast(t, loop->extent)));
    std::vector<Stmt> out(body.begin(), body.begin() + gemmAt);
    for (const Stream& s : col.streams) {
      std::vector<Expr> strides = rowMajorStrides(s.buffer);
      Expr address = makeCall(cpu_intrinsics::kAddressOf, {makeLoad(s.buffer, s.start, loc)}, DType::UInt64, loc);
      Expr rowStride = s.rowDim >= 0 ? toI64(strides[size_t(s.rowDim)]) : makeInt(0, DType::Int64);
      out.push_back(std::make_shared<const EvaluateStmt>(
          makeCall(cpu_intrinsics::kPrefetchStream,
                   {enabled, address, makeInt(s.rows, DType::Int64), rowStride, makeInt(s.cols, DType::Int64)},
                   DType::Int32, loc),
          loc));
    }
    out.insert(out.end(), body.begin() + gemmAt, body.end());
    body = std::move(out);
    auto f2 = std::make_shared<ForStmt>(loop->var, loop->min, loop->extent, loop->forKind,
                                        makeSeq(std::move(body), loop->loc), loop->loc);
    f2->copyPipelineAttributes(*loop);
    return f2;
  }
};

}  // namespace

Module prefetchNextTiles(const Module& m) { return mutateBodies<Prefetching>(m); }

}  // namespace tlc::cpu
