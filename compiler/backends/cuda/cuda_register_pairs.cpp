// Register nests computed two elements at a time. A Parallel nest over a
// register tile whose body stores into the tile a float16 (or bfloat16)
// value built by +, - and * (after any lets) is emitted with its vector loop
// stepping over pairs of adjacent lanes: per lane, the lets and the leaves
// of the arithmetic (loads, calls, conversions: everything that is not
// +, -, * of the 16-bit type) are computed as usual into two-element
// arrays; then the arithmetic runs once on the pair (__half2 / bfloat162
// instructions: HADD2, HMUL2, ...), and the pair's lanes are stored. Each
// such instruction gives the two values the scalar ones would (the same
// correctly rounded operation per lane), in half the instructions: the
// dequantizing loops of low-bit gemms are bound by these.
//
// Their nibbles are read a 32-bit word at a time: a 4-bit value unpacked
// from a byte of a shared tile reads the aligned word holding the byte and
// takes the nibble at its index in the word. A lane of an mma operand holds
// one byte out of every four of its rows (bytes t, t + 4, ...), so the words
// of a row are the same for the lanes of a quad and lie side by side for the
// unrolled loop: NVVM loads four of them at once (one 16-byte LDS where there
// were four byte loads), and one PRMT takes the lane's byte out of its word.
#include "compiler/backends/cuda/cuda_kernel_emitter.h"
#include "compiler/ir/substitute.h"
#include "compiler/passes/simplify.h"

namespace tlc::cuda {

using namespace ir;

namespace {

bool pairArithmetic(const Expr& e, DType t) {
  auto* b = as<Binary>(e);
  return b && b->dtype == t && b->a->dtype == t && b->b->dtype == t &&
         (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul);
}

// The leaves of the pair arithmetic in `e`, left to right.
void pairLeaves(const Expr& e, DType t, std::vector<Expr>* leaves) {
  if (!pairArithmetic(e, t)) {
    leaves->push_back(e);
    return;
  }
  auto* b = as<Binary>(e);
  pairLeaves(b->a, t, leaves);
  pairLeaves(b->b, t, leaves);
}

bool isVar(const Expr& e, const Var& v) {
  auto* r = as<VarRef>(e);
  return r && r->var.get() == v.get();
}

}  // namespace

std::optional<KernelEmitter::PackedWordRead> KernelEmitter::packedWordRead(const Call* c) {
  if (c->callee != "unpack_uint4" && c->callee != "unpack_int4" && c->callee != "unpack_fp4") return std::nullopt;
  auto* l = as<Load>(c->args[0]);
  if (!l || (l->buffer->dtype != DType::UInt8 && l->buffer->dtype != DType::Int8) || l->indices.empty())
    return std::nullopt;
  if ((!preloaded_.empty() && preloadedName(l)) || (vecNest_ && vecNest_->loadOf.count(l))) return std::nullopt;
  auto it = bufs_.find(l->buffer.get());
  if (it == bufs_.end()) return std::nullopt;
  const BufferInfo& info = it->second;
  // Every aligned word of the tile is whole: its base and versions lie at
  // multiples of 4 bytes, and so do its rows (padded or swizzled, in runs of
  // at least 4 bytes).
  int64_t row = 0;
  bool rowsAligned = l->indices.size() == 1 ||
                     (constInt(l->buffer->shape.back(), &row) && (row + info.rowPad) % 4 == 0 && row % 4 == 0);
  if (info.place != Placement::Shared || info.fragment || info.tile || info.sharedOffset % 4 != 0 ||
      (info.versions > 1 && info.elems % 4 != 0) || !rowsAligned || (info.layout && info.layoutRun % 4 != 0))
    return std::nullopt;
  std::vector<Expr> idx = l->indices;
  Expr col = idx.back();
  idx.back() = passes::simplifyExpr(mul(floorDiv(col, makeInt(4, col->dtype)), makeInt(4, col->dtype)));
  Expr nibble = makeCast(DType::Int32, c->args[1]);
  Expr byte = makeCast(DType::Int32, floorMod(col, makeInt(4, col->dtype)));
  Expr index = passes::simplifyExpr(add(floorMod(nibble, makeInt(2)), mul(byte, makeInt(2))));
  return PackedWordRead{"(*reinterpret_cast<const unsigned*>(&" + access(l->buffer, idx) + "))", expr(index)};
}

std::string KernelEmitter::callExpr(const Call* c) {
  if (auto w = packedWordRead(c))
    return "tlc::" + c->callee + "<" + typeName(c->dtype) + ">(" + w->word + ", (int)(" + w->index + "))";
  return CEmitter::callExpr(c);
}

const StoreStmt* KernelEmitter::pairedStore(const Stmt& body, const std::vector<const ForStmt*>& loops,
                                            const RegisterNest& nest) {
  if (!options_.dialect().halfPairs || nest.kind != FragmentRole::Tile || nest.layout.vector % 2 != 0 ||
      loops.size() != 2)
    return nullptr;
  const Stmt* s = &body;
  while (auto* l = as<LetStmt>(*s)) s = &l->body;
  auto* st = as<StoreStmt>(*s);
  if (!st || (st->buffer->dtype != DType::Float16 && st->buffer->dtype != DType::BFloat16) ||
      !pairArithmetic(st->value, st->buffer->dtype))
    return nullptr;
  // The store is of the nest's own element of a tile the nest binds.
  auto it = tiles_.buffers.find(st->buffer.get());
  if (it == tiles_.buffers.end() || it->second.group != nest.group || it->second.role != FragmentRole::Tile ||
      it->second.layout.cols != nest.layout.cols)
    return nullptr;
  if (st->indices.size() != 2 || !isVar(st->indices[0], loops[0]->var) || !isVar(st->indices[1], loops[1]->var))
    return nullptr;
  return st;
}

Stmt KernelEmitter::pairColumns(const Stmt& body, const ForStmt* colLoop, const TileLoops& t) {
  // Runs of the layout start at even columns, so the pair's first column is even.
  Var half = makeVar(colLoop->var->name + "_pair", colLoop->var->dtype);
  markNonNegative(half);
  Expr first = substitute(t.col, t.pairLane, makeInt(0));
  line("const " + typeName(half->dtype) + " " + varName(half) + " = " +
       expr(passes::simplifyExpr(floorDiv(first, makeInt(2)))) + ";");
  Expr column = add(mul(makeVarRef(half), makeInt(2)), makeVarRef(t.pairLane));
  if (column->dtype != colLoop->var->dtype) column = makeCast(colLoop->var->dtype, column);
  return passes::simplifyStmt(substitute(body, colLoop->var, column), {{t.pairLane, makeInt(0), makeInt(2)}});
}

void KernelEmitter::emitPairedBody(const Stmt& body, const TileLoops& t, const std::function<void()>& defineLoopVars) {
  const Stmt* last = &body;
  while (auto* l = as<LetStmt>(*last)) last = &l->body;
  const StoreStmt* store = as<StoreStmt>(*last);
  TLC_CHECK(store, "a paired register nest ends in a store");
  const DType type = store->buffer->dtype;
  std::vector<Expr> leaves;
  pairLeaves(store->value, type, &leaves);
  // A leaf that unpacks a 4-bit integer (itself or through a let) keeps its
  // word and nibble index per lane: the pair is converted at once.
  std::unordered_map<const VarNode*, Expr> lets;
  for (const Stmt* s = &body; auto* l = as<LetStmt>(*s); s = &l->body) lets[l->var.get()] = l->value;
  auto unpackOf = [&](const Expr& leaf) -> const Call* {
    Expr e = leaf;
    if (auto* r = as<VarRef>(e))
      if (auto it = lets.find(r->var.get()); it != lets.end()) e = it->second;
    auto* c = as<Call>(e);
    return c && (c->callee == "unpack_uint4" || c->callee == "unpack_int4") && c->dtype == type ? c : nullptr;
  };
  std::vector<std::string> names;
  std::vector<std::optional<PackedWordRead>> words;
  for (auto& leaf : leaves) {
    names.push_back(fresh("lanes"));
    const Call* c = unpackOf(leaf);
    words.push_back(c ? packedWordRead(c) : std::nullopt);
    if (c) {
      line((words.back() ? std::string("unsigned") : typeName(c->args[0]->dtype)) + " " + names.back() + "[2];");
      line("int " + names.back() + "_nibble[2];");
    } else {
      line(typeName(type) + " " + names.back() + "[2];");
    }
  }
  const std::string lane = varName(t.pairLane);
  open("#pragma unroll\n" + std::string(indent_ * 2, ' ') + "for (int " + lane + " = 0; " + lane + " < 2; ++" + lane +
       ")");
  defineLoopVars();
  const Stmt* s = &body;
  while (auto* l = as<LetStmt>(*s)) {
    if (isNonNegative(l->value)) markNonNegative(l->var);
    line("const " + typeName(l->var->dtype) + " " + varName(l->var) + " = " + expr(l->value) + ";");
    s = &l->body;
  }
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (const Call* c = unpackOf(leaves[k])) {
      const auto& w = words[k];
      line(names[k] + "[" + lane + "] = " + (w ? w->word : expr(c->args[0])) + ";");
      line(names[k] + "_nibble[" + lane + "] = (int)(" + (w ? w->index : expr(c->args[1])) + ");");
    } else {
      line(names[k] + "[" + lane + "] = " + expr(leaves[k]) + ";");
    }
  }
  close();
  size_t next = 0;
  std::function<std::string(const Expr&)> pairExpr = [&](const Expr& e) -> std::string {
    if (!pairArithmetic(e, type)) {
      const std::string& n = names.at(next);
      if (const Call* c = unpackOf(leaves.at(next++)))
        return "tlc::" + c->callee + "_pair<" + typeName(type) + ">(" + n + "[0], " + n + "_nibble[0], " + n + "[1], " +
               n + "_nibble[1])";
      return "tlc::pair(" + n + "[0], " + n + "[1])";
    }
    auto* b = as<Binary>(e);
    const char* fn = b->op == BinaryOp::Add ? "tlc::hadd(" : b->op == BinaryOp::Sub ? "tlc::hsub(" : "tlc::hmul(";
    std::string x = pairExpr(b->a);
    return fn + x + ", " + pairExpr(b->b) + ")";
  };
  const std::string result = fresh("lanes");
  line("const auto " + result + " = " + pairExpr(store->value) + ";");
  const BufferNode* tile = store->buffer.get();
  const Expr reg = fragmentRegister_.at(tile);
  for (int k = 0; k < 2; ++k) {
    fragmentRegister_[tile] = substitute(reg, t.pairLane, makeInt(k));
    line(access(store->buffer, store->indices) + " = tlc::" + (k ? "high(" : "low(") + result + ");");
  }
  fragmentRegister_[tile] = reg;
}

}  // namespace tlc::cuda
