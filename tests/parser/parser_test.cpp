// The parser: precedence and associativity, statements, definitions,
// locations, and error recovery (several errors per run, never a crash or a
// hang, whatever the input).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "compiler/lexer/lexer.h"
#include "compiler/parser/ast_dump.h"
#include "compiler/parser/parser.h"

using namespace tlc;
using namespace tlc::ast;

namespace {

struct Parsed {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::unique_ptr<Module> module;
  explicit Parsed(const std::string& text) {
    uint32_t f = sm.addBuffer("t.tl", text);
    module = parseModule(sm, diags, f);
  }
  std::vector<DiagKind> errorKinds() const {
    std::vector<DiagKind> k;
    for (const Diagnostic& d : diags.diagnostics()) k.push_back(d.kind);
    return k;
  }
  const Block& body(size_t fn = 0) const { return module->funcs.at(fn)->body; }
};

// A compact, fully parenthesized rendering, written independently of
// dumpAst so the two check each other.
std::string sexpr(const Expr* e) {
  if (!e) return "_";
  auto all = [&](size_t from) {
    std::string s;
    for (size_t i = from; i < e->operands.size(); ++i) s += " " + sexpr(e->operands[i].get());
    return s;
  };
  switch (e->kind) {
    case ExprKind::Name: return e->name;
    case ExprKind::Int: return std::to_string(e->intValue);
    case ExprKind::Float: return "f" + std::to_string(e->floatValue);
    case ExprKind::Bool: return e->boolValue ? "True" : "False";
    case ExprKind::String: return "'" + e->name + "'";
    case ExprKind::None: return "None";
    case ExprKind::Attribute: return "(. " + sexpr(e->operands[0].get()) + " " + e->name + ")";
    case ExprKind::Call: {
      std::string s = "(call " + sexpr(e->operands[0].get()) + all(1);
      for (const Keyword& k : e->keywords) s += " " + k.name + "=" + sexpr(k.value.get());
      return s + ")";
    }
    case ExprKind::Subscript: return "([] " + sexpr(e->operands[0].get()) + all(1) + ")";
    case ExprKind::Slice: return "(:" + all(0) + ")";
    case ExprKind::Tuple: return "(tuple" + all(0) + ")";
    case ExprKind::Binary: return std::string("(") + binaryOpSpelling(e->binaryOp) + all(0) + ")";
    case ExprKind::Unary: return std::string("(") + unaryOpSpelling(e->unaryOp) + all(0) + ")";
    case ExprKind::IfElse: return "(ifelse" + all(0) + ")";
    case ExprKind::Dict: return "(dict" + all(0) + ")";
    case ExprKind::Lambda: return "(lambda" + all(0) + ")";
  }
  return "?";
}

// Parses `x = <text>` inside a function and renders the right-hand side.
std::string expr(const std::string& text) {
  Parsed p("def f():\n    x = " + text + "\n");
  if (p.diags.hasErrors()) return "error: " + p.diags.renderAll();
  REQUIRE(p.body().size() == 1);
  return sexpr(p.body()[0]->value.get());
}

}  // namespace

TEST_CASE("arithmetic precedence and associativity follow Python") {
  CHECK(expr("a + b * c") == "(+ a (* b c))");
  CHECK(expr("a - b - c") == "(- (- a b) c)");
  CHECK(expr("a / b // c % d") == "(% (// (/ a b) c) d)");
  CHECK(expr("-a ** 2") == "(- (** a 2))");
  CHECK(expr("a ** b ** c") == "(** a (** b c))");
  CHECK(expr("2 ** -1") == "(** 2 (- 1))");
  CHECK(expr("~a + +b") == "(+ (~ a) (+ b))");
  CHECK(expr("(a + b) * c") == "(* (+ a b) c)");
}

TEST_CASE("bitwise, shift, comparison and boolean precedence") {
  CHECK(expr("a | b ^ c & d << e + f") == "(| a (^ b (& c (<< d (+ e f)))))");
  CHECK(expr("a >> 1 << 2") == "(<< (>> a 1) 2)");
  CHECK(expr("a < b + 1") == "(< a (+ b 1))");
  CHECK(expr("a == b and c != d or e >= f") == "(or (and (== a b) (!= c d)) (>= e f))");
  CHECK(expr("not a < b and c") == "(and (not (< a b)) c)");
  CHECK(expr("a | b == c") == "(== (| a b) c)");
  CHECK(expr("a <= b") == "(<= a b)");
  CHECK(expr("a > b") == "(> a b)");
}

TEST_CASE("the conditional expression binds loosest and nests to the right") {
  CHECK(expr("a if c else b") == "(ifelse a c b)");
  CHECK(expr("a + 1 if c or d else b if e else f") == "(ifelse (+ a 1) (or c d) (ifelse b e f))");
  CHECK(expr("max(C[i, j], 0.0) if i < j else -C[i, j]") ==
        "(ifelse (call max ([] C i j) f0.000000) (< i j) (- ([] C i j)))");
}

TEST_CASE("postfix: calls with keywords, subscripts with slices, attributes") {
  CHECK(expr("T.copy(A[by * bm, k], A_s)") == "(call (. T copy) ([] A (* by bm) k) A_s)");
  CHECK(expr("T.gemm(a, b, c, transpose_B=True)") == "(call (. T gemm) a b c transpose_B=True)");
  CHECK(expr("f()") == "(call f)");
  CHECK(expr("f(a,)") == "(call f a)");
  CHECK(expr("a[i, j:k]") == "([] a i (: j k))");
  CHECK(expr("a[:, 1:]") == "([] a (: _ _) (: 1 _))");
  CHECK(expr("a[:n]") == "([] a (: _ n))");
  CHECK(expr("a.shape[0]") == "([] (. a shape) 0)");
  CHECK(expr("f(x)(y)[0].z") == "(. ([] (call (call f x) y) 0) z)");
}

TEST_CASE("tuples: parenthesized, bare, empty, single, list displays") {
  CHECK(expr("(a, b)") == "(tuple a b)");
  CHECK(expr("a, b") == "(tuple a b)");
  CHECK(expr("(a,)") == "(tuple a)");
  CHECK(expr("()") == "(tuple)");
  CHECK(expr("(a)") == "a");
  CHECK(expr("[M, K]") == "(tuple M K)");
  // A list display may unpack a tuple: `[*shape[:-1], d]`.
  CHECK(expr("[*s, d]") == "(tuple (* s) d)");
  CHECK(expr("Tensor[(M, K), float16]") == "([] Tensor (tuple M K) float16)");
}

TEST_CASE("literals") {
  CHECK(expr("0x10 + 1_000") == "(+ 16 1000)");
  CHECK(expr("1.5") == "f1.500000");
  CHECK(expr("True and False or None") == "(or (and True False) None)");
  CHECK(expr("'ab' \"cd\"") == "'abcd'");
}

TEST_CASE("statements: assignment forms, augmented assignment, pass, return") {
  Parsed p(
      "macro m(a, b: int32):\n"
      "    x = 1\n"
      "    a, b = b, a\n"
      "    C[i, j] = 0\n"
      "    x += 2\n"
      "    C[i] //= 3\n"
      "    x **= 2\n"
      "    x <<= 1\n"
      "    pass\n"
      "    return a, b\n"
      "    return\n");
  CHECK_FALSE(p.diags.hasErrors());
  const Block& b = p.body();
  REQUIRE(b.size() == 10);
  CHECK(b[0]->kind == StmtKind::Assign);
  CHECK(sexpr(b[1]->target.get()) == "(tuple a b)");
  CHECK(sexpr(b[1]->value.get()) == "(tuple b a)");
  CHECK(sexpr(b[2]->target.get()) == "([] C i j)");
  CHECK(b[3]->kind == StmtKind::AugAssign);
  CHECK(b[3]->augOp == BinaryOp::Add);
  CHECK(b[4]->augOp == BinaryOp::FloorDiv);
  CHECK(b[5]->augOp == BinaryOp::Pow);
  CHECK(b[6]->augOp == BinaryOp::Shl);
  CHECK(b[7]->kind == StmtKind::Pass);
  CHECK(b[8]->kind == StmtKind::Return);
  CHECK(sexpr(b[8]->value.get()) == "(tuple a b)");
  CHECK(b[9]->value == nullptr);
  // Macro parameters may omit their annotation.
  const FuncDef& m = *p.module->funcs[0];
  CHECK(m.isMacro);
  REQUIRE(m.params.size() == 2);
  CHECK(m.params[0].annotation == nullptr);
  CHECK(sexpr(m.params[1].annotation.get()) == "int32");
}

TEST_CASE("for, with, if/elif/else") {
  Parsed p(
      "def f():\n"
      "    for i, j in T.Parallel(4, 8):\n"
      "        pass\n"
      "    for (a, b) in z:\n"
      "        pass\n"
      "    with T.Kernel(8, threads=128) as (bx, by):\n"
      "        pass\n"
      "    with T.Kernel(1) as bx:\n"
      "        pass\n"
      "    with ctx():\n"
      "        pass\n"
      "    if a:\n"
      "        x = 1\n"
      "    elif b:\n"
      "        x = 2\n"
      "    elif c: x = 3\n"
      "    else:\n"
      "        x = 4\n");
  CHECK_FALSE(p.diags.hasErrors());
  const Block& b = p.body();
  REQUIRE(b.size() == 6);
  CHECK(b[0]->kind == StmtKind::For);
  CHECK(b[0]->names == std::vector<std::string>{"i", "j"});
  CHECK(b[0]->nameLocs.size() == 2);
  CHECK(sexpr(b[0]->value.get()) == "(call (. T Parallel) 4 8)");
  CHECK(b[1]->names == std::vector<std::string>{"a", "b"});
  CHECK(b[2]->kind == StmtKind::With);
  CHECK(b[2]->names == std::vector<std::string>{"bx", "by"});
  CHECK(b[3]->names == std::vector<std::string>{"bx"});
  CHECK(b[4]->names.empty());
  const Stmt& ifs = *b[5];
  CHECK(ifs.kind == StmtKind::If);
  REQUIRE(ifs.orelse.size() == 1);
  const Stmt& elif1 = *ifs.orelse[0];
  CHECK(elif1.kind == StmtKind::If);
  CHECK(sexpr(elif1.value.get()) == "b");
  REQUIRE(elif1.orelse.size() == 1);
  const Stmt& elif2 = *elif1.orelse[0];
  CHECK(sexpr(elif2.value.get()) == "c");
  REQUIRE(elif2.orelse.size() == 1);
  CHECK(sexpr(elif2.orelse[0]->value.get()) == "4");
}

TEST_CASE("definitions, compile-time parameters and imports") {
  Parsed p(
      "import math\n"
      "import tl.reduce as r\n"
      "from tl.ops import a, b\n"
      "from x import (c,\n"
      "               d,)\n"
      "\n"
      "def gemm[M, N, block_M=128, dtype=float16,](\n"
      "        A: Tensor[(M, N), dtype], n: int32,):\n"
      "    pass\n"
      "macro helper(x):\n"
      "    pass\n");
  CHECK_FALSE(p.diags.hasErrors());
  REQUIRE(p.module->imports.size() == 4);
  CHECK(p.module->imports[0].module == "math");
  CHECK(p.module->imports[1].module == "tl.reduce");
  CHECK(p.module->imports[1].alias == "r");
  CHECK(p.module->imports[2].names == std::vector<std::string>{"a", "b"});
  CHECK(p.module->imports[3].names == std::vector<std::string>{"c", "d"});
  REQUIRE(p.module->funcs.size() == 2);
  const FuncDef& g = *p.module->funcs[0];
  CHECK_FALSE(g.isMacro);
  CHECK(g.name == "gemm");
  REQUIRE(g.compileParams.size() == 4);
  CHECK(g.compileParams[0].defaultValue == nullptr);
  CHECK(sexpr(g.compileParams[2].defaultValue.get()) == "128");
  CHECK(sexpr(g.compileParams[3].defaultValue.get()) == "float16");
  REQUIRE(g.params.size() == 2);
  CHECK(sexpr(g.params[0].annotation.get()) == "([] Tensor (tuple M N) dtype)");
  CHECK(g.loc.line == 7);
  CHECK(g.loc.col == 5);
  CHECK(p.module->funcs[1]->isMacro);
}

TEST_CASE("a bare string statement is a docstring and is dropped") {
  Parsed p("def f():\n    \"\"\"Computes\n    things.\"\"\"\n    x = 1\n");
  CHECK_FALSE(p.diags.hasErrors());
  REQUIRE(p.body().size() == 1);
  CHECK(p.body()[0]->kind == StmtKind::Assign);
}

TEST_CASE("locations: calls point at the callee, operators span the expression") {
  Parsed p("def f():\n    y = T.gemm(A, B) + a[i, j]\n");
  REQUIRE(p.body().size() == 1);
  const Stmt& s = *p.body()[0];
  CHECK(s.loc.line == 2);
  CHECK(s.loc.col == 5);
  CHECK(s.loc.len == 26);
  const Expr& add = *s.value;
  CHECK(add.loc.col == 9);
  CHECK(add.loc.len == 22);
  const Expr& call = *add.operands[0];
  CHECK(call.kind == ExprKind::Call);
  CHECK(call.loc.col == 9);
  CHECK(call.loc.len == 6);  // `T.gemm`
  const Expr& sub = *add.operands[1];
  CHECK(sub.loc.col == 24);
  CHECK(sub.loc.len == 7);  // `a[i, j]`
}

TEST_CASE("one run reports several errors and keeps the good statements") {
  Parsed p(
      "def f():\n"
      "    x = (1 +\n"
      "    y = 2\n"
      "    for i in range(4)\n"
      "        z = 1\n"
      "    w = = 3\n"
      "    ok = 4\n"
      "def g(a: int32):\n"
      "    T.copy(a b)\n"
      "    fine = 5\n");
  std::vector<DiagKind> kinds = p.errorKinds();
  CHECK(kinds.size() >= 3);
  CHECK(std::count(kinds.begin(), kinds.end(), DiagKind::ExpectedToken) >= 2);
  CHECK(std::count(kinds.begin(), kinds.end(), DiagKind::ExpectedExpression) >= 1);
  REQUIRE(p.module->funcs.size() == 2);
  // `ok = 4` and `fine = 5` survive.
  CHECK(sexpr(p.body(0).back()->target.get()) == "ok");
  CHECK(sexpr(p.body(1).back()->target.get()) == "fine");
}

TEST_CASE("messages name what was expected and where") {
  Parsed p("def f():\n    for i in range(4)\n        pass\n");
  REQUIRE(p.diags.diagnostics().size() == 1);
  const Diagnostic& d = p.diags.diagnostics()[0];
  CHECK(d.kind == DiagKind::ExpectedToken);
  CHECK(d.message == "expected `:` after the `for` header, found end of line");
  CHECK(d.loc.line == 2);
  CHECK(d.loc.col == 22);
}

TEST_CASE("errors in a failed header's body are still found; its else branch is skipped quietly") {
  Parsed p(
      "def f():\n"
      "    if a b:\n"
      "        x = = 1\n"
      "    else:\n"
      "        pass\n"
      "    y = 1\n");
  std::vector<DiagKind> kinds = p.errorKinds();
  REQUIRE(kinds.size() == 2);
  CHECK(p.diags.diagnostics()[0].loc.line == 2);
  CHECK(p.diags.diagnostics()[1].loc.line == 3);
  REQUIRE(p.body().size() == 1);
  CHECK(sexpr(p.body()[0]->target.get()) == "y");
}

TEST_CASE("layout errors") {
  CHECK(Parsed("  def f():\n    pass\n").errorKinds() == std::vector<DiagKind>{DiagKind::UnexpectedIndent});
  CHECK(Parsed("def f():\n    x = 1\n        y = 2\n").errorKinds() ==
        std::vector<DiagKind>{DiagKind::UnexpectedIndent});
  CHECK(Parsed("def f():\n    if x:\n    y = 2\n").errorKinds() ==
        std::vector<DiagKind>{DiagKind::ExpectedIndentedBlock});
  CHECK(Parsed("def f():\n# only a comment\n").errorKinds() ==
        std::vector<DiagKind>{DiagKind::ExpectedIndentedBlock});
  // An indented first line still lets the definitions parse.
  Parsed indented("  def f():\n    pass\n");
  CHECK(indented.module->funcs.size() == 1);
}

TEST_CASE("unsupported Python syntax is named") {
  auto kindOf = [](const std::string& body) {
    Parsed p("def f():\n    " + body + "\n");
    return p.errorKinds();
  };
  std::vector<DiagKind> unsupported{DiagKind::UnsupportedSyntax};
  CHECK(kindOf("while x:\n        pass").empty());
  CHECK(kindOf("while x:\n        pass\n    else:\n        pass") == unsupported);
  CHECK(kindOf("try:\n        pass") == unsupported);
  // break and continue are statements of the language (checked by sema).
  CHECK(kindOf("break").empty());
  CHECK(kindOf("continue").empty());
  CHECK(kindOf("a[0] = b = c") == unsupported);
  // lambda parses (sema takes it only as the index map of a layout it ignores).
  CHECK(kindOf("x = f(lambda i: i)").empty());
  CHECK(kindOf("x = f(lambda: 0, lambda i, j: i + j)").empty());
  CHECK(expr("f(lambda i, j: i + j, k=lambda: 0)") == "(call f (lambda i j (+ i j)) k=(lambda 0))");
  CHECK(kindOf("x = a < b < c") == unsupported);
  CHECK(kindOf("x = a[1:2:3]") == unsupported);
  CHECK(kindOf("x = {1, 2}") == unsupported);
  CHECK(kindOf("x: int32 = 1") == unsupported);
  CHECK(kindOf("f(*args)") == unsupported);
  CHECK(kindOf("for i in T.serial(4):\n        def g():\n            pass") == unsupported);
  CHECK(Parsed("def f():\n    def g():\n        def h():\n            pass\n").errorKinds() == unsupported);
  CHECK(Parsed("def f():\n    import m\n").errorKinds() == unsupported);
  // Names that only look like statements are still names.
  CHECK(kindOf("while_ = 1").empty());
  CHECK(kindOf("x = lambda_(1)").empty());
}

TEST_CASE("TileLang's forms: decorators, parameter defaults, nested definitions, dicts") {
  Parsed p(
      "@tilelang.jit(out_idx=[-1])\n"
      "@T.prim_func\n"
      "def f(M, block_M=64, A: T.Tensor((M,), \"float16\") = None):\n"
      "    @T.macro\n"
      "    def g(x, k=1):\n"
      "        pass\n"
      "    macro h(y):\n"
      "        pass\n"
      "    T.annotate_layout({a: 1, b: 2,})\n"
      "    return g\n");
  CHECK(p.errorKinds().empty());
  REQUIRE(p.module->funcs.size() == 1);
  const FuncDef& f = *p.module->funcs[0];
  REQUIRE(f.decorators.size() == 2);
  CHECK(f.decorators[0]->kind == ExprKind::Call);
  CHECK(f.decorators[1]->kind == ExprKind::Attribute);
  REQUIRE(f.params.size() == 3);
  CHECK(!f.params[0].annotation);
  CHECK(!f.params[0].defaultValue);
  CHECK(f.params[1].defaultValue->intValue == 64);
  CHECK(f.params[2].annotation->kind == ExprKind::Call);
  CHECK(f.params[2].defaultValue->kind == ExprKind::None);
  REQUIRE(f.body.size() == 4);
  REQUIRE(f.body[0]->kind == StmtKind::Def);
  const FuncDef& g = *f.body[0]->def;
  CHECK(g.name == "g");
  CHECK(!g.isMacro);  // `@T.macro` is given its meaning by sema
  REQUIRE(g.decorators.size() == 1);
  CHECK(g.decorators[0]->name == "macro");  // `macro` after `.` is a name
  CHECK(f.body[1]->def->isMacro);
  const Expr& dict = *f.body[2]->value->operands[1];
  CHECK(dict.kind == ExprKind::Dict);
  CHECK(dict.operands.size() == 4);
  // A decorator must be followed by a definition.
  CHECK(Parsed("@T.prim_func\nx = 1\n").errorKinds() == std::vector<DiagKind>{DiagKind::ExpectedToken});
}

TEST_CASE("assignment targets are checked") {
  auto kinds = [](const std::string& body) { return Parsed("def f():\n    " + body + "\n").errorKinds(); };
  std::vector<DiagKind> bad{DiagKind::InvalidAssignTarget};
  CHECK(kinds("f(x) = 1") == bad);
  CHECK(kinds("a.b = 1") == bad);
  CHECK(kinds("1 = a") == bad);
  CHECK(kinds("a + b = 1") == bad);
  CHECK(kinds("a, b += 1") == bad);
  CHECK(kinds("a, f(x) = 1, 2") == bad);
  CHECK(kinds("a, b[0] = 1, 2").empty());
}

TEST_CASE("Python forms of TileLang factories: assert, is None, chained names, return annotations, import *") {
  Parsed p(
      "from tilelang.autotuner import *\n"
      "def f(M, scale=None) -> torch.Tensor:\n"
      "    assert M % 16 == 0, \"M must be a multiple of 16\"\n"
      "    if scale is not None:\n"
      "        pass\n"
      "    BK = BV = 64\n");
  INFO(p.diags.renderAll());
  REQUIRE(p.errorKinds().empty());
  REQUIRE(p.module->imports.size() == 1);
  CHECK(p.module->imports[0].names == std::vector<std::string>{"*"});
  const Block& b = p.body();
  REQUIRE(b.size() == 4);
  CHECK(b[0]->kind == StmtKind::Assert);
  CHECK(b[0]->value->kind == ExprKind::Binary);
  CHECK(b[0]->target->kind == ExprKind::String);
  CHECK(b[1]->value->binaryOp == BinaryOp::Ne);  // `is not`
  // `BK = BV = 64` is `BK = 64` then `BV = BK`.
  CHECK(b[2]->target->name == "BK");
  CHECK(b[2]->value->kind == ExprKind::Int);
  CHECK(b[3]->target->name == "BV");
  CHECK(b[3]->value->name == "BK");
}

TEST_CASE("call argument order and duplicates") {
  Parsed pos("def f():\n    g(a=1, 2)\n");
  CHECK(pos.errorKinds() == std::vector<DiagKind>{DiagKind::PositionalAfterKeyword});
  Parsed dup("def f():\n    g(a=1, a=2)\n");
  REQUIRE(dup.errorKinds() == std::vector<DiagKind>{DiagKind::DuplicateKeywordArgument});
  CHECK(dup.diags.diagnostics()[0].notes.size() == 1);
}

TEST_CASE("deep nesting is reported, not followed") {
  std::string deep = "def f():\n    x = " + std::string(100000, '(') + "1" + std::string(100000, ')') + "\n";
  Parsed p(deep);
  CHECK(p.errorKinds() == std::vector<DiagKind>{DiagKind::NestingTooDeep});
  std::string neg = "def f():\n    x = " + std::string(100000, '-') + "1\n";
  CHECK(Parsed(neg).errorKinds() == std::vector<DiagKind>{DiagKind::NestingTooDeep});
  std::string blocks = "def f():\n";
  for (int i = 1; i < 400; ++i) blocks += std::string(i * 4, ' ') + "if x:\n";
  blocks += std::string(400 * 4, ' ') + "pass\n";
  Parsed b(blocks);
  CHECK(b.diags.hasKind(DiagKind::NestingTooDeep));
  // Moderate nesting is fine.
  std::string ok = "def f():\n    x = " + std::string(50, '(') + "1" + std::string(50, ')') + "\n";
  CHECK_FALSE(Parsed(ok).diags.hasErrors());
}

TEST_CASE("long operator chains parse iteratively") {
  std::string chain = "def f():\n    x = a";
  for (int i = 0; i < 900; ++i) chain += " + a";
  chain += "\n";
  CHECK_FALSE(Parsed(chain).diags.hasErrors());
}

// Token soup from the language's own vocabulary: the parser must terminate,
// never throw and always return a module.
TEST_CASE("random token sequences never crash or hang the parser") {
  const char* words[] = {"def", "macro", "f", "(", ")", "[", "]", ":", ",", "=", "+", "*", "**", "-", "not",
                         "if", "else", "elif", "for", "in", "with", "as", "return", "pass", "import", "from",
                         "1", "2.5", "'s'", "x", ".", "\n", "\n    ", "\n        ", "and", "or", "<", "=="};
  std::mt19937 rng(42);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    size_t n = rng() % 60;
    for (size_t i = 0; i < n; ++i) {
      text += words[rng() % (sizeof words / sizeof *words)];
      text += ' ';
    }
    CAPTURE(text);
    std::unique_ptr<Parsed> p;
    CHECK_NOTHROW(p = std::make_unique<Parsed>(text));
    if (p) {
      CHECK(p->module != nullptr);
      CHECK_NOTHROW(dumpAst(*p->module));
    }
  }
}

TEST_CASE("lexing and parsing are fast on a large file") {
  std::string kernel =
      "def k{N}[M, N, K, bm=128](A: Tensor[(M, K), float16], C: Tensor[(M, N), float32]):\n"
      "    with T.Kernel(ceildiv(N, 128), ceildiv(M, bm), threads=128) as (bx, by):\n"
      "        A_s = T.alloc_shared((bm, 32), float16)\n"
      "        for k in T.Pipelined(ceildiv(K, 32), num_stages=3):\n"
      "            T.copy(A[by * bm, k * 32], A_s)\n"
      "        for i, j in T.Parallel(bm, 128):\n"
      "            C[i, j] = max(C[i, j], 0.0) if i < j else -C[i, j] * 2 + 1\n";
  std::string text;
  for (int i = 0; text.size() < 2'000'000; ++i) {
    std::string k = kernel;
    k.replace(k.find("{N}"), 3, std::to_string(i));
    text += k;
  }
  auto t0 = std::chrono::steady_clock::now();
  Parsed p(text);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("lex+parse of " << text.size() / 1024 << " KiB: " << ms << " ms");
  CHECK_FALSE(p.diags.hasErrors());
  CHECK(p.module->funcs.size() > 3000);
  CHECK(ms < 5000);  // generous: unoptimized and sanitizer builds are much slower
}

TEST_CASE("the top level holds name assignments beside definitions and imports") {
  Parsed ok("BLOCK = 64\nBM, BN = 16, BLOCK\nM = T.dynamic(\"m\")\ndef f(A: Tensor[(4,), float32]):\n    pass\n");
  CHECK(ok.errorKinds().empty());
  CHECK(ok.module->globals.size() == 3);
  CHECK(ok.module->funcs.size() == 1);
  for (const char* text : {"A[0] = 3\n", "x += 1\n", "T.copy(a, b)\n", "a, b[0] = 1, 2\n"}) {
    CAPTURE(text);
    Parsed bad(text);
    CHECK(bad.errorKinds() == std::vector<DiagKind>{DiagKind::UnexpectedToken});
    CHECK(bad.module->globals.empty());
  }
}
