// The tile IR: the typed, target-independent program every backend consumes.
//
// Semantics
// ---------
// A Module holds PrimFuncs. A PrimFunc has parameters (global tensors or
// scalars) and a body. Tensor shapes are expressions over integer constants
// and shape variables; a shape variable left unbound by compile-time
// parameters is a runtime (dynamic) dimension, read from the arguments.
//
// A Kernel statement launches a grid of blocks. Its block-index variables
// range over the grid extents; `threads` is the number of threads per block
// that a GPU target uses (the language semantics are per block: a Parallel
// loop's iterations are independent; all statements of a block run in order).
//
// Buffers are declared by Alloc statements (shared, fragment, local, var) or
// are parameters (global). An Alloc is visible until the end of the Seq that
// holds it. Every element of a freshly allocated buffer is undefined until
// written.
//
// Tile operations work on Regions: a buffer plus one (min, extent) Range per
// dimension. Region elements that fall outside the buffer's shape are masked:
// reads yield zero, writes are dropped. This is how tiles handle sizes they do
// not divide.
//   Copy(src, dst)       dst[i..] = cast(src[i..]); src and dst have the same
//                        number of elements once unit dimensions are dropped.
//   Gemm(A, B, C, tA, tB, clear)   C (+)= op(A) @ op(B), accumulated in C's
//                        dtype; op transposes when tA / tB.
//   Fill(dst, v)         every element of dst = v.
//   Reduce(kind, src, dst, dim, clear)   dst = reduce over dimension `dim` of
//                        src; with clear=false the old dst takes part.
//   Atomic(kind, buf, idx, v)   buf[idx] = op(buf[idx], v) atomically across
//                        blocks.
// Integer division and modulo are floor division / floor modulo; Div is true
// division and only applies to floats.
//
// Nodes are immutable and shared (std::shared_ptr<const T>). Build them with
// the make* factories, which check invariants. Variables and buffers have
// identity: two VarRefs denote the same variable iff they point at the same
// VarNode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/support/source.h"

namespace tlc::ir {

enum class ExprKind {
#define EXPR(Name) Name,
#include "compiler/ir/node_kinds.def"
};
enum class StmtKind {
#define STMT(Name) Name,
#include "compiler/ir/node_kinds.def"
};
const char* exprKindName(ExprKind k);
const char* stmtKindName(StmtKind k);

// ---------------------------------------------------------------------------
// Variables and buffers

struct VarNode {
  std::string name;
  DType dtype;
  SourceLoc loc;
};
using Var = std::shared_ptr<const VarNode>;
Var makeVar(std::string name, DType dtype = DType::Int32, SourceLoc loc = {});

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

// Barrier: an array of a block's barrier objects (mbarriers), allocated
// only, used only by barrier_arrive, barrier_wait and copy_async's barrier
// operand (docs/tile-ir.md, "Barriers and warp specialization").
enum class MemScope { Global, Shared, Fragment, Local, Var, Barrier };
const char* memScopeName(MemScope s);  // "global", "shared", ...

struct BufferNode {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  MemScope scope;
  SourceLoc loc;
};
using Buffer = std::shared_ptr<const BufferNode>;
Buffer makeBuffer(std::string name, DType dtype, std::vector<Expr> shape, MemScope scope, SourceLoc loc = {});

struct Range {
  Expr min;
  Expr extent;
};

struct Region {
  Buffer buffer;
  std::vector<Range> ranges;  // one per buffer dimension
  SourceLoc loc;
};
// The whole buffer as a region.
Region fullRegion(const Buffer& b, SourceLoc loc = {});
// Whether a region is its whole buffer (constant origin 0 and full extents).
bool isFullRegion(const Region& r);
// The dimensions of a region whose extent is not the constant 1.
std::vector<int> nonUnitDims(const Region& r);

// ---------------------------------------------------------------------------
// Expressions

struct ExprNode {
  ExprKind kind;
  DType dtype;
  SourceLoc loc;
  virtual ~ExprNode() = default;

 protected:
  ExprNode(ExprKind k, DType t, SourceLoc l) : kind(k), dtype(t), loc(l) {}
};

struct IntImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value;
  IntImm(int64_t v, DType t, SourceLoc l) : ExprNode(kKind, t, l), value(v) {}
};

struct FloatImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value;
  FloatImm(double v, DType t, SourceLoc l) : ExprNode(kKind, t, l), value(v) {}
};

struct VarRef : ExprNode {
  static constexpr ExprKind kKind = ExprKind::VarRef;
  Var var;
  VarRef(Var v, SourceLoc l) : ExprNode(kKind, v->dtype, l), var(std::move(v)) {}
};

#define TLC_BINARY_OPS(X)                                                                          \
  X(Add, "+") X(Sub, "-") X(Mul, "*") X(Div, "/") X(FloorDiv, "//") X(FloorMod, "%") X(Min, "min") \
  X(Max, "max") X(Eq, "==") X(Ne, "!=") X(Lt, "<") X(Le, "<=") X(Gt, ">") X(Ge, ">=") X(And, "and") \
  X(Or, "or") X(BitAnd, "&") X(BitOr, "|") X(BitXor, "^") X(Shl, "<<") X(Shr, ">>")

enum class BinaryOp {
#define X(Name, Spelling) Name,
  TLC_BINARY_OPS(X)
#undef X
};
const char* binaryOpSpelling(BinaryOp op);
bool isComparison(BinaryOp op);  // Eq..Ge: result is bool
bool isLogical(BinaryOp op);     // And, Or: bool operands, bool result

struct Binary : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryOp op;
  Expr a, b;
  Binary(BinaryOp o, Expr x, Expr y, DType t, SourceLoc l)
      : ExprNode(kKind, t, l), op(o), a(std::move(x)), b(std::move(y)) {}
};

enum class UnaryOp { Neg, Not, BitNot };
const char* unaryOpSpelling(UnaryOp op);  // "-", "not", "~"

struct Unary : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryOp op;
  Expr a;
  Unary(UnaryOp o, Expr x, DType t, SourceLoc l) : ExprNode(kKind, t, l), op(o), a(std::move(x)) {}
};

struct Cast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr value;
  Cast(DType t, Expr v, SourceLoc l) : ExprNode(kKind, t, l), value(std::move(v)) {}
};

struct Select : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr cond, t, f;
  Select(Expr c, Expr x, Expr y, SourceLoc l)
      : ExprNode(kKind, x->dtype, l), cond(std::move(c)), t(std::move(x)), f(std::move(y)) {}
};

// A call of a pure builtin (exp, exp2, log, sqrt, rsqrt, abs, ...) or of a
// target intrinsic introduced by a lowering pass (named "<target>.<name>").
struct Call : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  std::string callee;
  std::vector<Expr> args;
  Call(std::string c, std::vector<Expr> a, DType t, SourceLoc l)
      : ExprNode(kKind, t, l), callee(std::move(c)), args(std::move(a)) {}
};

struct Load : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Buffer buffer;
  std::vector<Expr> indices;
  Load(Buffer b, std::vector<Expr> i, SourceLoc l)
      : ExprNode(kKind, b->dtype, l), buffer(std::move(b)), indices(std::move(i)) {}
};

// Checked downcast: nullptr when the node is of another kind.
template <class T>
const T* as(const Expr& e) {
  return e && e->kind == T::kKind ? static_cast<const T*>(e.get()) : nullptr;
}

Expr makeInt(int64_t v, DType t = DType::Int32, SourceLoc loc = {});
Expr makeFloat(double v, DType t = DType::Float32, SourceLoc loc = {});
Expr makeBool(bool v, SourceLoc loc = {});
Expr makeVarRef(const Var& v, SourceLoc loc = {});
// Operand dtypes must already agree (comparisons give bool).
Expr makeBinary(BinaryOp op, Expr a, Expr b, SourceLoc loc = {});
Expr makeUnary(UnaryOp op, Expr a, SourceLoc loc = {});
Expr makeCast(DType t, Expr v, SourceLoc loc = {});
Expr makeSelect(Expr cond, Expr t, Expr f, SourceLoc loc = {});
Expr makeCall(std::string callee, std::vector<Expr> args, DType t, SourceLoc loc = {});
Expr makeLoad(Buffer b, std::vector<Expr> indices, SourceLoc loc = {});

// Arithmetic helpers for passes: fold constants, skip identities, and insert
// casts to the promoted type.
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr floorDiv(Expr a, Expr b);
Expr floorMod(Expr a, Expr b);
Expr minExpr(Expr a, Expr b);
Expr maxExpr(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr logicalAnd(Expr a, Expr b);
// The constant value of an integer expression, if it is an IntImm.
bool constInt(const Expr& e, int64_t* out);

// ---------------------------------------------------------------------------
// Statements

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

struct StmtNode {
  StmtKind kind;
  SourceLoc loc;
  virtual ~StmtNode() = default;

 protected:
  StmtNode(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
};

struct SeqStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Seq;
  std::vector<Stmt> stmts;
  SeqStmt(std::vector<Stmt> s, SourceLoc l) : StmtNode(kKind, l), stmts(std::move(s)) {}
};

struct KernelStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Kernel;
  std::vector<Expr> grid;         // 1 to 3 extents, x first
  std::vector<Var> blockVars;     // one per grid extent
  int64_t threads;                // threads per block on GPU targets
  Stmt body;
  // Block rasterization (T.use_swizzle): with a 2-D or 3-D grid and swizzle
  // = G > 0, the blocks of each (bx, by) plane are launched in groups of G
  // rows of the grid, column by column within a group, so that neighbouring
  // blocks share operand tiles in L2; bz is not reordered; G = 1 is the row
  // order. 0: not given, the backend chooses (a GPU gemm mainloop takes
  // panels of rows). A schedule hint: every (bx, by[, bz]) still runs exactly once.
  int64_t swizzle = 0;
  KernelStmt(std::vector<Expr> g, std::vector<Var> v, int64_t t, Stmt b, SourceLoc l, int64_t swz = 0)
      : StmtNode(kKind, l), grid(std::move(g)), blockVars(std::move(v)), threads(t), body(std::move(b)), swizzle(swz) {}
};

// `versions` > 1 (shared buffers only): the buffer has that many versions
// (the stages of a software pipeline), each of its shape; every access names
// one of them through an enclosing VersionStmt (expand-pipelines writes these).
// `arrivals` (barrier buffers only, and then at least 1): the arrivals that
// complete a phase of each of its barriers.
struct AllocStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Alloc;
  Buffer buffer;
  int64_t versions = 1;
  int64_t arrivals = 0;
  AllocStmt(Buffer b, SourceLoc l, int64_t v = 1, int64_t arrive = 0)
      : StmtNode(kKind, l), buffer(std::move(b)), versions(v), arrivals(arrive) {}
};

enum class ForKind { Serial, Parallel, Pipelined, Unroll, Vectorized };
const char* forKindName(ForKind k);  // "serial", "parallel", ...

struct ForStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Var var;
  Expr min;
  Expr extent;
  ForKind forKind;
  // Pipelined loops only: the number of stages, and optional per-statement
  // order / stage overrides (empty when not given). Before pipeline-planning
  // they may be in TileLang's form: `group` splits the body's statements
  // into consecutive runs (the statement numbers in order), `order` and
  // `stage` then give one entry per group, and an entry -1 marks statements
  // TileLang's producer warps issue; pipeline-planning maps that form onto
  // the statements or replaces it (passes/pipeline_planning.h).
  int64_t numStages = 0;
  std::vector<int64_t> order;
  std::vector<int64_t> stage;
  std::vector<std::vector<int64_t>> group;
  // false: the loop never becomes a warp-specialized mainloop (sm_90a).
  bool warpSpecialize = true;
  // Parallel loops only: the outer loop of the gather nest T.c2d_im2col
  // writes (ir/im2col.h) carries the convolution's geometry, kernel,
  // stride, padding and dilation, each (h, w); empty otherwise. A hint
  // only: the CUDA backend loads the tile by TMA in im2col mode where the
  // nest is still exactly the one that geometry describes (matchIm2col).
  std::vector<int64_t> im2col;
  Stmt body;
  ForStmt(Var v, Expr mn, Expr ext, ForKind k, Stmt b, SourceLoc l)
      : StmtNode(kKind, l), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), forKind(k),
        body(std::move(b)) {}
  // Copies the loop attributes (num_stages, order, stage, group, warp_specialize, im2col) of `from`.
  void copyLoopAttributes(const ForStmt& from) {
    im2col = from.im2col;
    numStages = from.numStages;
    order = from.order;
    stage = from.stage;
    group = from.group;
    warpSpecialize = from.warpSpecialize;
  }
};

struct IfStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::If;
  Expr cond;
  Stmt thenBody;
  Stmt elseBody;  // may be null
  // A hint, written `if [likely] cond`: the condition usually holds (a copy's
  // test that its tile lies inside the tensor). It changes no value; the CPU
  // lowering hoists such tests so that the code they guard can be fused.
  bool likely = false;
  IfStmt(Expr c, Stmt t, Stmt e, SourceLoc l, bool isLikely = false)
      : StmtNode(kKind, l), cond(std::move(c)), thenBody(std::move(t)), elseBody(std::move(e)), likely(isLikely) {}
};

struct StoreStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;  // already of the buffer's dtype
  StoreStmt(Buffer b, std::vector<Expr> i, Expr v, SourceLoc l)
      : StmtNode(kKind, l), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)) {}
};

// Binds an immutable scalar for the extent of `body`.
struct LetStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Let;
  Var var;
  Expr value;
  Stmt body;
  LetStmt(Var v, Expr val, Stmt b, SourceLoc l)
      : StmtNode(kKind, l), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
};

// Evaluates an expression for its effect (target intrinsics after lowering).
struct EvaluateStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Evaluate;
  Expr value;
  EvaluateStmt(Expr v, SourceLoc l) : StmtNode(kKind, l), value(std::move(v)) {}
};

// Leaves the innermost enclosing loop, which is serial (the verifier checks).
struct BreakStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Break;
  explicit BreakStmt(SourceLoc l) : StmtNode(kKind, l) {}
};

// Goes on to the next iteration of the innermost enclosing loop, which is serial.
struct ContinueStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Continue;
  explicit ContinueStmt(SourceLoc l) : StmtNode(kKind, l) {}
};

// One barrier of a barrier buffer (MemScope::Barrier): `full[i]`.
struct BarrierRef {
  Buffer buffer;
  Expr index;
  explicit operator bool() const { return buffer != nullptr; }
};

// `async` (global -> shared only): the copy is issued, not finished. It
// reads its source when issued, joins the block's open group of
// asynchronous copies, and writes its destination when an AsyncWaitStmt
// completes that group; until then its destination elements must be
// neither read nor written. With a `barrier` (async only) it joins no
// group: its bytes count towards that barrier's current phase, and its
// destination is written when that phase completes.
// `usedWhen` (a bool, or null): a promise that the destination is read, until
// the next copy into it, only where this condition (evaluated with the copy)
// holds; a target may skip the copy where it does not. The interpreter copies
// always. hoist-guarded-copies writes it for the copies it moves out of an `if`.
struct CopyStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Copy;
  Region src, dst;
  bool async = false;
  BarrierRef barrier;
  Expr usedWhen;
  CopyStmt(Region s, Region d, SourceLoc l, bool a = false, BarrierRef bar = {}, Expr used = nullptr)
      : StmtNode(kKind, l), src(std::move(s)), dst(std::move(d)), async(a), barrier(std::move(bar)),
        usedWhen(std::move(used)) {}
};

struct GemmStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Gemm;
  Region a, b, c;
  bool transA = false, transB = false, clearAccum = false;
  GemmStmt(Region x, Region y, Region z, bool ta, bool tb, bool clear, SourceLoc l)
      : StmtNode(kKind, l), a(std::move(x)), b(std::move(y)), c(std::move(z)), transA(ta), transB(tb),
        clearAccum(clear) {}
};

struct FillStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Fill;
  Region dst;
  Expr value;  // of dst's dtype
  FillStmt(Region d, Expr v, SourceLoc l) : StmtNode(kKind, l), dst(std::move(d)), value(std::move(v)) {}
};

enum class ReduceKind { Sum, Max, Min, AbsSum, AbsMax };
const char* reduceKindName(ReduceKind k);  // "sum", "max", ...
// The value a reduction of kind `k` over `t` starts from: zero for the sums
// and AbsMax, the lowest value of `t` for Max (-inf for floats), the
// highest for Min (+inf).
Expr reduceIdentity(ReduceKind k, DType t, SourceLoc loc = {});

struct ReduceStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Reduce;
  ReduceKind reduceKind;
  Region src, dst;
  int dim;     // reduced dimension of src; dst has src's shape without it
  bool clear;  // false: the old dst value takes part
  ReduceStmt(ReduceKind k, Region s, Region d, int dm, bool c, SourceLoc l)
      : StmtNode(kKind, l), reduceKind(k), src(std::move(s)), dst(std::move(d)), dim(dm), clear(c) {}
};

enum class AtomicKind { Add, Max, Min };
const char* atomicKindName(AtomicKind k);  // "add", "max", "min"

// `buffer[indices] = op(buffer[indices], value)` as one atomic update. With
// `prev` (a thread's own buffer: local or var scope), the element's value
// before the update is stored at `prevIndices` of it.
struct AtomicStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Atomic;
  AtomicKind atomicKind;
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;
  Buffer prev;
  std::vector<Expr> prevIndices;
  AtomicStmt(AtomicKind k, Buffer b, std::vector<Expr> i, Expr v, SourceLoc l, Buffer p = nullptr,
             std::vector<Expr> pi = {})
      : StmtNode(kKind, l),
        atomicKind(k),
        buffer(std::move(b)),
        indices(std::move(i)),
        value(std::move(v)),
        prev(std::move(p)),
        prevIndices(std::move(pi)) {}
};

// A layout a shared or fragment buffer must have (T.annotate_layout). It
// changes no value, only where elements live: the interpreter and the CPU
// backend ignore it; the CUDA backend places the buffer as it says or reports
// why it cannot.
//   Swizzled        shared, [rows, cols] with rows of whole 16-byte chunks:
//                   row-major with the 16-byte chunks of a row XOR-swizzled by
//                   the row (layout::Layout::swizzled)
//   RowMajor        shared: plain row-major, no swizzle
//   RowGroups       fragment: registers, the row-group layout with
//                   `threadsPerRow` (G) threads per row and runs of `vector`
//                   (V) columns (compiler/backends/cuda/cuda_fragment_layout.h)
//   SharedFallback  fragment: shared memory instead of registers
// MmaAccumulator is written by the CUDA backend's layout inference (the
// mma.sync accumulator layout of a tensor-core gemm's fragment), not by users.
enum class LayoutKind { Swizzled, RowMajor, RowGroups, SharedFallback, MmaAccumulator };
// "swizzled", "row_major", "row_groups", "shared_fallback", "mma_accumulator"
const char* layoutKindName(LayoutKind k);
// The memory scope a layout kind applies to (Shared or Fragment).
MemScope layoutKindScope(LayoutKind k);

struct LayoutSpec {
  LayoutKind kind = LayoutKind::RowMajor;
  int64_t threadsPerRow = 0, vector = 0;  // RowGroups only, positive powers of two
  bool operator==(const LayoutSpec& o) const {
    return kind == o.kind && threadsPerRow == o.threadsPerRow && vector == o.vector;
  }
};
// As written in the tile IR: "swizzled", "row_groups(8, 4)".
std::string layoutSpecText(const LayoutSpec& l);

// Constrains the layout of `buffer` for its whole lifetime; where it stands
// does not matter beyond scoping (it must see the allocation, outside loops).
struct AnnotateLayoutStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::AnnotateLayout;
  Buffer buffer;
  LayoutSpec layout;
  AnnotateLayoutStmt(Buffer b, LayoutSpec spec, SourceLoc l) : StmtNode(kKind, l), buffer(std::move(b)), layout(spec) {}
};

// Writes lines to standard output (T.print; the line format is
// print_format.h's). Two forms:
//   value set:   one line with the scalar `value`; inside Parallel loops
//                `iteration` names their variables (one line per iteration).
//                With `element` set, the value is element `element[index...]`
//                of a buffer, and the line says so.
//   buffer set:  one line per element of the whole `buffer`, row-major
//                (targets lower it to element prints or print it themselves).
// `at` is the `.tl` location the line names ("k.tl:12"), `message` the
// user's text; both may be empty. Printing changes no value.
struct PrintTag {
  std::string name;
  Expr value;  // an integer
};

struct PrintStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Print;
  Expr value;
  Buffer buffer;
  std::string message, at;
  std::vector<PrintTag> iteration;
  std::string element;
  std::vector<Expr> index;
  PrintStmt(Expr v, Buffer b, std::string msg, std::string where, SourceLoc l)
      : StmtNode(kKind, l), value(std::move(v)), buffer(std::move(b)), message(std::move(msg)), at(std::move(where)) {}
};

// Every access of `buffers` (allocated with versions > 1) in `body` means
// version `version` of it (an integer in [0, versions)).
struct VersionStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Version;
  std::vector<Buffer> buffers;
  Expr version;
  Stmt body;
  VersionStmt(std::vector<Buffer> b, Expr v, Stmt bd, SourceLoc l)
      : StmtNode(kKind, l), buffers(std::move(b)), version(std::move(v)), body(std::move(bd)) {}
};

// Closes the block's open group of asynchronous copies (those issued since
// the last commit); an empty group is a group too.
struct AsyncCommitStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::AsyncCommit;
  explicit AsyncCommitStmt(SourceLoc l) : StmtNode(kKind, l) {}
};

// Waits until at most `pending` of the block's committed groups are
// unfinished: the older ones complete, their copies' destinations written
// and visible to every thread of the block.
struct AsyncWaitStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::AsyncWait;
  int64_t pending;
  AsyncWaitStmt(int64_t n, SourceLoc l) : StmtNode(kKind, l), pending(n) {}
};

// One arrival on `barrier` (a statement of the block, or of a role of a
// WarpSpecializeStmt, arrives once). With `expectBytes`, the arrival first
// announces that many more bytes of copies for the barrier's current phase.
// A phase completes when it has the allocation's `arrivals` and its copies
// have delivered every announced byte.
struct BarrierArriveStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::BarrierArrive;
  BarrierRef barrier;
  Expr expectBytes;  // null: a plain arrival
  BarrierArriveStmt(BarrierRef b, Expr bytes, SourceLoc l)
      : StmtNode(kKind, l), barrier(std::move(b)), expectBytes(std::move(bytes)) {}
};

// Waits until the phase of `barrier` whose parity (its number modulo 2,
// counting from 0) is `parity` has completed, that is, until the barrier's
// current phase has the other parity: on a fresh barrier a wait for parity 1
// returns at once.
struct BarrierWaitStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::BarrierWait;
  BarrierRef barrier;
  Expr parity;
  BarrierWaitStmt(BarrierRef b, Expr p, SourceLoc l) : StmtNode(kKind, l), barrier(std::move(b)), parity(std::move(p)) {}
};

// Warp specialization: `producer` runs on `producerThreads` threads added
// to the block, `consumer` on the block's own threads, at the same time; the
// two roles share the block's memory and order their accesses only through
// barriers. The statement completes when both roles have.
struct WarpSpecializeStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::WarpSpecialize;
  int64_t producerThreads;
  Stmt producer, consumer;
  WarpSpecializeStmt(int64_t threads, Stmt p, Stmt c, SourceLoc l)
      : StmtNode(kKind, l), producerThreads(threads), producer(std::move(p)), consumer(std::move(c)) {}
};

template <class T>
const T* as(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

// Flattens nested Seqs; a single statement is returned unwrapped.
Stmt makeSeq(std::vector<Stmt> stmts, SourceLoc loc = {});
// The statements of a body: a Seq's, in order, or the statement itself.
std::vector<Stmt> seqStmts(const Stmt& s);

// ---------------------------------------------------------------------------
// Functions and modules

struct Param {
  std::string name;
  Buffer buffer;  // set for tensor parameters (scope Global)
  Var scalar;     // set for scalar parameters
  SourceLoc loc;
};

// A compile-time parameter and the value it was bound to, kept for metadata.
struct Binding {
  std::string name;
  std::string value;  // as written: "128", "float16"
};

struct PrimFunc {
  std::string name;
  std::vector<Param> params;
  std::vector<Var> shapeVars;  // dynamic dimensions, in first-appearance order
  std::vector<Binding> bindings;
  Stmt body;
  SourceLoc loc;
};
using Func = std::shared_ptr<const PrimFunc>;

struct Module {
  std::vector<Func> funcs;
};

}  // namespace tlc::ir
