// Layout inference for register fragments: collect the uses of every
// candidate fragment (cuda_fragment_uses.cpp), group the fragments that must
// share a layout, check each group's uses and annotations, then take the
// annotated row-group parameters or choose them by the cost rule.
#include "compiler/backends/cuda/cuda_fragment_layout.h"

#include <algorithm>

#include "compiler/backends/cuda/cuda_fragment_uses.h"
#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

// ---------------------------------------------------------------------------
// The layouts as Fragment values

namespace {

std::vector<Var> placeholders(size_t n) {
  std::vector<Var> vars;
  for (size_t d = 0; d < n; ++d) vars.push_back(makeVar("i" + std::to_string(d)));
  return vars;
}

// The thread's column group and the register of column j within a row.
Expr columnGroup(const RowGroupLayout& l, const Expr& j) {
  return floorMod(floorDiv(j, makeInt(l.vector)), makeInt(l.group));
}
Expr columnRegister(const RowGroupLayout& l, const Expr& j) {
  return add(mul(floorDiv(j, makeInt(l.group * l.vector)), makeInt(l.vector)), floorMod(j, makeInt(l.vector)));
}

}  // namespace

layout::Fragment RowGroupLayout::tile() const {
  auto v = placeholders(2);
  Expr i = makeVarRef(v[0]), j = makeVarRef(v[1]);
  Expr thread = add(mul(floorMod(i, makeInt(rowSlots())), makeInt(group)), columnGroup(*this, j));
  Expr reg = add(mul(floorDiv(i, makeInt(rowSlots())), makeInt(colsPerThread())), columnRegister(*this, j));
  return layout::Fragment({rows, cols}, v, thread, {reg}, threads);
}

layout::Fragment RowGroupLayout::rowVector() const {
  auto v = placeholders(1);
  Var rep = makeVar("rep");
  Expr i = makeVarRef(v[0]);
  Expr thread = add(mul(floorMod(i, makeInt(rowSlots())), makeInt(group)), makeVarRef(rep));
  return layout::Fragment({rows}, v, thread, {floorDiv(i, makeInt(rowSlots()))}, threads, group, rep);
}

layout::Fragment RowGroupLayout::columnVector() const {
  auto v = placeholders(1);
  Var rep = makeVar("rep");
  Expr j = makeVarRef(v[0]);
  Expr thread = add(mul(makeVarRef(rep), makeInt(group)), columnGroup(*this, j));
  return layout::Fragment({cols}, v, thread, {columnRegister(*this, j)}, threads, rowSlots(), rep);
}

int64_t RegisterTile::registers() const {
  switch (role) {
    case FragmentRole::Tile: return layout.rowsPerThread() * layout.colsPerThread();
    case FragmentRole::Rows: return layout.rowsPerThread();
    case FragmentRole::Columns: return layout.colsPerThread();
  }
  return 0;
}

// ---------------------------------------------------------------------------
// Inference

namespace {

// Union-find over candidate buffers.
struct Groups {
  std::unordered_map<const BufferNode*, const BufferNode*> parent;
  const BufferNode* find(const BufferNode* b) {
    auto it = parent.find(b);
    if (it == parent.end() || it->second == b) return b;
    return it->second = find(it->second);
  }
  void join(const BufferNode* a, const BufferNode* b) { parent[find(a)] = find(b); }
};

// The cost rule (see the header); false when no row-group layout fits.
bool chooseLayout(int64_t rows, int64_t cols, int64_t threads, int64_t elemBytes, RowGroupLayout* out) {
  if (threads % 32 != 0) return false;
  for (int64_t vector = std::max<int64_t>(1, 16 / elemBytes); vector >= 1; vector /= 2) {
    if (cols % vector) continue;
    int64_t best = 0;
    // A row spans more than a warp (whole warps: G is a power of two) only
    // when no G <= 32 gives every thread work.
    for (int64_t group = 1; group <= threads; group *= 2) {
      if (cols % (group * vector) || (rows * group) % threads) continue;
      best = group;
      if (group * vector * elemBytes >= 128 || group >= 32) break;
    }
    if (best) {
      *out = RowGroupLayout{rows, cols, threads, best, vector};
      return true;
    }
  }
  return false;
}

std::string num(int64_t v) { return std::to_string(v); }

// Why a row-group layout with the given parameters does not tile its
// [R, C] over its threads; empty when it does.
std::string rowGroupMismatch(const RowGroupLayout& l) {
  std::string tile = "the [" + num(l.rows) + ", " + num(l.cols) + "] tile";
  if (l.threads % 32)
    return "the kernel runs " + num(l.threads) + " threads, not whole warps, which register layouts need";
  if (l.threads % l.group)
    return num(l.group) + " threads per row do not divide the kernel's " + num(l.threads) + " threads";
  if (l.rows % l.rowSlots())
    return num(l.threads) + " threads with " + num(l.group) + " per row handle " + num(l.rowSlots()) +
           " rows at a time, which does not divide the " + num(l.rows) + " rows of " + tile;
  if (l.cols % (l.group * l.vector))
    return num(l.group) + " threads with runs of " + num(l.vector) + " cover " + num(l.group * l.vector) +
           " columns at a time, which does not divide the " + num(l.cols) + " columns of " + tile;
  return "";
}

FragmentRole roleOf(Role r) { return static_cast<FragmentRole>(static_cast<int>(r) - 1); }

std::string annotationText(const AnnotateLayoutStmt* a) { return layoutSpecText(a->layout); }

bool sameLoc(SourceLoc a, SourceLoc b) { return a.file == b.file && a.line == b.line && a.col == b.col; }

// Notes on the statements that tie `from` and `to` into one group: the
// shortest chain of links, one note per statement.
std::vector<LayoutNote> linkPath(const FragmentUses& uses, const BufferNode* from, const BufferNode* to) {
  std::unordered_map<const BufferNode*, const FragmentLink*> via;  // how each buffer was reached
  std::vector<const BufferNode*> queue{from};
  via[from] = nullptr;
  for (size_t k = 0; k < queue.size() && !via.count(to); ++k)
    for (const FragmentLink& l : uses.links)
      for (auto [x, y] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}})
        if (x == queue[k] && !via.count(y)) {
          via[y] = &l;
          queue.push_back(y);
        }
  std::vector<LayoutNote> notes;
  if (!via.count(to)) return notes;
  std::vector<std::pair<const BufferNode*, const FragmentLink*>> steps;  // from `to` back to `from`
  for (const BufferNode* b = to; via[b]; b = via[b]->a == b ? via[b]->b : via[b]->a) steps.push_back({b, via[b]});
  // Consecutive links of one statement make one note.
  for (size_t i = steps.size(); i-- > 0;) {
    const FragmentLink* l = steps[i].second;
    const BufferNode* start = l->a == steps[i].first ? l->b : l->a;
    size_t j = i;
    while (j > 0 && sameLoc(steps[j - 1].second->loc, l->loc)) --j;
    notes.push_back({l->loc, "`" + start->name + "` and `" + steps[j].first->name + "` share a layout through this " +
                                 l->how});
    i = j;
  }
  return notes;
}

// Registers per thread that a group's members take with `layout`.
int64_t registersOf(FragmentUses& uses, const std::vector<const BufferNode*>& list, const RowGroupLayout& layout) {
  int64_t regs = 0;
  for (auto* b : list) regs += RegisterTile{0, roleOf(uses.cands[b].role), layout}.registers();
  return regs;
}

// Records a group kept in registers with `layout`, and the nests over it.
void addGroup(FragmentLayoutPlan& plan, FragmentUses& uses, Groups& groups, const BufferNode* root,
              const std::vector<const BufferNode*>& list, const RowGroupLayout& layout) {
  int index = (int)plan.groups.size();
  plan.groups.push_back(layout);
  for (auto* b : list) plan.buffers[b] = RegisterTile{index, roleOf(uses.cands[b].role), layout};
  for (auto& n : uses.nests)
    if (!n.buffers.empty() && groups.find(n.buffers[0]) == root)
      plan.nests[n.loop] = RegisterNest{roleOf(n.kind), index, layout};
}

// The gemms of `kernel` that accumulate into `b`.
std::vector<const GemmStmt*> gemmsInto(const KernelStmt& kernel, const BufferNode* b) {
  struct Scan : IRVisitor {
    const BufferNode* target;
    std::vector<const GemmStmt*> found;
    void visitGemm(const GemmStmt* g) override {
      if (g->c.buffer.get() == target) found.push_back(g);
    }
  } scan;
  scan.target = b;
  scan.visit(kernel.body);
  return scan.found;
}

}  // namespace

FragmentLayoutPlan inferFragmentLayouts(const KernelStmt& kernel, int64_t threads,
                                        const std::unordered_set<const BufferNode*>& fixed,
                                        const LayoutAnnotations& annotations) {
  FragmentLayoutPlan plan;
  FragmentUses uses = collectFragmentUses(kernel, fixed);
  auto annotationOf = [&](const BufferNode* b) -> const AnnotateLayoutStmt* {
    auto it = annotations.find(b);
    return it == annotations.end() ? nullptr : it->second;
  };

  // An mma accumulator keeps the mma layout: a row-group annotation cannot hold.
  for (const BufferNode* b : uses.fragments) {
    const AnnotateLayoutStmt* a = annotationOf(b);
    if (!a || !fixed.count(b) || a->layout.kind != LayoutKind::RowGroups) continue;
    LayoutConflict c{b, a->loc,
                     "no layout fits `" + b->name + "`: it is annotated with " + annotationText(a) +
                         ", but a tensor-core gemm accumulates into it, which fixes the mma.sync accumulator "
                         "layout; remove the annotation (or annotate it shared_fallback to keep it in shared memory)",
                     {}};
    for (const GemmStmt* g : gemmsInto(kernel, b)) c.notes.push_back({g->loc, "this gemm accumulates into `" + b->name + "`"});
    plan.conflicts.push_back(c);
  }

  Groups groups;
  for (auto& l : uses.links) groups.join(l.a, l.b);
  // Roles travel along same-role links (copies, one-dimensional nests).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& l : uses.links) {
      if (!l.sameRole) continue;
      Role ra = uses.cands[l.a].role, rb = uses.cands[l.b].role;
      if (ra == rb) continue;
      if (ra == Role::Unknown) uses.cands[l.a].role = rb, changed = true;
      else if (rb == Role::Unknown) uses.cands[l.b].role = ra, changed = true;
      else {
        uses.reject(l.a, "copied to or from a fragment with another role", l.loc);
        uses.reject(l.b, "copied to or from a fragment with another role", l.loc);
      }
    }
  }
  for (auto& n : uses.nests)
    if (n.kind == Role::Unknown && !n.buffers.empty()) n.kind = uses.cands[n.buffers[0]].role;

  // Per group, in allocation order: members, the tile shape, and whether every member fits.
  std::vector<const BufferNode*> roots;
  std::unordered_map<const BufferNode*, std::vector<const BufferNode*>> members;
  for (const BufferNode* b : uses.fragments) {
    if (!uses.cands.count(b)) continue;
    auto& list = members[groups.find(b)];
    if (list.empty()) roots.push_back(groups.find(b));
    list.push_back(b);
  }
  for (const BufferNode* root : roots) {
    const std::vector<const BufferNode*>& list = members[root];
    std::string why;
    const BufferNode* culprit = nullptr;
    LayoutNote whyNote;  // where the reason shows
    bool whyIsUse = false;  // a use needs shared memory (otherwise the group's shapes fit no layout)
    auto fail = [&](const std::string& w, const BufferNode* b, LayoutNote note, bool use = false) {
      if (!why.empty()) return;
      why = w;
      culprit = b;
      whyNote = std::move(note);
      whyIsUse = use;
    };
    std::vector<int64_t> tileShape;
    int64_t bytes = 0;
    for (auto* b : list) {
      auto& c = uses.cands[b];
      if (!c.fallback.empty())
        fail(c.fallback, b, {c.fallbackLoc, "this use needs `" + b->name + "` in shared memory"}, true);
      if (c.role == Role::Tile) {
        if (!tileShape.empty() && tileShape != c.shape)
          fail("tiles of different shapes in one loop nest", b, {b->loc, "`" + b->name + "` has another shape"});
        tileShape = c.shape;
      }
      if (c.globalBytes) bytes = bytes ? std::min(bytes, c.globalBytes) : c.globalBytes;
    }
    if (tileShape.empty())
      fail("no two-dimensional fragment to take the layout from", list[0],
           {list[0]->loc, "`" + list[0]->name + "` is allocated here"});
    if (why.empty()) {
      for (auto* b : list) {
        auto& c = uses.cands[b];
        bool fits = (c.role == Role::Rows && c.shape[0] == tileShape[0]) ||
                    (c.role == Role::Columns && c.shape[0] == tileShape[1]) || c.role == Role::Tile;
        if (!fits)
          fail("its shape does not follow a tile of its loop nests", b, {b->loc, "`" + b->name + "` is allocated here"});
      }
      for (auto& n : uses.nests)
        if (!n.buffers.empty() && groups.find(n.buffers[0]) == root) {
          bool fits = (n.kind == Role::Tile && n.extents == tileShape) ||
                      (n.kind == Role::Rows && n.extents[0] == tileShape[0]) ||
                      (n.kind == Role::Columns && n.extents[0] == tileShape[1]);
          if (!fits)
            fail("a Parallel loop nest whose extents are not the tile's", n.buffers[0],
                 {n.loop->loc, "this Parallel loop"});
        }
    }

    // Annotations: every annotated member of a group has the same one, and
    // the group's uses must allow it.
    const AnnotateLayoutStmt* annotated = nullptr;
    bool disagree = false;
    for (auto* b : list) {
      const AnnotateLayoutStmt* a = annotationOf(b);
      if (!a || disagree) continue;
      if (!annotated) {
        annotated = a;
        continue;
      }
      if (a->layout == annotated->layout) continue;
      const BufferNode* first = annotated->buffer.get();
      LayoutConflict c{b, a->loc,
                       "no layout fits `" + b->name + "`: it is annotated with " + annotationText(a) + ", but `" +
                           first->name + "`, which shares its layout, is annotated with " + annotationText(annotated) +
                           "; fragments used together have one layout: give them the same annotation",
                       {{annotated->loc, "`" + first->name + "` is annotated here"}}};
      for (auto& n : linkPath(uses, first, b)) c.notes.push_back(n);
      plan.conflicts.push_back(c);
      disagree = true;
    }
    if (disagree) continue;
    if (annotated && annotated->layout.kind == LayoutKind::SharedFallback) {
      why = "annotated shared_fallback";
      culprit = annotated->buffer.get();
    } else if (annotated) {
      const BufferNode* held = annotated->buffer.get();
      std::string prefix = "no layout fits `" + held->name + "`: it is annotated with " + annotationText(annotated) +
                           " to stay in registers, but ";
      if (!why.empty()) {
        bool self = culprit == held;
        std::string who = self ? "it" : "`" + culprit->name + "`, which shares its layout,";
        LayoutConflict c{held, annotated->loc,
                         prefix +
                             (whyIsUse ? who + " has a use that needs shared memory (" + why +
                                             "); remove the annotation (the fragment then lives in shared memory) "
                                             "or change that use"
                                       : "its group of fragments fits no register layout (" + why +
                                             "); remove the annotation (the fragment then lives in shared memory) "
                                             "or use the group as tiles of one shape with their row and column "
                                             "vectors") +
                             " (see \"How uses decide the layout\" in docs/cuda-backend.md)",
                         {whyNote}};
        if (!self)
          for (auto& n : linkPath(uses, held, culprit)) c.notes.push_back(n);
        plan.conflicts.push_back(c);
        continue;
      }
      RowGroupLayout layout{tileShape[0], tileShape[1], threads, annotated->layout.threadsPerRow, annotated->layout.vector};
      std::string mismatch = rowGroupMismatch(layout);
      std::string fix = "; choose threads per row and a run length that divide the tile over the threads, or remove "
                        "the annotation";
      if (threads % 32) fix = "; run the kernel with a multiple of 32 threads, or remove the annotation";
      int64_t regs = registersOf(uses, list, layout);
      if (mismatch.empty() && regs > kMaxRegisterElems) {
        mismatch = "its group would need " + num(regs) + " registers per thread (at most " + num(kMaxRegisterElems) + ")";
        fix = "; use smaller tiles or more threads, or remove the annotation (the group then lives in shared memory)";
      }
      if (!mismatch.empty()) {
        LayoutConflict c{held, annotated->loc, prefix + mismatch + fix, {}};
        for (auto* b : list)
          if (b != held && uses.cands[b].role == Role::Tile) {
            c.notes.push_back({b->loc, "`" + b->name + "` is the tile whose layout `" + held->name + "` shares"});
            for (auto& n : linkPath(uses, held, b)) c.notes.push_back(n);
            break;
          }
        plan.conflicts.push_back(c);
        continue;
      }
      addGroup(plan, uses, groups, root, list, layout);
      continue;
    }

    RowGroupLayout layout;
    if (why.empty()) {
      const BufferNode* any = nullptr;
      for (auto* b : list)
        if (uses.cands[b].role == Role::Tile) any = b;
      if (!bytes) bytes = dtypeBytes(any->dtype);
      if (!chooseLayout(tileShape[0], tileShape[1], threads, bytes, &layout))
        why = "no row-group layout of [" + num(tileShape[0]) + ", " + num(tileShape[1]) + "] over " + num(threads) +
              " threads";
    }
    if (why.empty()) {
      int64_t regs = registersOf(uses, list, layout);
      if (regs > kMaxRegisterElems)
        why = "the group needs " + num(regs) + " registers per thread (at most " + num(kMaxRegisterElems) + ")";
    }
    if (!why.empty()) {
      for (auto* b : list)
        plan.fallback[b] = b == culprit || !culprit ? why : "shares a loop nest with `" + culprit->name + "`: " + why;
      continue;
    }
    addGroup(plan, uses, groups, root, list, layout);
  }
  return plan;
}

}  // namespace tlc::cuda
