// Sema: checks a parsed `.tl` module and lowers it to the tile IR in one walk.
//
// Sema evaluates the AST directly: compile-time parameters and everything
// computed from them fold to constants as they are built, macros are inlined
// at each call, and each statement is checked (names, dtypes, shapes, memory
// scopes) and lowered to IR nodes that carry the statement's SourceLoc.
// The implementation is split by concern:
//   module_loader.cpp  imports and the module-level scope
//   lower_func.cpp     kernels: compile-time parameters, tensor/scalar params
//   tilelang_forms.cpp TileLang's spellings: decorators, kernel factories,
//                      dtype strings, macro parameter types
//   lower_expr.cpp     expressions: names, attributes, subscripts, calls
//   type_rules.cpp     operators and conversions (promotion, literals)
//   scalar_builtins.cpp exp/log/max/cast/ceildiv/... calls
//   lower_stmt.cpp     statements: assignment, if, expression statements
//   lower_loops.cpp    `for` loops and `with T.Kernel`
//   lower_tileops.cpp  alloc_*, copy, gemm, fill, reduce, atomic
//   lower_layout.cpp   layout values and annotate_layout
//   lower_print.cpp    T.print
//   macros.cpp         macro expansion
// Assumes: the AST came from parseModule (errors already reported there are
// tolerated: sema checks what it can). Guarantees: every user error is
// reported with a registered kind and a location; the IR it returns satisfies
// the invariants documented in compiler/ir/ir.h.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/ir/substitute.h"
#include "compiler/parser/ast.h"
#include "compiler/sema/builtins.h"
#include "compiler/sema/frontend.h"
#include "compiler/sema/scope.h"
#include "compiler/sema/stmt_builder.h"
#include "compiler/sema/value.h"
#include "compiler/support/diagnostics.h"

namespace tlc::sema {

struct ModuleInfo {
  std::string name;  // as imported ("math"); empty for the compiled file
  uint32_t file = 0;
  std::unique_ptr<ast::Module> ast;
  std::unique_ptr<Scope> scope;  // the module's macros, kernels and imports
};

// A call's arguments matched to a signature's parameter names.
struct CallArgs {
  std::vector<const ast::Expr*> slots;  // by parameter index; null when not given
  std::vector<const ast::Expr*> extra;  // further positional arguments (variadic builtins)
};

// A compile-time parameter with no value: a symbolic shape dimension if it
// appears in a tensor parameter's shape.
struct SymbolicParam {
  std::string name;
  SourceLoc loc;
  bool inShape = false;
  bool reported = false;  // an UnboundCompileParam error was given already
};

// TileLang's dtype strings and the language's dtype names: "float16",
// "float" (float32), "half", "int" (int32), "float8_e4m3fn", ... or nullopt.
std::optional<DType> parseDTypeSpelling(std::string_view name);
// The accepted spellings, for messages.
extern const char* const kDTypeSpellings;

// What a top-level definition is (tilelang_forms.cpp classifies them).
enum class DefForm {
  Kernel,    // `def name[compile-time params](params)`
  Macro,     // `macro name(...)` or `@T.macro def name(...)`
  PrimFunc,  // a top-level `@T.prim_func def main(...)`: free names bound by -D
  Factory,   // `def matmul(M, N, ...)` holding and returning a `@T.prim_func`
  Invalid,   // an error was reported; not lowered
};
struct DefInfo {
  DefForm form = DefForm::Kernel;
  const ast::FuncDef* primFunc = nullptr;  // Factory: the inner kernel
  const ast::Expr* tune = nullptr;         // `@T.tune(...)`, if any
};

// Whether `e` is a call of a scalar's `astype` method (`x.astype(dtype)`),
// whose callee is evaluated with the call, not alone.
bool isAstypeCall(const ast::Expr& e);

class Sema {
 public:
  Sema(SourceManager& sources, DiagnosticEngine& diags, const std::vector<Define>& defines);
  std::optional<ir::Module> run(uint32_t file);

  // ---- diagnostics
  // Reports an error; inside a macro expansion, notes point at the calls.
  Diagnostic& report(DiagKind kind, SourceLoc loc, std::string message);

  // ---- modules (module_loader.cpp)
  ModuleInfo* loadModule(const std::string& name, uint32_t file, std::unique_ptr<ast::Module> ast);
  const ModuleInfo* importModule(const std::string& name, SourceLoc loc, uint32_t fromFile);
  void declareModule(ModuleInfo& m);
  void bindDotted(ModuleInfo& m, const std::string& dotted, const Value& leaf, SourceLoc loc);

  // ---- kernels (lower_func.cpp)
  void bindGlobals(const ast::FuncDef& def, bool factory, ModuleInfo& m, ir::PrimFunc& fn);
  ir::Func lowerKernel(const ast::FuncDef& def, ModuleInfo& m);
  void bindCompileParam(const std::string& name, const ast::Expr* defaultValue, SourceLoc loc, ir::PrimFunc& fn);
  void lowerRuntimeParams(const std::vector<ast::Param>& params, ir::PrimFunc& fn);
  void checkUnboundParams(const std::vector<std::pair<std::string, SourceLoc>>& names, Scope& scope);
  Value bindFreeName(const ast::Expr& name);
  // `T.dynamic("M")`: a dynamic dimension, or the -D value of `M`.
  Value dynamicDimensions(const ast::Expr& names, const ast::Expr* dtype, SourceLoc loc);
  // `T.target(name)`: True when target_ is of that kind or architecture.
  Value targetTest(const ast::Expr& name, SourceLoc loc);
  Value dynamicDimension(const std::string& name, SourceLoc loc);
  // A buffer type annotation: `Tensor[shape, dtype]`, `T.SharedBuffer(shape, dtype)`, ...
  struct BufferType {
    BuiltinId id;
    std::string name;
    const ast::Expr* shape = nullptr;
    const ast::Expr* dtype = nullptr;
  };
  std::optional<BufferType> bufferTypeOf(const ast::Expr& ann, bool& failed);
  std::vector<ir::Expr> bufferTypeShape(const ast::Expr& shape);

  // ---- tuning spaces (lower_tune.cpp)
  // Checks the kernel's `@T.tune` (null: none) and, when tuning_ is set,
  // reports its space with the conditions evaluated on the current bindings.
  void lowerTuneSpace(const ast::Expr* decl, const std::vector<std::pair<std::string, SourceLoc>>& compileNames,
                      const ir::PrimFunc& fn);
  std::optional<std::vector<std::string>> tuneCandidates(const ast::Expr& list, const std::string& name, bool isBool);
  std::optional<TuneCondition> tuneCondition(const ast::Expr& cond);

  // ---- TileLang's forms (tilelang_forms.cpp)
  void classifyDefinitions(ModuleInfo& m);
  std::optional<BuiltinId> evalDecorator(const ast::Expr& decorator);
  void classifyFactory(ast::FuncDef& def, DefInfo& info);
  const ast::FuncDef* lowerFactoryPrelude(const ast::FuncDef& factory, ModuleInfo& m);
  const ast::FuncDef* lowerFactoryBlock(const ast::FuncDef& factory, const ast::Block& block, ModuleInfo& m);
  bool checkAssert(const ast::Stmt& s);
  bool checkMemoryOrder(const std::string& fname, const ast::Expr& order);
  // False after reporting that a macro argument does not fit its annotation.
  bool checkMacroAnnotation(const ast::Param& p, const Value& arg);
  // `coalesced_width=` of T.copy / T.Parallel and `policy=` of T.gemm:
  // checked, then left to the compiler's own choice (docs/language.md).
  bool checkCoalescedWidth(const ast::Expr* width);
  bool checkWarpPolicy(const ast::Expr* policy);
  // `scope=` of T.alloc_shared / alloc_fragment / alloc_local (TileLang's
  // storage scope names): checked against the allocation's own scope.
  bool checkAllocScope(const BuiltinInfo& alloc, const ast::Expr* scope);

  // ---- expressions (lower_expr.cpp)
  Value eval(const ast::Expr& e);
  Value evalNode(const ast::Expr& e);
  Value evalName(const ast::Expr& e);
  Value evalAttribute(const ast::Expr& e);
  Value evalSubscript(const ast::Expr& e);
  Value evalCall(const ast::Expr& e);
  Value applyCall(const Value& callee, const ast::Expr& call);
  Value evalTuple(const ast::Expr& e);
  // A tile-operation operand: a buffer, `A[i, j]` (a point) or `A[a:b, j]`.
  Value evalTileArg(const ast::Expr& e, const char* op);
  // Scalar indices of a buffer access, checked against its rank.
  std::optional<std::vector<ir::Expr>> evalIndices(const ir::Buffer& b, const ast::Expr& subscript);
  bool matchArgs(const ast::Expr& call, const std::string& callee, const std::vector<const char*>& params,
                 int required, bool variadic, CallArgs& out);

  // ---- type rules (type_rules.cpp)
  Value binary(ast::BinaryOp op, const Value& a, const Value& b, SourceLoc loc);
  Value composedMath(const BuiltinInfo& b, const Value& a, SourceLoc loc);
  ir::Expr expectCondition(const Value& v, const std::string& what);
  void lowerCumsum(const ast::Expr& call, const CallArgs& args);
  std::optional<int64_t> tileDim(const ast::Expr* arg, int64_t dflt, const ir::Buffer& src, int64_t rank,
                                 SourceLoc loc);
  Value unary(ast::UnaryOp op, const Value& a, SourceLoc loc);
  // `v` converted to dtype `t` (weak literals adapt; others are cast).
  ir::Expr convert(const Value& v, DType t, SourceLoc loc);
  // A scalar value or null after reporting what was expected.
  ir::Expr expectScalar(const Value& v, const std::string& what);
  ir::Expr expectInt(const Value& v, const std::string& what);
  ir::Expr expectBool(const Value& v, const std::string& what);
  std::optional<int64_t> constInt(const ast::Expr& e, const std::string& what);
  std::optional<bool> constBool(const ast::Expr& e, const std::string& what);
  std::optional<DType> evalDType(const ast::Expr& e, const std::string& what);
  // Two scalars brought to one dtype (weak literals adapt to the other side);
  // false after reporting a weak integer constant that the other side's dtype
  // cannot hold.
  bool unify(const Value& a, const Value& b, ir::Expr& x, ir::Expr& y, DType& t, bool& weak, SourceLoc loc);
  // Integer constants folded exactly: `x op y` (both constants of dtype `t`)
  // whose exact result lies outside `t` is a compile-time number widened to
  // int64 when `weak`, and an integer-overflow error otherwise. nullopt when
  // the operands are not both constants or the result fits.
  std::optional<Value> overflowingConstant(ir::BinaryOp op, const ir::Expr& x, const ir::Expr& y, DType t, bool weak,
                                           SourceLoc loc);
  // False after reporting out-of-range when the constant extent `c` (of a
  // tensor, buffer or grid) does not fit the int32 that extents are.
  bool checkInt32Extent(int64_t c, SourceLoc loc, const std::string& what);

  // ---- scalar builtins (scalar_builtins.cpp)
  Value callScalarBuiltin(const BuiltinInfo& b, const ast::Expr& call);
  ir::Expr floatOperand(const Value& v, ir::Expr x, const std::string& name);
  Value minMax(BuiltinId id, const Value& a, const Value& b, const std::string& name, SourceLoc loc);
  // T.reinterpret and the packed 4-bit readers (packed_builtins.cpp).
  Value callPackedBuiltin(const BuiltinInfo& b, const ast::Expr& call, CallArgs& args);

  // ---- statements (lower_stmt.cpp)
  void lowerBlockInto(const ast::Block& block);
  ir::Stmt lowerScopedBlock(const ast::Block& block, SourceLoc loc);
  void lowerStmt(const ast::Stmt& s);
  void lowerAssign(const ast::Stmt& s);
  void assignTo(const ast::Expr& target, const Value& v, const ast::Expr* valueExpr, SourceLoc loc);
  void lowerAugAssign(const ast::Stmt& s);
  void lowerIf(const ast::Stmt& s);
  void lowerExprStmt(const ast::Stmt& s);
  void bindName(const std::string& name, SourceLoc loc, Value v, bool isMutableVar = false);
  ir::Var freshVar(const std::string& base, DType t, SourceLoc loc);
  std::string uniqueName(const std::string& base);
  // Names visible here (scopes and builtins) closest to `name`, for hints.
  std::string suggestName(const std::string& name) const;
  // The source text at `loc` (e.g. a variable's name as the user wrote it).
  std::string sourceText(SourceLoc loc, const std::string& fallback) const;

  // ---- loops and kernels (lower_loops.cpp)
  void lowerFor(const ast::Stmt& s);
  void lowerWhile(const ast::Stmt& s);
  void lowerKernelBody(const ast::Block& block);
  std::vector<bool> threadPrivateSetup(const ast::Block& block, size_t first);
  void lowerConditional(const ast::Expr& condition, const std::string& what, const ast::Block& thenBlock,
                        const ast::Block& elseBlock, SourceLoc loc);
  void lowerIfFrame(const BuiltinInfo& b, const ast::Expr& ctx, const ast::Stmt& s);
  Value binding(const BuiltinInfo& b, const ast::Expr& call, const CallArgs& args);
  // With `valued` (`x = T.atomic_add(..., return_prev=True)`), the value is
  // the element's previous value (an error value where that is refused).
  Value lowerAtomic(const BuiltinInfo& b, const CallArgs& args, SourceLoc loc, bool valued = false);
  Value lowerAtomicValue(const BuiltinInfo& b, const ast::Expr& call);
  void lowerLoopJump(const ast::Stmt& s);
  void lowerWith(const ast::Stmt& s);

  // ---- reducers (lower_reducers.cpp)
  bool isReducer(const ir::Buffer& b) const;
  std::optional<ir::ReduceKind> reducerOp(const ast::Expr* opArg, const ast::Expr* replicationArg);
  void lowerReducerOp(const BuiltinInfo& b, const ast::Expr& call, const CallArgs& args);
  void reducerStore(const ir::Buffer& acc, const std::vector<ir::Expr>& idx, const ir::Expr& stored, SourceLoc loc);
  void reducerUpdate(const ir::Buffer& acc, const std::vector<ir::Expr>& idx, ir::Expr value, SourceLoc loc);
  // The updates of one reducer in the outermost Parallel nest being lowered.
  struct ReducerNest {
    ir::Buffer acc, partial;       // the reducer; the nest's partial values (the nest's shape)
    std::vector<ir::Expr> idx;     // the reducer's index in the updates, the nest's lets substituted
    std::vector<int> kept;         // per index: the nest variable it is, or -1
    std::vector<ir::Var> nest;     // the nest's variables, outermost first
    std::vector<int64_t> mins;     // and their loops' first values
    SourceLoc loc;                 // the first update
  };
  void emitPartialUpdate(const ReducerNest& u, ir::Expr value, SourceLoc loc);
  void finishReducers(const ir::Stmt& nest, SourceLoc loc);
  std::map<const ir::BufferNode*, ir::ReduceKind> reducers_;  // T.alloc_reducer buffers and their ops
  std::vector<ReducerNest> reducerNests_;
  // The constant ranges (min, extent) of the T.Parallel loops in scope, as
  // declared (loopRanges_ narrows them under conditions).
  std::map<const ir::VarNode*, std::pair<int64_t, int64_t>> parallelRanges_;
  // The variables of the non-Parallel loops inside the outermost Parallel loop.
  std::vector<ir::Var> nestSerialVars_;

  // ---- tile operations (lower_tileops.cpp)
  void lowerTileOp(const BuiltinInfo& b, const ast::Expr& call);
  bool outsideParallel(const std::string& op, SourceLoc loc);
  std::optional<std::vector<ir::Expr>> pointExtents(const Value& point, const std::vector<ir::Expr>& tile, SourceLoc loc);
  void lowerGemm(const BuiltinInfo& b, const ast::Expr& call, const CallArgs& args);
  void lowerReduce(const BuiltinInfo& b, const ast::Expr& call, const CallArgs& args);
  void lowerPrint(const ast::Expr& call, const CallArgs& args);  // lower_print.cpp
  void lowerIm2col(const ast::Expr& call, const CallArgs& args);  // lower_im2col.cpp
  Value lowerAlloc(const BuiltinInfo& b, const ast::Expr& call, const std::string& name, SourceLoc nameLoc);
  bool requireKernel(SourceLoc loc, const std::string& what);
  // `T.Pipelined`'s num_stages, order, stage, group and warp_specialize; false after an error.
  bool pipelineAttributes(const CallArgs& args, int64_t& numStages, std::vector<int64_t>& order,
                          std::vector<int64_t>& stage, std::vector<std::vector<int64_t>>& group,
                          bool& warpSpecialize);

  // ---- layout annotations (lower_layout.cpp)
  Value callLayoutBuiltin(const BuiltinInfo& b, const ast::Expr& call);
  void lowerAnnotateLayout(const ast::Expr& call, const CallArgs& args);
  void annotateLayout(const ast::Expr& bufferExpr, const ast::Expr& layoutExpr, SourceLoc loc);

  // ---- macros (macros.cpp)
  Value callMacro(const Value& callee, const ast::Expr& call);
  std::string macroChain(const ast::FuncDef& next) const;

  // ---- state shared by the files above
  SourceManager& sources_;
  DiagnosticEngine& diags_;
  std::vector<Define> defines_;
  std::vector<SourceLoc> defineLocs_;  // in a "<command line>" buffer
  std::vector<bool> defineUsed_;

  std::vector<std::unique_ptr<ModuleInfo>> modules_;
  std::map<std::string, ModuleInfo*> modulesByName_;
  std::set<std::string> importing_;  // cycle detection

  ModuleInfo* module_ = nullptr;  // the module whose code is being lowered
  Scope* scope_ = nullptr;
  StmtBuilder* builder_ = nullptr;
  std::vector<std::unique_ptr<Scope>> scopeStore_;

  std::map<const ast::FuncDef*, DefInfo> defForms_;
  FrontendTuning* tuning_ = nullptr;  // compileSource's `tuning` (null: not tuning)
  std::string onlyKernel_;            // compileSource's `onlyKernel` (empty: every kernel)
  std::string target_;                // compileSource's `target` (empty: none)
  std::set<const ast::Stmt*> failedGlobals_;  // module-level assignments that reported errors

  // Per kernel.
  ir::PrimFunc* currentFunc_ = nullptr;
  // Lowering a top-level `@T.prim_func`: undefined names are looked up in
  // the -D bindings (bindFreeName), each once.
  bool primFuncFreeNames_ = false;
  std::map<std::string, Value> freeNames_;
  // `T.dynamic` names of the kernel, and the dimensions left to the tensors' shapes.
  std::map<std::string, Value> dynamicDims_;
  std::vector<ir::Var> dynamicVars_;
  std::set<std::string> usedNames_;
  std::map<const ir::VarNode*, SymbolicParam> symbolic_;
  bool collectingShapes_ = false;
  bool inKernel_ = false;
  SourceLoc kernelLoc_;
  // T.use_swizzle in the kernel being lowered: the panel size (0: none).
  int64_t kernelSwizzle_ = 0;
  SourceLoc kernelSwizzleLoc_;
  int64_t kernelThreads_ = 0;
  // The kernel's thread block as TileLang writes it: `threads=(32, 4)` is {32, 4}.
  std::vector<int64_t> kernelThreadDims_;
  // The kernel's block indices (bx, by, bz as the grid has them).
  std::vector<ir::Var> kernelBlockVars_;
  // The statements after `T.get_thread_binding()` in a kernel's body run once
  // per thread: the Parallel loop over the block's threads that holds them,
  // and where the first binding is.
  ir::Var threadVar_;
  SourceLoc perThreadLoc_;
  // The kernel's local and var buffers allocated outside per-thread code:
  // one copy for the block.
  std::vector<ir::Buffer> blockPrivate_;
  // Loops around the statement being lowered, and the outermost `T.Parallel`
  // among them (unknown when none).
  int loopDepth_ = 0;
  SourceLoc parallelLoc_;
  // The loops around the statement, innermost last, for break and continue.
  struct LoopFrame {
    ir::ForKind kind;
    std::string iterator;  // `T.serial`, `range`, ...
    SourceLoc loc;
  };
  std::vector<LoopFrame> loops_;
  // The variables of the enclosing T.Parallel loops and their source names,
  // outermost first, also inside macros called there (T.print names the
  // iteration with them).
  std::vector<std::pair<std::string, ir::Var>> parallelIteration_;
  // T.annotate_layout in the kernel being lowered: where each buffer was annotated.
  std::map<const ir::BufferNode*, SourceLoc> layoutAnnotations_;
  struct MacroFrame {
    const ast::FuncDef* macro;
    SourceLoc callLoc;
    bool returned = false;
    Value result;
  };
  std::vector<MacroFrame> macroStack_;
  // Macro expansions in the current kernel; bounded so that macros calling
  // macros several times cannot blow up exponentially.
  int macroExpansions_ = 0;
  static constexpr int kMaxMacroExpansions = 4000;
  // Macro calls nested deeper than this are reported (docs/language.md).
  static constexpr size_t kMaxMacroDepth = 64;
  // Macros whose expansion in the current kernel reported errors: later
  // calls fail at once instead of expanding (and reporting) the body again.
  std::set<const ast::FuncDef*> failedMacros_;
  // Scalar bindings in the current kernel (bounded by ir::kMaxKernelLets).
  int kernelLets_ = 0;
  // Nesting of the source expression being evaluated (eval in lower_expr.cpp).
  int evalDepth_ = 0;
  void bindLet(ir::Var var, ir::Expr value, SourceLoc loc);
  // Each scalar binding's value, with the bindings it uses expanded: the
  // extent of `x[kv_start:kv_end]` is the constant difference of the values.
  ir::VarMap letValues_;
  // Constant ranges [min, min + extent) of the loop variables in scope, for
  // bounds checks of accesses such as `F[i, j]` in `T.Parallel` loops.
  struct LoopRange {
    int64_t min, extent;
    SourceLoc loopLoc;
  };
  std::map<const ir::VarNode*, LoopRange> loopRanges_;
  void narrowLoopRanges(const ir::Expr& cond, bool negated = false);
  // `f()` with the loop ranges that `cond` (or `not cond`) narrows, restored
  // afterwards: a branch of an `if`, an arm of a conditional.
  template <class F>
  auto underCondition(const ir::Expr& cond, bool negated, F&& f) {
    auto outer = loopRanges_;
    narrowLoopRanges(cond, negated);
    auto r = f();
    loopRanges_ = std::move(outer);
    return r;
  }

  // Pushes a scope for the lifetime of the guard.
  struct ScopeGuard {
    Sema& s;
    Scope* saved;
    ScopeGuard(Sema& sema, bool frameRoot, Scope* parent = nullptr);
    ~ScopeGuard();
  };
};

}  // namespace tlc::sema
