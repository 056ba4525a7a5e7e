// The im2col nest (ir/im2col.h): what T.c2d_im2col builds, its loop
// attribute in the tile IR's text, and the test that a nest is still the
// nest its attribute describes.
#include "compiler/ir/im2col.h"

#include "compiler/ir/substitute.h"
#include "tests/ir/ir_test_util.h"

using namespace tlc;
using namespace tlc::ir;
using namespace tlc::ir::testing;

namespace {

struct Conv {
  Buffer x = makeBuffer("X", DType::Float16, {makeInt(2), makeInt(9), makeInt(11), makeInt(64)}, MemScope::Global);
  Buffer tile = makeBuffer("A_s", DType::Float16, {makeInt(64), makeInt(32)}, MemScope::Shared);
  Var by = makeVar("by"), k = makeVar("k");
  Im2colGeometry g;
  Conv() {
    g.kernel = {3, 2};
    g.stride = {2, 1};
    g.pad = {1, 0};
    g.dilation = {1, 3};
  }
  Stmt nest() const { return im2colNest(x, tile, makeVarRef(by), makeVarRef(k), g, SourceLoc{}); }
};

std::optional<Im2colMatch> match(const Stmt& s) {
  auto* outer = as<ForStmt>(s);
  REQUIRE(outer);
  Var pipelined = makeVar("p");
  auto loop = std::make_shared<ForStmt>(pipelined, makeInt(0), makeInt(4), ForKind::Pipelined, s, SourceLoc{});
  std::optional<GatherNest> g = gatherNest(s, loop.get());
  REQUIRE(g.has_value());
  return matchIm2col(*g);
}

}  // namespace

TEST_CASE("the im2col nest stores the im2col matrix's elements and carries its geometry") {
  Conv c;
  Stmt s = c.nest();
  auto* outer = as<ForStmt>(s);
  REQUIRE(outer);
  CHECK(outer->forKind == ForKind::Parallel);
  CHECK(outer->im2col == std::vector<int64_t>{3, 2, 2, 1, 1, 0, 1, 3});
  std::string text = printStmt(s);
  INFO(text);
  CHECK(text.find("im2col=[3, 2, 2, 1, 1, 0, 1, 3]") != std::string::npos);
  // OH = (9 + 2 - 2 - 1) // 2 + 1 = 5, OW = (11 + 0 - 3 - 1) // 1 + 1 = 8: n = m // 40.
  CHECK(text.find("X[floordiv(by * 64 + i, 40), ") != std::string::npos);
  auto m = match(s);
  REQUIRE(m.has_value());
  CHECK(m->x == c.x.get());
  CHECK(m->tile == c.tile.get());
  CHECK(printExpr(m->nhwStep) == "by");
  CHECK(printExpr(m->cStep) == "k");
  CHECK(m->rows == 64);
  CHECK(m->cols == 32);
  CHECK(m->geometry.attribute() == outer->im2col);
}

TEST_CASE("a nest is an im2col nest only while it is the one its attribute describes") {
  Conv c;
  Stmt s = c.nest();
  auto* outer = as<ForStmt>(s);
  // Another geometry on the same nest: the rebuilt nest differs.
  auto other = std::make_shared<ForStmt>(*outer);
  other->im2col = {3, 2, 1, 1, 1, 0, 1, 3};
  CHECK_FALSE(match(other).has_value());
  // No attribute: an ordinary gather.
  auto plain = std::make_shared<ForStmt>(*outer);
  plain->im2col.clear();
  CHECK_FALSE(match(plain).has_value());
  // A step substituted by a constant is still found where it stays a product.
  Stmt shifted = substitute(s, c.by, add(makeVarRef(c.by), makeInt(1)));
  auto m = match(shifted);
  REQUIRE(m.has_value());
  CHECK(printExpr(m->nhwStep) == "by + 1");
  // A changed element (the image read one channel further) is not.
  auto* inner = as<ForStmt>(outer->body);
  auto* store = as<StoreStmt>(inner->body);
  auto* sel = as<Select>(store->value);
  REQUIRE(sel);
  Expr changed = makeSelect(sel->cond, makeCast(DType::Float16, makeFloat(1.0, DType::Float16)), sel->f);
  Stmt badStore = std::make_shared<StoreStmt>(store->buffer, store->indices, changed, SourceLoc{});
  auto badInner = std::make_shared<ForStmt>(inner->var, inner->min, inner->extent, ForKind::Parallel, badStore,
                                            SourceLoc{});
  auto badOuter = std::make_shared<ForStmt>(outer->var, outer->min, outer->extent, ForKind::Parallel, badInner,
                                            SourceLoc{});
  badOuter->im2col = outer->im2col;
  CHECK_FALSE(match(badOuter).has_value());
}

TEST_CASE("the im2col attribute survives the text and is checked there") {
  std::string text = R"(func @k(X: float16[2, 9, 11, 64]) {
  kernel grid(4) threads(128) as (by) {
    alloc A_s: shared float16[64, 32]
    for i in parallel(0 : +64, im2col=[3, 2, 2, 1, 1, 0, 1, 3]) {
      for j in parallel(0 : +32) {
        A_s[i, j] = X[0, 0, 0, j]
      }
    }
  }
}
)";
  auto p = parseText(text);
  INFO(p->diags.renderAll());
  REQUIRE(p->module.has_value());
  checkRoundTrip(*p->module);
  auto bad = parseText(std::string(text).replace(text.find("1, 0, 1, 3]"), 11, "1, -1, 1, 3]"));
  CHECK_FALSE(bad->module.has_value());
  CHECK(bad->diags.renderAll().find("`im2col` is [kernel_h, kernel_w") != std::string::npos);
}
