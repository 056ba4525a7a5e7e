#include "compiler/ir/printer.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/equality.h"
#include "compiler/ir/ir_lexer.h"
#include "compiler/support/source.h"

namespace tlc::ir {

namespace {

// Chooses the printed name of every binding site. Names are unique within a
// function; a binding's name is visible until the matching unbind.
class Namer {
 public:
  std::string bind(const void* node, const std::string& base) {
    std::string name = fresh(base);
    bound_[node].push_back(name);
    return name;
  }
  void unbind(const void* node) {
    auto it = bound_.find(node);
    if (it == bound_.end() || it->second.empty()) return;
    it->second.pop_back();
  }
  // The name of a use: the innermost binding, or (for malformed IR that uses
  // something unbound) a fresh name kept for every later use.
  std::string use(const void* node, const std::string& base) {
    auto it = bound_.find(node);
    if (it != bound_.end() && !it->second.empty()) return it->second.back();
    auto f = free_.find(node);
    if (f != free_.end()) return f->second;
    return free_[node] = fresh(base);
  }

 private:
  static std::string sanitize(const std::string& base) {
    std::string s;
    for (char c : base) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
    return s;
  }
  std::string fresh(const std::string& raw) {
    std::string base = sanitize(raw);
    std::string name = base;
    for (int i = 1; used_.count(name) || isReservedWord(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }
  std::unordered_set<std::string> used_;
  std::unordered_map<const void*, std::vector<std::string>> bound_;
  std::unordered_map<const void*, std::string> free_;
};

std::string quote(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A callee or function name prints bare when the lexer reads it back as one
// identifier token (dots separate plain parts), and quoted otherwise.
std::string symbolName(const std::string& name) {
  bool plain = !name.empty();
  size_t start = 0;
  while (plain) {
    size_t dot = name.find('.', start);
    std::string_view part = std::string_view(name).substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    plain = isPlainIdentifier(part);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return plain ? name : quote(name);
}

std::string dtypeStr(DType t) { return std::string(dtypeName(t)); }

// Concatenates in order: the parts of a braced list are evaluated left to
// right, so free names are numbered in reading order.
std::string cat(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) out += p;
  return out;
}

std::string floatLiteral(double v, DType t) {
  std::string s;
  if (std::isnan(v)) {
    s = "nan";
  } else if (std::isinf(v)) {
    s = v < 0 ? "-inf" : "inf";
  } else {
    char buf[64];
    // A float32 value prints in float32's shortest form: it reads back as a
    // double that rounds to the same float.
    bool exactFloat = t == DType::Float32 && static_cast<double>(static_cast<float>(v)) == v;
    auto res = exactFloat ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                          : std::to_chars(buf, buf + sizeof buf, v);
    s.assign(buf, res.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
  }
  return s + std::string(floatLiteralSuffix(t));
}

std::string intLiteral(int64_t v, DType t) {
  if (t == DType::Bool) return v ? "true" : "false";
  if (t == DType::UInt64) return std::to_string(static_cast<uint64_t>(v)) + "u64";
  return std::to_string(v) + std::string(intLiteralSuffix(t));
}

// Precedence levels, loosest first (see the grammar in docs/tile-ir.md).
enum Prec { kOr = 1, kAnd, kNot, kCmp, kBitOr, kXor, kBitAnd, kShift, kAdd, kMul, kUnary, kAtom };

int binaryPrec(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return kOr;
    case BinaryOp::And: return kAnd;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: return kCmp;
    case BinaryOp::BitOr: return kBitOr;
    case BinaryOp::BitXor: return kXor;
    case BinaryOp::BitAnd: return kBitAnd;
    case BinaryOp::Shl:
    case BinaryOp::Shr: return kShift;
    case BinaryOp::Add:
    case BinaryOp::Sub: return kAdd;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::FloorMod: return kMul;
    case BinaryOp::FloorDiv:
    case BinaryOp::Min:
    case BinaryOp::Max: return kAtom;  // printed as calls
  }
  return kAtom;
}

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : opts_(options) {}

  std::string out;

  std::string expr(const Expr& e, int minPrec = 0) {
    int prec = kAtom;
    std::string s = exprText(e, prec);
    return prec < minPrec ? "(" + s + ")" : s;
  }

  void func(const PrimFunc& f) {
    std::vector<const void*> scope;
    std::string head = "func @" + symbolName(f.name);
    if (!f.shapeVars.empty()) {
      head += "[";
      for (size_t i = 0; i < f.shapeVars.size(); ++i) {
        if (i) head += ", ";
        head += declareVar(f.shapeVars[i], scope);
      }
      head += "]";
    }
    head += "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param& p = f.params[i];
      if (i) head += ", ";
      if (p.buffer) {
        std::string name = names_.bind(p.buffer.get(), p.buffer->name);
        scope.push_back(p.buffer.get());
        head += name + ": ";
        if (p.buffer->scope != MemScope::Global) head += std::string(memScopeName(p.buffer->scope)) + " ";
        head += bufferType(*p.buffer);
      } else if (p.scalar) {
        std::string name = names_.bind(p.scalar.get(), p.scalar->name);
        scope.push_back(p.scalar.get());
        head += name + ": " + dtypeStr(p.scalar->dtype);
      } else {
        head += names_.bind(&p, p.name.empty() ? "param" : p.name) + ": <missing>";
      }
    }
    head += ")";
    if (!f.bindings.empty()) {
      head += " bind(";
      for (size_t i = 0; i < f.bindings.size(); ++i) {
        if (i) head += ", ";
        head += (isPlainIdentifier(f.bindings[i].name) ? f.bindings[i].name : quote(f.bindings[i].name)) + " = " +
                quote(f.bindings[i].value);
      }
      head += ")";
    }
    head += locSuffix(f.loc);
    line(head + " {");
    block(f.body);
    line("}");
    for (const void* n : scope) names_.unbind(n);
  }

  void stmt(const Stmt& s) { stmts(flatten(s)); }

 private:
  const PrintOptions& opts_;
  Namer names_;
  int indent_ = 0;

  void line(const std::string& text) {
    out.append(static_cast<size_t>(indent_) * 2, ' ');
    out += text;
    out += '\n';
  }

  std::string locSuffix(SourceLoc loc) {
    // A location in a file this manager does not hold (a module built by
    // hand, or read through another manager) prints as none.
    if (!opts_.locations || !loc.known() || !opts_.locations->hasFile(loc.file)) return "";
    return " loc(" + quote(opts_.locations->name(loc.file)) + ":" + std::to_string(loc.line) + ":" +
           std::to_string(loc.col) + ")";
  }

  std::string declareVar(const Var& v, std::vector<const void*>& scope, bool alwaysType = false) {
    std::string name = names_.bind(v.get(), v->name);
    scope.push_back(v.get());
    if (alwaysType || v->dtype != DType::Int32) name += ": " + dtypeStr(v->dtype);
    return name;
  }

  std::string exprList(const std::vector<Expr>& es) {
    std::string s;
    for (size_t i = 0; i < es.size(); ++i) {
      if (i) s += ", ";
      s += expr(es[i]);
    }
    return s;
  }

  std::string bufferType(const BufferNode& b) { return dtypeStr(b.dtype) + "[" + exprList(b.shape) + "]"; }

  std::string bufferName(const Buffer& b) { return b ? names_.use(b.get(), b->name) : "<null>"; }
  std::string barrierRef(const BarrierRef& b) { return bufferName(b.buffer) + "[" + expr(b.index) + "]"; }

  bool isFullRegion(const Region& r) {
    if (!r.buffer || r.ranges.size() != r.buffer->shape.size()) return false;
    for (size_t i = 0; i < r.ranges.size(); ++i) {
      const Range& rg = r.ranges[i];
      const Expr& dim = r.buffer->shape[i];
      int64_t mn = 0;
      if (!rg.min || !dim || !constInt(rg.min, &mn) || mn != 0 || rg.min->dtype != dim->dtype) return false;
      if (!structurallyEqual(rg.extent, dim)) return false;
    }
    return true;
  }

  std::string region(const Region& r) {
    std::string s = bufferName(r.buffer);
    if (isFullRegion(r)) return s;
    s += "[";
    for (size_t i = 0; i < r.ranges.size(); ++i) {
      if (i) s += ", ";
      s += cat({expr(r.ranges[i].min), " : +", expr(r.ranges[i].extent)});
    }
    return s + "]";
  }

  std::string exprText(const Expr& e, int& prec) {
    prec = kAtom;
    if (!e) return "<null>";
    switch (e->kind) {
      case ExprKind::IntImm: return intLiteral(as<IntImm>(e)->value, e->dtype);
      case ExprKind::FloatImm: return floatLiteral(as<FloatImm>(e)->value, e->dtype);
      case ExprKind::VarRef: {
        const Var& v = as<VarRef>(e)->var;
        return v ? names_.use(v.get(), v->name) : "<null>";
      }
      case ExprKind::Binary: {
        auto* b = as<Binary>(e);
        switch (b->op) {
          case BinaryOp::FloorDiv: return cat({"floordiv(", expr(b->a), ", ", expr(b->b), ")"});
          case BinaryOp::Min: return cat({"min(", expr(b->a), ", ", expr(b->b), ")"});
          case BinaryOp::Max: return cat({"max(", expr(b->a), ", ", expr(b->b), ")"});
          default: break;
        }
        prec = binaryPrec(b->op);
        return cat({expr(b->a, prec), " ", binaryOpSpelling(b->op), " ", expr(b->b, prec + 1)});
      }
      case ExprKind::Unary: {
        auto* u = as<Unary>(e);
        if (u->op == UnaryOp::Not) {
          prec = kNot;
          return "not " + expr(u->a, kNot);
        }
        prec = kUnary;
        std::string op = unaryOpSpelling(u->op);
        // A literal operand gets parentheses so that `-(5)` stays distinct from the literal `-5`.
        bool literal = u->a && (u->a->kind == ExprKind::IntImm || u->a->kind == ExprKind::FloatImm);
        return op + (literal ? "(" + expr(u->a) + ")" : expr(u->a, kUnary));
      }
      case ExprKind::Cast: return "cast<" + dtypeStr(e->dtype) + ">(" + expr(as<Cast>(e)->value) + ")";
      case ExprKind::Select: {
        auto* s = as<Select>(e);
        return cat({"select(", expr(s->cond), ", ", expr(s->t), ", ", expr(s->f), ")"});
      }
      case ExprKind::Call: {
        auto* c = as<Call>(e);
        std::string s = "@" + symbolName(c->callee);
        // The result dtype is implied when it is the first argument's.
        if (c->args.empty() || !c->args[0] || c->args[0]->dtype != e->dtype) s += "<" + dtypeStr(e->dtype) + ">";
        return s + "(" + exprList(c->args) + ")";
      }
      case ExprKind::Load: {
        auto* l = as<Load>(e);
        return cat({bufferName(l->buffer), "[", exprList(l->indices), "]"});
      }
    }
    return "<?>";
  }

  static void flattenInto(const Stmt& s, std::vector<Stmt>& out) {
    if (auto* seq = as<SeqStmt>(s)) {
      for (const Stmt& c : seq->stmts) flattenInto(c, out);
    } else if (s) {
      out.push_back(s);
    }
  }
  static std::vector<Stmt> flatten(const Stmt& s) {
    std::vector<Stmt> out;
    flattenInto(s, out);
    return out;
  }

  // The statements of a braced block; allocations and trailing lets bound
  // here are visible until its end.
  void block(const Stmt& body) {
    ++indent_;
    stmts(flatten(body));
    --indent_;
  }

  void stmts(const std::vector<Stmt>& list) {
    std::vector<const void*> scope;
    std::vector<Stmt> pending = list;
    // A let that ends its block prints flat: its body continues the block.
    while (true) {
      for (size_t i = 0; i + 1 < pending.size(); ++i) one(pending[i], scope);
      if (pending.empty()) break;
      const Stmt& last = pending.back();
      auto* let = as<LetStmt>(last);
      if (!let) {
        one(last, scope);
        break;
      }
      std::string value = expr(let->value);
      std::string name = let->var ? declareVar(let->var, scope, true) : "<null>";
      line("let " + name + " = " + value + locSuffix(let->loc));
      std::vector<Stmt> rest = flatten(let->body);
      pending = std::move(rest);
    }
    for (auto it = scope.rbegin(); it != scope.rend(); ++it) names_.unbind(*it);
  }

  void bracedBody(const std::string& head, const Stmt& body, SourceLoc loc, std::vector<const void*> scope) {
    line(head + locSuffix(loc) + " {");
    block(body);
    line("}");
    for (const void* n : scope) names_.unbind(n);
  }

  void one(const Stmt& s, std::vector<const void*>& blockScope) {
    switch (s->kind) {
      case StmtKind::Seq: stmts(flatten(s)); return;
      case StmtKind::Kernel: {
        auto* k = as<KernelStmt>(s);
        std::string head = "kernel grid(" + exprList(k->grid) + ") threads(" + std::to_string(k->threads) + ")";
        if (k->swizzle > 0) head += " swizzle(" + std::to_string(k->swizzle) + ")";
        head += " as (";
        std::vector<const void*> scope;
        for (size_t i = 0; i < k->blockVars.size(); ++i) {
          if (i) head += ", ";
          head += k->blockVars[i] ? declareVar(k->blockVars[i], scope) : "<null>";
        }
        bracedBody(head + ")", k->body, s->loc, scope);
        return;
      }
      case StmtKind::Alloc: {
        auto* a = as<AllocStmt>(s);
        if (!a->buffer) {
          line("alloc <null>");
          return;
        }
        std::string type = std::string(memScopeName(a->buffer->scope)) + " " + bufferType(*a->buffer);
        std::string name = names_.bind(a->buffer.get(), a->buffer->name);
        blockScope.push_back(a->buffer.get());
        if (a->versions != 1) type += " versions(" + std::to_string(a->versions) + ")";
        if (a->arrivals != 0) type += " arrivals(" + std::to_string(a->arrivals) + ")";
        line("alloc " + name + ": " + type + locSuffix(s->loc));
        return;
      }
      case StmtKind::For: {
        auto* f = as<ForStmt>(s);
        std::string range = cat({expr(f->min), " : +", expr(f->extent)});
        if (f->numStages != 0) range += ", num_stages=" + std::to_string(f->numStages);
        auto ints = [](const std::vector<int64_t>& v) {
          std::string r = "[";
          for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
          return r + "]";
        };
        if (!f->order.empty()) range += ", order=" + ints(f->order);
        if (!f->stage.empty()) range += ", stage=" + ints(f->stage);
        if (!f->group.empty()) {
          range += ", group=[";
          for (size_t i = 0; i < f->group.size(); ++i) range += (i ? ", " : "") + ints(f->group[i]);
          range += "]";
        }
        if (!f->warpSpecialize) range += ", warp_specialize=false";
        if (!f->im2col.empty()) range += ", im2col=" + ints(f->im2col);
        std::vector<const void*> scope;
        std::string var = f->var ? declareVar(f->var, scope) : "<null>";
        bracedBody("for " + var + " in " + forKindName(f->forKind) + "(" + range + ")", f->body, s->loc, scope);
        return;
      }
      case StmtKind::If: {
        auto* i = as<IfStmt>(s);
        line(std::string("if ") + (i->likely ? "[likely] " : "") + expr(i->cond) + locSuffix(s->loc) + " {");
        block(i->thenBody);
        const IfStmt* cur = i;
        while (cur->elseBody) {
          std::vector<Stmt> elseStmts = flatten(cur->elseBody);
          auto* chained = elseStmts.size() == 1 ? as<IfStmt>(elseStmts[0]) : nullptr;
          if (chained) {
            line(std::string("} else if ") + (chained->likely ? "[likely] " : "") + expr(chained->cond) +
                 locSuffix(chained->loc) + " {");
            block(chained->thenBody);
            cur = chained;
            continue;
          }
          line("} else {");
          block(cur->elseBody);
          break;
        }
        line("}");
        return;
      }
      case StmtKind::Store: {
        auto* st = as<StoreStmt>(s);
        line(cat({bufferName(st->buffer), "[", exprList(st->indices), "] = ", expr(st->value), locSuffix(s->loc)}));
        return;
      }
      case StmtKind::Let: {
        auto* let = as<LetStmt>(s);
        std::string value = expr(let->value);
        std::vector<const void*> scope;
        std::string name = let->var ? declareVar(let->var, scope, true) : "<null>";
        bracedBody("let " + name + " = " + value, let->body, s->loc, scope);
        return;
      }
      case StmtKind::Evaluate:
        line("evaluate " + expr(as<EvaluateStmt>(s)->value) + locSuffix(s->loc));
        return;
      case StmtKind::Copy: {
        auto* c = as<CopyStmt>(s);
        std::string bar = c->barrier ? ", barrier=" + barrierRef(c->barrier) : "";
        if (c->usedWhen) bar += ", used_when=" + expr(c->usedWhen);
        line(cat({c->async ? "copy_async(" : "copy(", region(c->src), ", ", region(c->dst), bar, ")", locSuffix(s->loc)}));
        return;
      }
      case StmtKind::Gemm: {
        auto* g = as<GemmStmt>(s);
        std::string text = cat({"gemm(", region(g->a), ", ", region(g->b), ", ", region(g->c)});
        if (g->transA) text += ", transpose_A=true";
        if (g->transB) text += ", transpose_B=true";
        if (g->clearAccum) text += ", clear_accum=true";
        line(text + ")" + locSuffix(s->loc));
        return;
      }
      case StmtKind::Fill: {
        auto* f = as<FillStmt>(s);
        line(cat({"fill(", region(f->dst), ", ", expr(f->value), ")", locSuffix(s->loc)}));
        return;
      }
      case StmtKind::Reduce: {
        auto* r = as<ReduceStmt>(s);
        std::string text = cat({"reduce_", reduceKindName(r->reduceKind), "(", region(r->src), ", ", region(r->dst),
                                ", dim=", std::to_string(r->dim)});
        if (!r->clear) text += ", clear=false";
        line(text + ")" + locSuffix(s->loc));
        return;
      }
      case StmtKind::Atomic: {
        auto* a = as<AtomicStmt>(s);
        std::string prev = a->prev ? cat({" -> ", bufferName(a->prev), "[", exprList(a->prevIndices), "]"}) : "";
        line(cat({"atomic_", atomicKindName(a->atomicKind), "(", bufferName(a->buffer), "[", exprList(a->indices),
                  "], ", expr(a->value), ")", prev, locSuffix(s->loc)}));
        return;
      }
      case StmtKind::AnnotateLayout: {
        auto* a = as<AnnotateLayoutStmt>(s);
        line(cat({"annotate_layout(", bufferName(a->buffer), ", ", layoutSpecText(a->layout), ")", locSuffix(s->loc)}));
        return;
      }
      case StmtKind::Print: {
        auto* p = as<PrintStmt>(s);
        std::string text = "print(" + (p->value ? expr(p->value) : p->buffer ? bufferName(p->buffer) : "<null>");
        if (!p->message.empty()) text += ", message=" + quote(p->message);
        if (!p->at.empty()) text += ", at=" + quote(p->at);
        if (!p->iteration.empty()) {
          text += ", iteration=[";
          for (size_t i = 0; i < p->iteration.size(); ++i)
            text += (i ? ", " : "") + quote(p->iteration[i].name) + ": " + expr(p->iteration[i].value);
          text += "]";
        }
        if (!p->element.empty()) text += ", element=" + quote(p->element) + "[" + exprList(p->index) + "]";
        line(text + ")" + locSuffix(s->loc));
        return;
      }
      case StmtKind::Break: line("break" + locSuffix(s->loc)); return;
      case StmtKind::Continue: line("continue" + locSuffix(s->loc)); return;
      case StmtKind::Version: {
        auto* v = as<VersionStmt>(s);
        std::string head = "version(";
        for (size_t i = 0; i < v->buffers.size(); ++i) head += (i ? ", " : "") + bufferName(v->buffers[i]);
        line(head + ") = " + expr(v->version) + locSuffix(s->loc) + " {");
        block(v->body);
        line("}");
        return;
      }
      case StmtKind::AsyncCommit: line("commit_group" + locSuffix(s->loc)); return;
      case StmtKind::BarrierArrive: {
        auto* a = as<BarrierArriveStmt>(s);
        std::string bytes = a->expectBytes ? ", expect_bytes=" + expr(a->expectBytes) : "";
        line("barrier_arrive(" + barrierRef(a->barrier) + bytes + ")" + locSuffix(s->loc));
        return;
      }
      case StmtKind::BarrierWait: {
        auto* w = as<BarrierWaitStmt>(s);
        line(cat({"barrier_wait(", barrierRef(w->barrier), ", ", expr(w->parity), ")", locSuffix(s->loc)}));
        return;
      }
      case StmtKind::WarpSpecialize: {
        auto* w = as<WarpSpecializeStmt>(s);
        line("warp_specialize(producer_threads=" + std::to_string(w->producerThreads) + ")" + locSuffix(s->loc) + " {");
        block(w->producer);
        line("} consumer {");
        block(w->consumer);
        line("}");
        return;
      }
      case StmtKind::AsyncWait:
        line("wait_group(" + std::to_string(as<AsyncWaitStmt>(s)->pending) + ")" + locSuffix(s->loc));
        return;
    }
  }
};

}  // namespace

std::string printModule(const Module& m) { return printModule(m, PrintOptions{}); }

std::string printModule(const Module& m, const PrintOptions& options) {
  std::string out;
  for (size_t i = 0; i < m.funcs.size(); ++i) {
    if (i) out += "\n";
    if (m.funcs[i]) out += printFunc(*m.funcs[i], options);
  }
  return out;
}

std::string printFunc(const PrimFunc& f, const PrintOptions& options) {
  Printer p(options);
  p.func(f);
  return p.out;
}

std::string printStmt(const Stmt& s) {
  PrintOptions options;
  Printer p(options);
  p.stmt(s);
  return p.out;
}

std::string printExpr(const Expr& e) {
  PrintOptions options;
  Printer p(options);
  return p.expr(e);
}

}  // namespace tlc::ir
