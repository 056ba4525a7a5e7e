#include "tools/tlc_difftest/generator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace tlc::difftest {

namespace {

// splitmix64: the same sequence for a seed on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(static_cast<int64_t>(v.size())))];
  }

 private:
  uint64_t state_;
};

std::string str(int64_t v) { return std::to_string(v); }

bool isIntDtype(const std::string& d) { return d.find("int") != std::string::npos; }

// The text of a program, line by line, with Python indentation.
class Writer {
 public:
  void line(const std::string& s) { text_ += std::string(static_cast<size_t>(indent_) * 4, ' ') + s + "\n"; }
  void in() { ++indent_; }
  void out() { --indent_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int indent_ = 0;
};

// A scalar expression and a bound on its magnitude.
struct Expr {
  std::string text;
  double bound = 1;
};

// Random scalar expressions over the elements of a tile. Float expressions
// stay within kFloatBound (small enough that float32 rounding differences
// between targets stay inside the check's tolerances), integer ones within
// kIntBound (far from int32 overflow).
class ExprGen {
 public:
  static constexpr double kFloatBound = 8;
  static constexpr double kIntBound = 1 << 16;

  struct Input {
    std::string access;  // e.g. "A_f[i, j]"
    std::string dtype;
  };

  ExprGen(Rng& rng, std::vector<Input> inputs, std::vector<std::pair<std::string, int64_t>> indices)
      : rng_(rng), inputs_(std::move(inputs)), indices_(std::move(indices)) {}

  // A float32 expression (`native`: in the inputs' own float dtype, with
  // + - * max min only and a tighter bound, for half-precision arithmetic).
  // The top of an expression (`depth` levels at most) is never a leaf.
  Expr floatExpr(int depth, const std::string& native = "", bool top = true) {
    if (depth == 0 || (!top && rng_.chance(25))) return floatLeaf(native);
    int choice = static_cast<int>(rng_.below(native.empty() ? 13 : 4));
    Expr a = floatExpr(depth - 1, native, false);
    double limit = native.empty() ? kFloatBound : 2;
    switch (choice) {
      case 0:
      case 1: {
        Expr b = floatExpr(depth - 1, native, false);
        const char* op = rng_.chance(50) ? " + " : " - ";
        if (a.bound + b.bound > limit) return {"T.max(" + a.text + ", " + b.text + ")", std::max(a.bound, b.bound)};
        return {"(" + a.text + op + b.text + ")", a.bound + b.bound};
      }
      case 2: {
        Expr b = floatExpr(depth - 1, native, false);
        if (a.bound * b.bound > limit) return {"T.min(" + a.text + ", " + b.text + ")", std::max(a.bound, b.bound)};
        return {"(" + a.text + " * " + b.text + ")", a.bound * b.bound};
      }
      case 3: {
        Expr b = floatExpr(depth - 1, native, false);
        return {std::string(rng_.chance(50) ? "T.max(" : "T.min(") + a.text + ", " + b.text + ")",
                std::max(a.bound, b.bound)};
      }
      case 4: {
        Expr b = floatExpr(depth - 1, "", false);
        return {"(" + a.text + " / (T.abs(" + b.text + ") + 1.0))", a.bound};
      }
      case 5:
        if (std::exp(a.bound) > kFloatBound) return {"T.tanh(" + a.text + ")", 1};
        return {"T.exp(" + a.text + ")", std::exp(a.bound)};
      case 6:
        if (std::exp2(a.bound) > kFloatBound) return {"T.sin(" + a.text + ")", 1};
        return {"T.exp2(" + a.text + ")", std::exp2(a.bound)};
      case 7: return {"T.log(T.abs(" + a.text + ") + 1.0)", std::log(a.bound + 1)};
      case 8: return {"T.sqrt(T.abs(" + a.text + "))", std::sqrt(a.bound)};
      case 9: return {"T.rsqrt(T.abs(" + a.text + ") + 1.0)", 1};
      case 10: return {std::string(rng_.pick<std::string>({"T.sin(", "T.cos(", "T.tanh("})) + a.text + ")", 1};
      case 11: {
        // Rounding is exact on inputs (a computed value could round differently).
        Expr l = floatLeaf("");
        return {std::string(rng_.chance(50) ? "T.floor(" : "T.ceil(") + l.text + " * 4.0)", l.bound * 4 + 1};
      }
      default: {
        // Selections compare inputs, never computed values: rounding cannot flip them.
        Expr b = floatExpr(depth - 1, "", false);
        Expr l = floatLeaf(""), r = floatLeaf("");
        std::string cmp = rng_.pick<std::string>({" < ", " > ", " <= "});
        if (rng_.chance(50))
          return {"T.if_then_else(" + l.text + cmp + r.text + ", " + a.text + ", " + b.text + ")",
                  std::max(a.bound, b.bound)};
        return {"(" + a.text + " if " + l.text + cmp + r.text + " else " + b.text + ")", std::max(a.bound, b.bound)};
      }
    }
  }

  // An int32 expression.
  Expr intExpr(int depth, bool top = true) {
    if (depth == 0 || (!top && rng_.chance(25))) return intLeaf();
    Expr a = intExpr(depth - 1, false);
    switch (rng_.below(9)) {
      case 0:
      case 1: {
        Expr b = intExpr(depth - 1, false);
        if (a.bound + b.bound > kIntBound) return a;
        return {"(" + a.text + (rng_.chance(50) ? " + " : " - ") + b.text + ")", a.bound + b.bound};
      }
      case 2: {
        Expr b = intExpr(depth - 1, false);
        if (a.bound * b.bound > kIntBound) return {"T.max(" + a.text + ", " + b.text + ")", std::max(a.bound, b.bound)};
        return {"(" + a.text + " * " + b.text + ")", a.bound * b.bound};
      }
      case 3: {
        Expr b = intExpr(depth - 1, false);
        return {std::string(rng_.chance(50) ? "T.max(" : "T.min(") + a.text + ", " + b.text + ")",
                std::max(a.bound, b.bound)};
      }
      case 4: {
        int64_t c = 1 + rng_.below(7);
        return {"(" + a.text + (rng_.chance(50) ? " // " : " % ") + str(c) + ")", a.bound};
      }
      case 5: {
        Expr b = intExpr(depth - 1, false);
        std::string op = rng_.pick<std::string>({" & ", " | ", " ^ "});
        double bound = std::exp2(std::ceil(std::log2(std::max(a.bound, b.bound) + 1)) + 1);
        return {"(" + a.text + op + b.text + ")", bound};
      }
      case 6: {
        int64_t c = rng_.below(4);
        if (rng_.chance(50) && a.bound * 8 <= kIntBound) return {"(" + a.text + " << " + str(c) + ")", a.bound * 8};
        return {"(" + a.text + " >> " + str(c) + ")", a.bound};
      }
      case 7: return {"T.abs(" + a.text + ")", a.bound};
      default: {
        Expr b = intExpr(depth - 1, false), l = intExpr(depth - 1, false), r = intExpr(depth - 1, false);
        return {"T.if_then_else(" + l.text + " < " + r.text + ", " + a.text + ", " + b.text + ")",
                std::max(a.bound, b.bound)};
      }
    }
  }

 private:
  Expr floatLeaf(const std::string& native) {
    std::vector<const Input*> usable;
    for (const Input& in : inputs_)
      if (native.empty() ? true : in.dtype == native) usable.push_back(&in);
    int choice = static_cast<int>(rng_.below(10));
    if (!usable.empty() && choice < 7) {
      const Input& in = *rng_.pick(usable);
      if (!native.empty()) return {in.access, 1};
      if (in.dtype == "float32") return {in.access, 1};
      if (isIntDtype(in.dtype)) return {"(T.cast(" + in.access + ", float32) * 0.125)", 2};
      return {"T.cast(" + in.access + ", float32)", 1};
    }
    if (!native.empty() || choice < 9) {  // an index would promote a native expression to float32
      double v = static_cast<double>(rng_.below(17) - 8) * 0.25;
      std::string text = std::to_string(v);
      text.erase(text.find_last_not_of('0') + 1);
      if (text.back() == '.') text += "0";
      return {text, std::max(std::fabs(v), 0.25)};
    }
    const auto& [name, extent] = rng_.pick(indices_);
    return {"(T.cast(" + name + ", float32) * 0.0625)", static_cast<double>(extent) * 0.0625 + 0.0625};
  }

  Expr intLeaf() {
    std::vector<const Input*> ints;
    for (const Input& in : inputs_)
      if (isIntDtype(in.dtype)) ints.push_back(&in);
    int choice = static_cast<int>(rng_.below(10));
    if (!ints.empty() && choice < 6) {
      const Input& in = *rng_.pick(ints);
      return {in.dtype == "int32" ? in.access : "T.cast(" + in.access + ", int32)", 16};
    }
    if (choice < 8) {
      const auto& [name, extent] = rng_.pick(indices_);
      return {name, static_cast<double>(extent)};
    }
    int64_t v = rng_.below(19) - 9;
    return {v < 0 ? "(" + str(v) + ")" : str(v), static_cast<double>(std::max<int64_t>(std::abs(v), 1))};
  }

  Rng& rng_;
  std::vector<Input> inputs_;
  std::vector<std::pair<std::string, int64_t>> indices_;
};

// One tensor dimension: its size parameter and the tile extent along it.
struct Dim {
  std::string name;   // M, N, K
  std::string block;  // bm, bn, bk
  int64_t size = 1;
  int64_t tile = 1;
};

const std::vector<int64_t> kSizes = {1, 2, 3, 5, 7, 8, 16, 17, 31, 32, 33, 48, 64, 65, 100, 128};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The shared state of one program being generated.
class ProgramGen {
 public:
  ProgramGen(uint64_t seed, const GeneratorOptions& options) : rng_(seed), options_(options) { program_.seed = seed; }

  GeneratedProgram run() {
    dynamic_ = rng_.chance(25);
    switch (rng_.below(10)) {
      case 0:
      case 1:
      case 2: mapKernel(); break;
      case 3:
      case 4: copyKernel(); break;
      case 5:
      case 6: reduceKernel(); break;
      case 7:
      case 8: gemmKernel(); break;
      default: atomicKernel(); break;
    }
    return program_;
  }

 private:
  Dim dim(const std::string& name, const std::string& block, int64_t maxTile) {
    Dim d{name, block, rng_.pick(kSizes), 1};
    std::vector<int64_t> tiles;
    for (int64_t t = 1; t <= maxTile; t *= 2) tiles.push_back(t);
    d.tile = rng_.pick(tiles);
    if (rng_.chance(20)) d.tile = std::min<int64_t>(maxTile, std::max<int64_t>(1, d.size));  // one tile, exact
    return d;
  }

  // Doubles tiles until the grid has at most `maxBlocks` blocks.
  static void boundGrid(std::vector<Dim*> dims, int64_t maxBlocks, int64_t maxTileElems) {
    auto blocks = [&] {
      int64_t n = 1;
      for (Dim* d : dims) n *= ceilDiv(d->size, d->tile);
      return n;
    };
    auto elems = [&] {
      int64_t n = 1;
      for (Dim* d : dims) n *= d->tile;
      return n;
    };
    for (bool grew = true; blocks() > maxBlocks && grew;) {
      grew = false;
      for (Dim* d : dims)
        if (d->tile < d->size && elems() * 2 <= maxTileElems && blocks() > maxBlocks) {
          d->tile *= 2;
          grew = true;
        }
    }
  }

  bool usable(const std::string& dtype) const { return !options_.skipDtypes.count(dtype); }
  // One of `choices` that is not skipped (float32 when all are).
  std::string dtype(const std::vector<std::string>& choices) {
    std::vector<std::string> left;
    for (const std::string& c : choices)
      if (usable(c)) left.push_back(c);
    return left.empty() ? "float32" : rng_.pick(left);
  }
  std::string threads() { return str(rng_.pick<int64_t>({32, 64, 128, 128, 256})); }

  // "def NAME[M=.., N=.., bm=.., ...](" with the sizes dynamic when chosen.
  void header(Writer& w, const std::string& kind, const std::vector<Dim>& dims, const std::string& params,
              const std::vector<std::string>& extra = {}) {
    program_.kind = kind;
    program_.kernel = kind + "_" + str(static_cast<int64_t>(program_.seed % 1000000));
    std::string p;
    for (const Dim& d : dims) {
      if (dynamic_) {
        p += d.name + ", ";
        program_.dims[d.name] = d.size;
      } else {
        p += d.name + "=" + str(d.size) + ", ";
      }
    }
    for (const Dim& d : dims) p += d.block + "=" + str(d.tile) + ", ";
    for (const std::string& e : extra) p += e + ", ";
    p.resize(p.size() - 2);
    w.line("# Generated by tlc_difftest --seed " + str(static_cast<int64_t>(program_.seed)) + " (" + kind + ").");
    w.line("def " + program_.kernel + "[" + p + "](");
    w.line("        " + params + "):");
    w.in();
  }

  // The kernel's grid over `dims` (the last one is x): "with T.Kernel(...) as (bx, by):".
  std::vector<std::string> kernel(Writer& w, const std::vector<const Dim*>& dims) {
    static const char* names[] = {"bx", "by", "bz"};
    std::string extents, vars;
    std::vector<std::string> blockVar(dims.size());
    for (size_t k = 0; k < dims.size(); ++k) {
      const Dim& d = *dims[dims.size() - 1 - k];
      extents += (k ? ", " : "") + std::string("T.ceildiv(") + d.name + ", " + d.block + ")";
      vars += (k ? ", " : "") + std::string(names[k]);
      blockVar[dims.size() - 1 - k] = names[k];
    }
    std::string as = dims.size() == 1 ? vars : "(" + vars + ")";
    w.line("with T.Kernel(" + extents + ", threads=" + threads() + ") as " + as + ":");
    w.in();
    return blockVar;
  }

  // The region of a tile in a tensor: a point ("by * bm, bx * bn") or a slice.
  // No slice where a tile extent is 1: the front end rejects `bx:bx + 1`
  // against a unit dimension (tests/difftest/known/copy_unit_slice.tl).
  std::string region(const std::vector<Dim>& dims, const std::vector<std::string>& starts, bool slice) {
    for (const Dim& d : dims) slice = slice && d.tile > 1;
    std::string s;
    for (size_t d = 0; d < dims.size(); ++d) {
      s += d ? ", " : "";
      s += slice ? starts[d] + ":" + starts[d] + " + " + dims[d].block : starts[d];
    }
    return s;
  }

  static std::string tileShape(const std::vector<Dim>& dims) {
    std::string s = "(";
    for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + dims[d].block;
    return s + (dims.size() == 1 ? ",)" : ")");
  }

  static std::string tensorShape(const std::vector<Dim>& dims) {
    std::string s = "(";
    for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + dims[d].name;
    return s + (dims.size() == 1 ? ",)" : ")");
  }

  std::string fillValue(const std::string& dt) {
    if (isIntDtype(dt)) return str(rng_.below(7) - 3);
    return rng_.pick<std::string>({"0.5", "-1.25", "2.0", "0.0"});
  }

  void mapKernel();
  void copyKernel();
  void reduceKernel();
  void gemmKernel();
  void atomicKernel();

  Rng rng_;
  const GeneratorOptions& options_;
  GeneratedProgram program_;
  bool dynamic_ = false;
};

const std::vector<std::string> kFloatTypes = {"float32", "float16", "bfloat16"};
const std::vector<std::string> kAllTypes = {"float32", "float16", "bfloat16", "float32", "int32", "int8", "uint8"};

void ProgramGen::mapKernel() {
  Writer w;
  int rank = rng_.chance(30) ? 1 : 2;
  std::vector<Dim> dims;
  if (rank == 2) dims.push_back(dim("M", "bm", 32));
  dims.push_back(dim("N", "bn", 64));
  std::vector<Dim*> ptrs;
  for (Dim& d : dims) ptrs.push_back(&d);
  boundGrid(ptrs, 16, 2048);
  bool intMath = rng_.chance(30);
  int numInputs = 1 + static_cast<int>(rng_.below(3));
  std::vector<std::string> inTypes;
  std::string native;
  if (!intMath && rng_.chance(20)) native = dtype({"float16", "bfloat16"});
  for (int k = 0; k < numInputs; ++k)
    inTypes.push_back(!native.empty() ? native : intMath ? dtype({"int32", "int8", "uint8", "int16"}) : dtype(kAllTypes));
  std::string outType = intMath ? "int32" : !native.empty() ? native : dtype(kFloatTypes);
  static const char* names[] = {"A", "B", "D"};
  std::string params;
  for (int k = 0; k < numInputs; ++k) params += std::string(names[k]) + ": Tensor[" + tensorShape(dims) + ", " + inTypes[k] + "], ";
  params += "C: Tensor[" + tensorShape(dims) + ", " + outType + "]";
  header(w, "map", dims, params);
  std::vector<const Dim*> cdims;
  for (const Dim& d : dims) cdims.push_back(&d);
  std::vector<std::string> bvar = kernel(w, cdims);
  std::vector<std::string> starts, idx = {"i", "j"}, global;
  if (rank == 1) idx = {"i"};
  std::string guard;
  for (size_t d = 0; d < dims.size(); ++d) {
    starts.push_back(bvar[d] + " * " + dims[d].block);
    global.push_back(starts[d] + " + " + idx[d]);
    guard += (d ? " and " : "") + global[d] + " < " + dims[d].name;
  }
  std::string point = [&] {
    std::string s;
    for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + idx[d];
    return s;
  }();
  std::string globalPoint = [&] {
    std::string s;
    for (size_t d = 0; d < global.size(); ++d) s += (d ? ", " : "") + global[d];
    return s;
  }();
  bool guarded = false;
  std::vector<ExprGen::Input> inputs;
  for (int k = 0; k < numInputs; ++k) {
    std::string n = names[k];
    int mode = static_cast<int>(rng_.below(4));  // 0 fragment, 1 shared -> fragment, 2 shared, 3 global
    if (mode == 3) {
      guarded = true;
      inputs.push_back({n + "[" + globalPoint + "]", inTypes[k]});
      continue;
    }
    std::string src = n + "[" + region(dims, starts, rng_.chance(40)) + "]";
    if (mode >= 1) {
      w.line(n + "_s = T.alloc_shared(" + tileShape(dims) + ", " + inTypes[k] + ")");
      w.line("T.copy(" + src + ", " + n + "_s)");
      src = n + "_s";
    }
    if (mode == 2) {
      inputs.push_back({n + "_s[" + point + "]", inTypes[k]});
      continue;
    }
    w.line(n + "_f = T.alloc_fragment(" + tileShape(dims) + ", " + inTypes[k] + ")");
    w.line("T.copy(" + src + ", " + n + "_f)");
    inputs.push_back({n + "_f[" + point + "]", inTypes[k]});
  }
  int outMode = static_cast<int>(rng_.below(4));  // 0 fragment, 1 shared, 2 fragment -> shared, 3 global
  std::string tileType = rng_.chance(50) || intMath ? outType : "float32";
  std::string target;
  if (outMode == 3) {
    guarded = true;
    target = "C[" + globalPoint + "]";
  } else {
    std::string buf = outMode == 1 ? "C_s" : "C_f";
    w.line(buf + " = T.alloc_" + (outMode == 1 ? "shared" : "fragment") + "(" + tileShape(dims) + ", " + tileType + ")");
    target = buf + "[" + point + "]";
  }
  std::vector<std::pair<std::string, int64_t>> indices;
  for (size_t d = 0; d < dims.size(); ++d) indices.push_back({idx[d], dims[d].tile});
  ExprGen gen(rng_, inputs, indices);
  Expr value = intMath ? gen.intExpr(3) : gen.floatExpr(3, native);
  std::string loopVars = point;
  std::string extents;
  for (size_t d = 0; d < dims.size(); ++d) extents += (d ? ", " : "") + dims[d].block;
  w.line("for " + loopVars + " in T.Parallel(" + extents + "):");
  w.in();
  if (guarded) {
    w.line("if " + guard + ":");
    w.in();
  }
  w.line(target + " = " + value.text);
  if (guarded) w.out();
  w.out();
  std::string dst = "C[" + region(dims, starts, rng_.chance(40)) + "]";
  if (outMode == 0) w.line("T.copy(C_f, " + dst + ")");
  if (outMode == 1) w.line("T.copy(C_s, " + dst + ")");
  if (outMode == 2) {
    w.line("C_s = T.alloc_shared(" + tileShape(dims) + ", " + outType + ")");
    w.line("T.copy(C_f, C_s)");
    w.line("T.copy(C_s, " + dst + ")");
  }
  program_.source = w.text();
}

void ProgramGen::copyKernel() {
  Writer w;
  std::vector<Dim> dims = {dim("M", "bm", 32), dim("N", "bn", 64)};
  boundGrid({&dims[0], &dims[1]}, 16, 2048);
  std::string inType = dtype(kAllTypes);
  std::string outType = isIntDtype(inType) ? dtype({"int32", "int8", "float32"}) : dtype(kFloatTypes);
  std::string sType = rng_.chance(50) ? inType : outType;
  std::string fType = isIntDtype(inType) && isIntDtype(outType) ? dtype({"int32", inType}) : dtype({"float32", sType});
  bool pipelined = rng_.chance(35);
  int stages = static_cast<int>(rng_.below(4));
  std::string shape = tensorShape(dims);
  header(w, "copy", dims, "A: Tensor[" + shape + ", " + inType + "], B: Tensor[" + shape + ", " + outType + "]");
  std::vector<std::string> starts;
  if (pipelined) {
    std::vector<std::string> bvar = kernel(w, {&dims[0]});
    starts = {bvar[0] + " * bm", "k * bn"};
  } else {
    std::vector<std::string> bvar = kernel(w, {&dims[0], &dims[1]});
    starts = {bvar[0] + " * bm", bvar[1] + " * bn"};
  }
  w.line("S = T.alloc_shared((bm, bn), " + sType + ")");
  w.line("F = T.alloc_fragment((bm, bn), " + fType + ")");
  bool row = rng_.chance(20);
  if (row) w.line("R = T.alloc_fragment((bn,), " + fType + ")");
  if (pipelined) {
    w.line(rng_.chance(50) ? "for k in T.Pipelined(T.ceildiv(N, bn), num_stages=" + str(stages) + "):"
                           : "for k in T.serial(T.ceildiv(N, bn)):");
    w.in();
  }
  if (row) {
    int64_t r = rng_.below(dims[0].tile);
    w.line("T.copy(A[" + starts[0] + " + " + str(r) + ", " + starts[1] + "], R)");
    w.line("T.copy(R, B[" + starts[0] + " + " + str(r) + ", " + starts[1] + "])");
  } else {
    w.line("T.copy(A[" + region(dims, starts, rng_.chance(40)) + "], S)");
    int64_t h = 1 + rng_.below(dims[0].tile);
    if (h < dims[0].tile && rng_.chance(50)) {
      w.line(rng_.chance(50) ? "T.clear(F)" : "T.fill(F, " + fillValue(fType) + ")");
      w.line("T.copy(S[0:" + str(h) + ", 0:bn], F[0:" + str(h) + ", 0:bn])");
    } else {
      w.line("T.copy(S, F)");
      if (h < dims[0].tile && rng_.chance(50)) w.line("T.fill(F[" + str(h) + ":bm, 0:bn], " + fillValue(fType) + ")");
    }
    if (rng_.chance(40)) {
      w.line("S2 = T.alloc_shared((bm, bn), " + outType + ")");
      w.line("T.copy(F, S2)");
      w.line("T.copy(S2, B[" + region(dims, starts, rng_.chance(40)) + "])");
    } else {
      w.line("T.copy(F, B[" + region(dims, starts, rng_.chance(40)) + "])");
    }
  }
  program_.source = w.text();
}

void ProgramGen::reduceKernel() {
  Writer w;
  std::vector<Dim> dims = {dim("M", "bm", 32), dim("N", "bn", 64)};
  boundGrid({&dims[0], &dims[1]}, 64, 2048);
  int redDim = rng_.chance(65) ? 1 : 0;
  Dim& keep = dims[1 - redDim];
  Dim& red = dims[redDim];
  keep.tile = std::min<int64_t>(keep.tile, 32);
  boundGrid({&keep}, 16, 32);
  bool intData = rng_.chance(25);
  std::string inType = intData ? dtype({"int32", "int8"}) : dtype(kFloatTypes);
  std::string acc = intData ? "int32" : "float32";
  std::string outType = intData ? "int32" : dtype({"float32", "float32", inType});
  std::string op = rng_.pick<std::string>({"sum", "max", "min", "abssum", "absmax"});
  bool oneTile = rng_.chance(30);
  if (oneTile) {
    red.tile = std::min<int64_t>(red.size, 64);
    while (red.tile * keep.tile > 2048) keep.tile = std::max<int64_t>(1, keep.tile / 2);
  }
  header(w, "reduce", dims, "A: Tensor[(M, N), " + inType + "], R: Tensor[(" + keep.name + ",), " + outType + "]");
  std::vector<std::string> bvar = kernel(w, {&keep});
  std::string kStart = bvar[0] + " * " + keep.block;
  std::string rStart = oneTile ? "0" : "k * " + red.block;
  std::string point = redDim == 1 ? kStart + ", " + rStart : rStart + ", " + kStart;
  bool viaShared = rng_.chance(40);
  if (viaShared) w.line("A_s = T.alloc_shared((bm, bn), " + inType + ")");
  w.line("A_f = T.alloc_fragment((bm, bn), " + acc + ")");
  w.line("R_f = T.alloc_fragment((" + keep.block + ",), " + acc + ")");
  std::string dimArg = redDim == 1 ? rng_.pick<std::string>({"1", "-1"}) : rng_.pick<std::string>({"0", "-2"});
  auto loadAndMap = [&] {
    if (viaShared) {
      w.line("T.copy(A[" + point + "], A_s)");
      w.line("T.copy(A_s, A_f)");
    } else {
      w.line("T.copy(A[" + point + "], A_f)");
    }
    if (rng_.chance(40)) {
      ExprGen gen(rng_, {{"A_f[i, j]", acc}}, {{"i", dims[0].tile}, {"j", dims[1].tile}});
      w.line("for i, j in T.Parallel(bm, bn):");
      w.in();
      w.line("A_f[i, j] = " + (intData ? gen.intExpr(2).text : gen.floatExpr(2).text));
      w.out();
    }
  };
  if (oneTile) {
    loadAndMap();
    w.line("T.reduce_" + op + "(A_f, R_f, dim=" + dimArg + ")");
  } else {
    w.line(rng_.chance(50) ? "T.clear(R_f)" : "T.fill(R_f, " + fillValue(acc) + ")");
    std::string trips = "T.ceildiv(" + red.name + ", " + red.block + ")";
    w.line(rng_.chance(60) ? "for k in T.Pipelined(" + trips + ", num_stages=" + str(rng_.below(4)) + "):"
                           : "for k in T.serial(" + trips + "):");
    w.in();
    loadAndMap();
    w.line("T.reduce_" + op + "(A_f, R_f, dim=" + dimArg + ", clear=False)");
    w.out();
  }
  w.line("T.copy(R_f, R[" + kStart + "])");
  program_.source = w.text();
}

void ProgramGen::gemmKernel() {
  Writer w;
  struct Kind {
    std::string in, acc;
    int64_t minK;
  };
  std::vector<Kind> kinds;
  for (const Kind& k : std::vector<Kind>{{"float16", "float32", 16},
                                         {"float16", "float32", 16},
                                         {"bfloat16", "float32", 16},
                                         {"float32", "float32", 8},
                                         {"int8", "int32", 32}})
    if (usable(k.in) && usable(k.acc)) kinds.push_back(k);
  Kind kind = kinds.empty() ? Kind{"float32", "float32", 8} : rng_.pick(kinds);
  Dim m = dim("M", "bm", 64), n = dim("N", "bn", 64), k = dim("K", "bk", 64);
  m.tile = std::max<int64_t>(m.tile, 16);
  n.tile = std::max<int64_t>(n.tile, 16);
  k.tile = std::max<int64_t>(k.tile, kind.minK);
  boundGrid({&m, &n}, 8, 4096);
  bool ta = rng_.chance(30), tb = rng_.chance(30);
  std::string outType = rng_.chance(50) ? kind.acc : dtype({kind.in});
  std::string aShape = ta ? "(K, M)" : "(M, K)", bShape = tb ? "(N, K)" : "(K, N)";
  std::vector<std::string> extra;
  int64_t stages = rng_.below(4);
  extra.push_back("stages=" + str(stages));
  header(w, "gemm", {m, n, k},
         "A: Tensor[" + aShape + ", " + kind.in + "], B: Tensor[" + bShape + ", " + kind.in + "], C: Tensor[(M, N), " +
             outType + "]",
         extra);
  std::vector<std::string> bvar = kernel(w, {&m, &n});
  std::string by = bvar[0], bx = bvar[1];
  bool aFrag = rng_.chance(20);
  w.line("A_s = T.alloc_shared(" + std::string(ta ? "(bk, bm)" : "(bm, bk)") + ", " + kind.in + ")");
  w.line("B_s = T.alloc_shared(" + std::string(tb ? "(bn, bk)" : "(bk, bn)") + ", " + kind.in + ")");
  if (aFrag) w.line("A_f = T.alloc_fragment(" + std::string(ta ? "(bk, bm)" : "(bm, bk)") + ", " + kind.in + ")");
  w.line("C_f = T.alloc_fragment((bm, bn), " + kind.acc + ")");
  bool clearFirst = rng_.chance(70);
  if (clearFirst) w.line("T.clear(C_f)");
  else w.line("T.fill(C_f, " + fillValue(kind.acc) + ")");
  w.line(rng_.chance(75) ? "for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):"
                         : "for k in T.serial(T.ceildiv(K, bk)):");
  w.in();
  w.line("T.copy(A[" + std::string(ta ? "k * bk, " + by + " * bm" : by + " * bm, k * bk") + "], A_s)");
  w.line("T.copy(B[" + std::string(tb ? bx + " * bn, k * bk" : "k * bk, " + bx + " * bn") + "], B_s)");
  std::string aOp = "A_s";
  if (aFrag) {
    w.line("T.copy(A_s, A_f)");
    aOp = "A_f";
  }
  std::string flags;
  if (ta) flags += ", transpose_A=True";
  if (tb) flags += ", transpose_B=True";
  w.line("T.gemm(" + aOp + ", B_s, C_f" + flags + ")");
  w.out();
  if (rng_.chance(35)) {
    w.line("for i, j in T.Parallel(bm, bn):");
    w.in();
    if (kind.acc == "int32") w.line("C_f[i, j] = C_f[i, j] * " + str(rng_.below(5) - 2) + " + " + str(rng_.below(9)));
    else w.line("C_f[i, j] = C_f[i, j] * " + rng_.pick<std::string>({"0.5", "-1.0", "0.25"}) + " + 1.0");
    w.out();
  }
  w.line("T.copy(C_f, C[" + by + " * bm, " + bx + " * bn])");
  program_.source = w.text();
}

void ProgramGen::atomicKernel() {
  Writer w;
  std::vector<Dim> dims = {dim("M", "bm", 32), dim("N", "bn", 64)};
  dims[1].tile = std::min<int64_t>(64, dims[1].size);
  boundGrid({&dims[0], &dims[1]}, 16, 2048);
  bool intData = rng_.chance(60);
  std::string op = intData ? rng_.pick<std::string>({"add", "max", "min"}) : rng_.pick<std::string>({"max", "min"});
  std::string inType = intData ? dtype({"int32", "int8"}) : dtype(kFloatTypes);
  std::string sType = intData ? "int32" : "float32";
  header(w, "atomic", dims, "A: Tensor[(M, N), " + inType + "], S: Tensor[(N,), " + sType + "]");
  std::vector<std::string> bvar = kernel(w, {&dims[0], &dims[1]});
  std::string r0 = bvar[0] + " * bm", c0 = bvar[1] + " * bn";
  w.line("A_f = T.alloc_fragment((bm, bn), " + sType + ")");
  w.line("T.copy(A[" + r0 + ", " + c0 + "], A_f)");
  w.line("for i, j in T.Parallel(bm, bn):");
  w.in();
  w.line("if " + r0 + " + i < M and " + c0 + " + j < N:");
  w.in();
  w.line("T.atomic_" + op + "(S[" + c0 + " + j], A_f[i, j])");
  w.out();
  w.out();
  program_.source = w.text();
}

}  // namespace

GeneratedProgram generateProgram(uint64_t seed, const GeneratorOptions& options) {
  return ProgramGen(seed, options).run();
}

}  // namespace tlc::difftest
