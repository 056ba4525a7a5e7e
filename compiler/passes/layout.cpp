#include "compiler/passes/layout.h"

#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "compiler/ir/functor.h"
#include "compiler/support/diagnostics.h"

namespace tlc::layout {

using namespace ir;

namespace {

int64_t floorDivI(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::vector<Var> makePlaceholders(size_t n, const char* prefix) {
  std::vector<Var> vars;
  for (size_t i = 0; i < n; ++i) vars.push_back(makeVar(prefix + std::to_string(i)));
  return vars;
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::vector<std::pair<Var, Expr>>& m) : map_(m) {}

 protected:
  Expr mutateVarRef(const VarRef* node, const Expr& self) override {
    for (auto& [v, e] : map_)
      if (v.get() == node->var.get()) return e;
    return self;
  }
  Expr mutateBinary(const Binary* node, const Expr& self) override {
    Expr a = mutate(node->a), b = mutate(node->b);
    if (a == node->a && b == node->b) return self;
    switch (node->op) {
      case BinaryOp::Add: return add(a, b);
      case BinaryOp::Sub: return sub(a, b);
      case BinaryOp::Mul: return mul(a, b);
      case BinaryOp::FloorDiv: return floorDiv(a, b);
      case BinaryOp::FloorMod: return floorMod(a, b);
      case BinaryOp::Min: return minExpr(a, b);
      case BinaryOp::Max: return maxExpr(a, b);
      default: break;
    }
    int64_t x, y;
    if (constInt(a, &x) && constInt(b, &y) && node->op == BinaryOp::BitXor) return makeInt(x ^ y, node->dtype);
    return makeBinary(node->op, a, b, node->loc);
  }

 private:
  const std::vector<std::pair<Var, Expr>>& map_;
};

void printIndexExpr(std::ostream& os, const Expr& e) {
  if (auto* i = as<IntImm>(e)) {
    os << i->value;
  } else if (auto* v = as<VarRef>(e)) {
    os << v->var->name;
  } else if (auto* b = as<Binary>(e)) {
    bool fn = b->op == BinaryOp::Min || b->op == BinaryOp::Max;
    if (fn) {
      os << binaryOpSpelling(b->op) << "(";
      printIndexExpr(os, b->a);
      os << ", ";
      printIndexExpr(os, b->b);
      os << ")";
    } else {
      os << "(";
      printIndexExpr(os, b->a);
      os << " " << binaryOpSpelling(b->op) << " ";
      printIndexExpr(os, b->b);
      os << ")";
    }
  } else if (auto* c = as<Cast>(e)) {
    printIndexExpr(os, c->value);
  } else {
    os << "<" << exprKindName(e->kind) << ">";
  }
}

}  // namespace

void forEachIndex(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  int64_t n = product(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat;
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = rest % shape[d];
      rest /= shape[d];
    }
    f(idx);
  }
}

int64_t evalIndex(const Expr& e, const std::vector<std::pair<Var, int64_t>>& env) {
  if (auto* i = as<IntImm>(e)) return i->value;
  if (auto* v = as<VarRef>(e)) {
    for (auto& [var, val] : env)
      if (var.get() == v->var.get()) return val;
    TLC_ICE("layout expression uses unbound variable `" + v->var->name + "`");
  }
  if (auto* c = as<Cast>(e)) return evalIndex(c->value, env);
  if (auto* s = as<Select>(e)) return evalIndex(s->cond, env) ? evalIndex(s->t, env) : evalIndex(s->f, env);
  if (auto* b = as<Binary>(e)) {
    int64_t x = evalIndex(b->a, env), y = evalIndex(b->b, env);
    switch (b->op) {
      case BinaryOp::Add: return x + y;
      case BinaryOp::Sub: return x - y;
      case BinaryOp::Mul: return x * y;
      case BinaryOp::FloorDiv: TLC_CHECK(y != 0, "division by zero in layout"); return floorDivI(x, y);
      case BinaryOp::FloorMod: TLC_CHECK(y != 0, "modulo by zero in layout"); return x - floorDivI(x, y) * y;
      case BinaryOp::Min: return std::min(x, y);
      case BinaryOp::Max: return std::max(x, y);
      case BinaryOp::Eq: return x == y;
      case BinaryOp::Ne: return x != y;
      case BinaryOp::Lt: return x < y;
      case BinaryOp::Le: return x <= y;
      case BinaryOp::Gt: return x > y;
      case BinaryOp::Ge: return x >= y;
      case BinaryOp::And: return x && y;
      case BinaryOp::Or: return x || y;
      case BinaryOp::BitAnd: return x & y;
      case BinaryOp::BitOr: return x | y;
      case BinaryOp::BitXor: return x ^ y;
      case BinaryOp::Shl: return x << y;
      case BinaryOp::Shr: return x >> y;
      case BinaryOp::Div: break;
    }
  }
  TLC_ICE(std::string("not an index expression: ") + exprKindName(e->kind));
}

Expr substitute(const Expr& e, const std::vector<std::pair<Var, Expr>>& map) {
  Substituter s(map);
  return s.mutate(e);
}

// ---------------------------------------------------------------------------
// Layout

Layout::Layout(std::vector<int64_t> inputShape, std::vector<Var> inputVars, std::vector<Expr> forward)
    : inputShape_(std::move(inputShape)), inputVars_(std::move(inputVars)), forward_(std::move(forward)) {
  TLC_CHECK(inputShape_.size() == inputVars_.size(), "one placeholder per input dimension");
  TLC_CHECK(!forward_.empty(), "a layout has at least one output");
}

Layout Layout::rowMajor(const std::vector<int64_t>& shape) {
  auto vars = makePlaceholders(shape.size(), "i");
  Expr flat = makeInt(0);
  for (size_t d = 0; d < shape.size(); ++d) flat = add(mul(flat, makeInt(shape[d])), makeVarRef(vars[d]));
  return Layout(shape, vars, {flat});
}

Layout Layout::swizzled(int64_t rows, int64_t cols, int elemBytes) {
  auto vars = makePlaceholders(2, "i");
  Expr r = makeVarRef(vars[0]), c = makeVarRef(vars[1]);
  int64_t chunkElems = 16 / elemBytes;
  TLC_CHECK(chunkElems >= 1 && (cols * elemBytes) % 16 == 0, "swizzle needs rows of whole 16-byte chunks");
  int64_t chunks = cols / chunkElems;
  Expr chunk = floorDiv(c, makeInt(chunkElems));
  Expr pattern;
  if (chunks % 8 == 0) pattern = floorMod(r, makeInt(8));
  else if (chunks == 4) pattern = floorMod(floorDiv(r, makeInt(2)), makeInt(4));
  else if (chunks == 2) pattern = floorMod(floorDiv(r, makeInt(4)), makeInt(2));
  Expr physChunk = pattern ? makeBinary(BinaryOp::BitXor, chunk, pattern) : chunk;
  Expr off = add(add(mul(r, makeInt(cols)), mul(physChunk, makeInt(chunkElems))), floorMod(c, makeInt(chunkElems)));
  return Layout({rows, cols}, vars, {off});
}

bool Layout::runSwizzleFits(int64_t cols, int elemBytes, int64_t runBytes, int64_t rowsPerPhase) {
  const int64_t rowBytes = cols * elemBytes;
  if (runBytes < elemBytes || runBytes % elemBytes || rowsPerPhase * runBytes > 128 || rowBytes <= 0 ||
      rowsPerPhase < 1 || (rowsPerPhase & (rowsPerPhase - 1)))
    return false;
  if (rowBytes % 128 == 0) return rowsPerPhase > 1;
  return 128 % rowBytes == 0 && rowBytes >= runBytes && rowsPerPhase > 128 / rowBytes;
}

Layout Layout::runSwizzled(int64_t rows, int64_t cols, int elemBytes, int64_t runBytes, int64_t rowsPerPhase) {
  TLC_CHECK(runSwizzleFits(cols, elemBytes, runBytes, rowsPerPhase), "a run swizzle that fits the rows");
  auto vars = makePlaceholders(2, "i");
  Expr r = makeVarRef(vars[0]), c = makeVarRef(vars[1]);
  const int64_t runElems = runBytes / elemBytes, rowBytes = cols * elemBytes;
  const int64_t perLine = rowBytes >= 128 ? 1 : 128 / rowBytes;
  Expr rowGroup = perLine == 1 ? r : floorDiv(r, makeInt(perLine));
  Expr pattern = floorMod(rowGroup, makeInt(rowsPerPhase / perLine));
  Expr physRun = makeBinary(BinaryOp::BitXor, floorDiv(c, makeInt(runElems)), pattern);
  Expr inRun = runElems == 1 ? makeInt(0) : floorMod(c, makeInt(runElems));
  Expr off = add(add(mul(r, makeInt(cols)), mul(physRun, makeInt(runElems))), inRun);
  return Layout({rows, cols}, vars, {off});
}

namespace {

// A row-major [rows, cols] layout whose run u of row r is stored as run `moved(u, r)`.
Layout movedRuns(int64_t rows, int64_t cols, int64_t runElems, const std::function<Expr(Expr, Expr)>& moved) {
  TLC_CHECK(runElems >= 1 && cols % runElems == 0, "rows of whole runs");
  auto vars = makePlaceholders(2, "i");
  Expr r = makeVarRef(vars[0]), c = makeVarRef(vars[1]);
  Expr physRun = moved(floorDiv(c, makeInt(runElems)), r);
  Expr inRun = runElems == 1 ? makeInt(0) : floorMod(c, makeInt(runElems));
  Expr off = add(add(mul(r, makeInt(cols)), mul(physRun, makeInt(runElems))), inRun);
  return Layout({rows, cols}, vars, {off});
}

}  // namespace

Layout Layout::runRotated(int64_t rows, int64_t cols, int64_t runElems, int64_t rowsPerGroup) {
  const int64_t runs = cols / runElems;
  return movedRuns(rows, cols, runElems, [&](Expr u, Expr r) {
    return floorMod(add(u, floorDiv(r, makeInt(rowsPerGroup))), makeInt(runs));
  });
}

Layout Layout::runXored(int64_t rows, int64_t cols, int64_t runElems, int64_t rowsPerGroup, int64_t period) {
  TLC_CHECK(period >= 1 && (period & (period - 1)) == 0 && (cols / runElems) % period == 0,
            "a power-of-two period that divides the runs of a row");
  return movedRuns(rows, cols, runElems, [&](Expr u, Expr r) {
    return makeBinary(BinaryOp::BitXor, u, floorMod(floorDiv(r, makeInt(rowsPerGroup)), makeInt(period)));
  });
}

bool Layout::chunksXorFits(int64_t rows, int64_t cols, int elemBytes, int64_t rowsPerGroup) {
  return elemBytes >= 1 && 16 % elemBytes == 0 && rowsPerGroup >= 1 && (rows * cols * elemBytes) % 128 == 0 &&
         (rowsPerGroup * cols * elemBytes) % 128 == 0;
}

Layout Layout::chunksXored(int64_t rows, int64_t cols, int elemBytes, int64_t rowsPerGroup, int64_t mask) {
  const int64_t chunkElems = 16 / elemBytes;
  TLC_CHECK(chunksXorFits(rows, cols, elemBytes, rowsPerGroup) && (mask == 1 || mask == 2 || mask == 4),
            "groups of whole runs of 8 chunks and a mask below 8");
  auto vars = makePlaceholders(2, "i");
  Expr r = makeVarRef(vars[0]), c = makeVarRef(vars[1]);
  Expr flat = add(mul(r, makeInt(cols)), c);
  Expr chunk = makeBinary(BinaryOp::BitXor, floorDiv(flat, makeInt(chunkElems)),
                          mul(floorMod(floorDiv(r, makeInt(rowsPerGroup)), makeInt(2)), makeInt(mask)));
  Expr off = add(mul(chunk, makeInt(chunkElems)), floorMod(flat, makeInt(chunkElems)));
  return Layout({rows, cols}, vars, {off});
}

Layout Layout::panels(int64_t rows, int64_t cols, int elemBytes, int64_t span, int64_t slices) {
  auto vars = makePlaceholders(2, "i");
  Expr r = makeVarRef(vars[0]), c = makeVarRef(vars[1]);
  int64_t chunkElems = 16 / elemBytes, panelElems = span / elemBytes, chunks = span / 16;
  TLC_CHECK((span == 128 || span == 64 || span == 32) && (cols * elemBytes) % span == 0,
            "panels of 32, 64 or 128 bytes that divide the rows");
  TLC_CHECK(slices == 1 || (slices > 1 && rows % (64 * slices) == 0), "16-row slices that fill whole wgmmas");
  // The stored row: the same 16-row chunk offset, in the wgmmas' chunk order.
  Expr row = r;
  if (slices > 1) {
    Expr q = floorDiv(r, makeInt(16)), w = floorDiv(q, makeInt(slices));
    Expr chunk = add(mul(add(mul(floorDiv(w, makeInt(4)), makeInt(slices)), floorMod(q, makeInt(slices))), makeInt(4)),
                     floorMod(w, makeInt(4)));
    row = add(mul(chunk, makeInt(16)), floorMod(r, makeInt(16)));
  }
  // The swizzle pattern is the same for the stored row (16-row chunks keep r % 8).
  Expr inPanel = floorMod(c, makeInt(panelElems));
  Expr pattern = floorMod(floorDiv(r, makeInt(8 / chunks)), makeInt(chunks));
  Expr physChunk = makeBinary(BinaryOp::BitXor, floorDiv(inPanel, makeInt(chunkElems)), pattern);
  Expr off = add(add(mul(floorDiv(c, makeInt(panelElems)), makeInt(rows * panelElems)), mul(row, makeInt(panelElems))),
                 add(mul(physChunk, makeInt(chunkElems)), floorMod(c, makeInt(chunkElems))));
  return Layout({rows, cols}, vars, {off});
}

int64_t Layout::inputSize() const { return product(inputShape_); }

std::vector<int64_t> Layout::apply(const std::vector<int64_t>& index) const {
  TLC_CHECK(index.size() == inputShape_.size(), "index rank must match the layout");
  if (isTabulated()) {
    int64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d) flat = flat * inputShape_[d] + index[d];
    return table_.at(flat);
  }
  std::vector<std::pair<Var, int64_t>> env;
  for (size_t d = 0; d < index.size(); ++d) env.push_back({inputVars_[d], index[d]});
  std::vector<int64_t> out;
  for (auto& f : forward_) out.push_back(evalIndex(f, env));
  return out;
}

std::vector<Expr> Layout::applyExpr(const std::vector<Expr>& index) const {
  TLC_CHECK(!isTabulated(), "a tabulated layout has no index expressions");
  TLC_CHECK(index.size() == inputVars_.size(), "index rank must match the layout");
  std::vector<std::pair<Var, Expr>> map;
  for (size_t d = 0; d < index.size(); ++d) map.push_back({inputVars_[d], index[d]});
  std::vector<Expr> out;
  for (auto& f : forward_) out.push_back(substitute(f, map));
  return out;
}

std::vector<int64_t> Layout::outputShape() const {
  std::vector<int64_t> shape;
  forEachIndex(inputShape_, [&](const std::vector<int64_t>& idx) {
    auto out = apply(idx);
    if (shape.empty()) shape.assign(out.size(), 0);
    for (size_t d = 0; d < out.size(); ++d) shape[d] = std::max(shape[d], out[d] + 1);
  });
  return shape;
}

bool Layout::isInjective() const {
  std::set<std::vector<int64_t>> seen;
  bool ok = true;
  forEachIndex(inputShape_, [&](const std::vector<int64_t>& idx) {
    if (!seen.insert(apply(idx)).second) ok = false;
  });
  return ok;
}

bool Layout::isBijective() const {
  if (!isInjective()) return false;
  auto out = outputShape();
  for (auto& o : std::vector<int64_t>(out))
    if (o < 0) return false;
  return product(out) == inputSize();
}

Layout Layout::compose(const Layout& inner) const {
  auto innerOut = inner.outputShape();
  TLC_CHECK(innerOut.size() == inputShape_.size(), "composed layouts must agree on rank");
  if (isTabulated() || inner.isTabulated()) {
    Layout result(inner.inputShape_, inner.inputVars_, {makeInt(0)});
    forEachIndex(inner.inputShape_, [&](const std::vector<int64_t>& idx) { result.table_.push_back(apply(inner.apply(idx))); });
    return result;
  }
  std::vector<Expr> innerExprs(inner.forward_.begin(), inner.forward_.end());
  return Layout(inner.inputShape_, inner.inputVars_, applyExpr(innerExprs));
}

std::optional<Layout> Layout::inverse() const {
  if (!isBijective()) return std::nullopt;
  auto outShape = outputShape();
  auto vars = makePlaceholders(outShape.size(), "p");
  Layout inv(outShape, vars, {makeInt(0)});
  inv.table_.assign(product(outShape), {});
  forEachIndex(inputShape_, [&](const std::vector<int64_t>& idx) {
    auto out = apply(idx);
    int64_t flat = 0;
    for (size_t d = 0; d < out.size(); ++d) flat = flat * outShape[d] + out[d];
    inv.table_[flat] = idx;
  });
  return inv;
}

std::string Layout::str() const {
  std::ostringstream os;
  os << "Layout[";
  for (size_t d = 0; d < inputShape_.size(); ++d) os << (d ? ", " : "") << inputShape_[d];
  os << "] (";
  for (size_t d = 0; d < inputVars_.size(); ++d) os << (d ? ", " : "") << inputVars_[d]->name;
  os << ") -> ";
  if (isTabulated()) {
    os << "table{";
    for (size_t i = 0; i < table_.size() && i < 16; ++i) {
      os << (i ? " " : "") << "(";
      for (size_t d = 0; d < table_[i].size(); ++d) os << (d ? "," : "") << table_[i][d];
      os << ")";
    }
    os << (table_.size() > 16 ? " ...}" : "}");
    return os.str();
  }
  os << "(";
  for (size_t d = 0; d < forward_.size(); ++d) {
    if (d) os << ", ";
    printIndexExpr(os, forward_[d]);
  }
  os << ")";
  return os.str();
}

// ---------------------------------------------------------------------------
// Fragment

Fragment::Fragment(std::vector<int64_t> inputShape, std::vector<Var> inputVars, Expr thread, std::vector<Expr> registers,
                   int64_t threadCount, int64_t replicate, Var rep)
    : inputShape_(std::move(inputShape)), inputVars_(std::move(inputVars)), thread_(std::move(thread)),
      registers_(std::move(registers)), threadCount_(threadCount), replicate_(replicate), rep_(std::move(rep)) {
  TLC_CHECK(inputShape_.size() == inputVars_.size(), "one placeholder per input dimension");
  TLC_CHECK(replicate_ >= 1, "replicate >= 1");
  if (!rep_) rep_ = makeVar("rep");
  if (registers_.empty()) registers_.push_back(makeInt(0));
}

Expr Fragment::gridWarp(const Expr& row, const Expr& col, int64_t warpsM, int64_t warpsN, bool colMajor) {
  return colMajor ? add(mul(col, makeInt(warpsM)), row) : add(mul(row, makeInt(warpsN)), col);
}

Fragment Fragment::mmaAccumulator(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN, bool colMajor, int64_t vector) {
  const int64_t atomCols = 4 * vector;
  TLC_CHECK((vector == 1 || vector == 2 || vector == 4) && m % (16 * warpsM) == 0 && n % (atomCols * warpsN) == 0,
            "mma tile must be whole 16 x 4V atoms per warp");
  auto vars = makePlaceholders(2, "i");
  Expr i = makeVarRef(vars[0]), j = makeVarRef(vars[1]);
  int64_t wm = m / warpsM, wn = n / warpsN, atomsN = wn / atomCols;
  Expr ii = floorMod(i, makeInt(wm)), jj = floorMod(j, makeInt(wn));
  Expr warp = gridWarp(floorDiv(i, makeInt(wm)), floorDiv(j, makeInt(wn)), warpsM, warpsN, colMajor);
  Expr lane = add(mul(floorMod(ii, makeInt(8)), makeInt(4)), floorDiv(floorMod(jj, makeInt(atomCols)), makeInt(vector)));
  Expr thread = add(mul(warp, makeInt(32)), lane);
  Expr atom = add(mul(floorDiv(ii, makeInt(16)), makeInt(atomsN)), floorDiv(jj, makeInt(atomCols)));
  Expr inAtom = add(mul(floorDiv(floorMod(ii, makeInt(16)), makeInt(8)), makeInt(vector)), floorMod(jj, makeInt(vector)));
  Expr reg = add(mul(atom, makeInt(2 * vector)), inAtom);
  return Fragment({m, n}, vars, thread, {reg}, warpsM * warpsN * 32);
}

Fragment Fragment::mfmaAccumulator(int64_t m, int64_t n, int64_t wavesM, int64_t wavesN, int64_t block) {
  TLC_CHECK((block == 16 || block == 32) && m % (block * wavesM) == 0 && n % (block * wavesN) == 0,
            "MFMA accumulator tile must be whole blocks per wavefront");
  auto vars = makePlaceholders(2, "i");
  Expr i = makeVarRef(vars[0]), j = makeVarRef(vars[1]);
  const int64_t wm = m / wavesM, wn = n / wavesN, blocksN = wn / block, groups = 64 / block, regs = block * block / 64;
  Expr ii = floorMod(i, makeInt(wm)), jj = floorMod(j, makeInt(wn));
  Expr i0 = floorMod(ii, makeInt(block));
  Expr wave = add(mul(floorDiv(i, makeInt(wm)), makeInt(wavesN)), floorDiv(j, makeInt(wn)));
  Expr lane = add(mul(floorMod(floorDiv(i0, makeInt(4)), makeInt(groups)), makeInt(block)), floorMod(jj, makeInt(block)));
  Expr thread = add(mul(wave, makeInt(64)), lane);
  Expr blk = add(mul(floorDiv(ii, makeInt(block)), makeInt(blocksN)), floorDiv(jj, makeInt(block)));
  Expr inBlock = add(mul(floorDiv(i0, makeInt(4 * groups)), makeInt(4)), floorMod(i0, makeInt(4)));
  Expr reg = add(mul(blk, makeInt(regs)), inBlock);
  return Fragment({m, n}, vars, thread, {reg}, wavesM * wavesN * 64);
}

Fragment Fragment::rowMajorStrided(const std::vector<int64_t>& shape, int64_t threads, int64_t vector) {
  auto vars = makePlaceholders(shape.size(), "i");
  Expr flat = makeInt(0);
  for (size_t d = 0; d < shape.size(); ++d) flat = add(mul(flat, makeInt(shape[d])), makeVarRef(vars[d]));
  Expr chunk = floorDiv(flat, makeInt(vector));
  Expr thread = floorMod(chunk, makeInt(threads));
  Expr reg = add(mul(floorDiv(chunk, makeInt(threads)), makeInt(vector)), floorMod(flat, makeInt(vector)));
  return Fragment(shape, vars, thread, {reg}, threads);
}

int64_t Fragment::registersPerThread() const {
  int64_t maxReg = 0;
  forEachIndex(inputShape_, [&](const std::vector<int64_t>& idx) { maxReg = std::max(maxReg, registerOf(idx) + 1); });
  return maxReg;
}

int64_t Fragment::threadOf(const std::vector<int64_t>& index, int64_t rep) const {
  std::vector<std::pair<Var, int64_t>> env;
  for (size_t d = 0; d < index.size(); ++d) env.push_back({inputVars_[d], index[d]});
  env.push_back({rep_, rep});
  return evalIndex(thread_, env);
}

int64_t Fragment::registerOf(const std::vector<int64_t>& index) const {
  std::vector<std::pair<Var, int64_t>> env;
  for (size_t d = 0; d < index.size(); ++d) env.push_back({inputVars_[d], index[d]});
  TLC_CHECK(registers_.size() == 1, "registerOf needs a flattened register index");
  return evalIndex(registers_[0], env);
}

Expr Fragment::threadExprAt(const std::vector<Expr>& index, const Expr& rep) const {
  std::vector<std::pair<Var, Expr>> map;
  for (size_t d = 0; d < index.size(); ++d) map.push_back({inputVars_[d], index[d]});
  map.push_back({rep_, rep});
  return substitute(thread_, map);
}

Expr Fragment::registerExprAt(const std::vector<Expr>& index) const {
  std::vector<std::pair<Var, Expr>> map;
  for (size_t d = 0; d < index.size(); ++d) map.push_back({inputVars_[d], index[d]});
  return substitute(registers_[0], map);
}

bool Fragment::isValid(std::string* why) const {
  int64_t regs = registersPerThread();
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> owner;
  bool ok = true;
  forEachIndex(inputShape_, [&](const std::vector<int64_t>& idx) {
    if (!ok) return;
    int64_t r = registerOf(idx);
    for (int64_t k = 0; k < replicate_; ++k) {
      int64_t t = threadOf(idx, k);
      if (t < 0 || t >= threadCount_ || r < 0 || r >= regs) {
        ok = false;
        if (why) *why = "thread " + std::to_string(t) + " / register " + std::to_string(r) + " out of range";
        return;
      }
      auto [it, fresh] = owner.insert({{t, r}, idx});
      if (!fresh) {
        ok = false;
        if (why) *why = "thread " + std::to_string(t) + " register " + std::to_string(r) + " holds two elements";
        return;
      }
    }
  });
  return ok;
}

Fragment Fragment::compose(const Layout& view) const {
  TLC_CHECK(!view.isTabulated(), "a fragment composes with an expression layout");
  std::vector<Expr> outs = view.forward();
  TLC_CHECK(outs.size() == inputShape_.size(), "the view's output rank must match the fragment");
  std::vector<std::pair<Var, Expr>> map;
  for (size_t d = 0; d < outs.size(); ++d) map.push_back({inputVars_[d], outs[d]});
  std::vector<Expr> regs;
  for (auto& r : registers_) regs.push_back(substitute(r, map));
  return Fragment(view.inputShape(), view.inputVars(), substitute(thread_, map), regs, threadCount_, replicate_, rep_);
}

Fragment Fragment::replicateOver(int64_t times) const {
  Var rep = makeVar("rep");
  Expr inner = floorMod(makeVarRef(rep), makeInt(replicate_));
  Expr outer = floorDiv(makeVarRef(rep), makeInt(replicate_));
  Expr t = substitute(thread_, {{rep_, inner}});
  t = add(t, mul(outer, makeInt(threadCount_)));
  return Fragment(inputShape_, inputVars_, t, registers_, threadCount_ * times, replicate_ * times, rep);
}

std::vector<int64_t> Fragment::inverseTable() const {
  int64_t regs = registersPerThread();
  std::vector<int64_t> table(threadCount_ * regs, -1);
  int64_t flat = 0;
  forEachIndex(inputShape_, [&](const std::vector<int64_t>& idx) {
    int64_t r = registerOf(idx);
    for (int64_t k = 0; k < replicate_; ++k) table.at(threadOf(idx, k) * regs + r) = flat;
    ++flat;
  });
  return table;
}

bool Fragment::operator==(const Fragment& o) const {
  if (inputShape_ != o.inputShape_ || threadCount_ != o.threadCount_ || replicate_ != o.replicate_) return false;
  return inverseTable() == o.inverseTable();
}

std::string Fragment::str() const {
  std::ostringstream os;
  os << "Fragment[";
  for (size_t d = 0; d < inputShape_.size(); ++d) os << (d ? ", " : "") << inputShape_[d];
  os << "] threads=" << threadCount_;
  if (replicate_ > 1) os << " replicate=" << replicate_;
  os << " (";
  for (size_t d = 0; d < inputVars_.size(); ++d) os << (d ? ", " : "") << inputVars_[d]->name;
  os << ") -> thread ";
  printIndexExpr(os, thread_);
  os << ", register ";
  printIndexExpr(os, registers_[0]);
  return os.str();
}

}  // namespace tlc::layout
