// Layout inference for register fragments: collect the uses of every
// candidate fragment (cuda_fragment_uses.cpp), group the fragments that must
// share a layout, check each group's uses and annotations, then take the
// annotated row-group parameters or choose them by the cost rule.
#include "compiler/backends/cuda/cuda_fragment_layout.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string_view>
#include <tuple>

#include "compiler/backends/cuda/cuda_fragment_uses.h"
#include "compiler/ir/functor.h"

namespace tlc::cuda {

using namespace ir;

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

std::string num(int64_t v) { return std::to_string(v); }

// Why a row-group layout with the given parameters does not tile its
// [R, C] over its threads; empty when it does.
std::string rowGroupMismatch(const RegisterLayout& l) {
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

// Whether `l` tiles its [R, C] over its threads (rowGroupMismatch).
bool tilesEvenly(const RegisterLayout& l) { return rowGroupMismatch(l).empty(); }

// The cost rule (see the header); false when no row-group layout fits.
// `columnsWide`: the group is reduced along columns only, so the widest G
// that gives every thread work is taken (fewer threads share a column).
// `warp`: the lanes one group of shuffles spans (shuffleLanes).
bool chooseLayout(int64_t rows, int64_t cols, int64_t threads, int64_t elemBytes, bool columnsWide, int64_t warp,
                  RegisterLayout* out) {
  if (threads % 32 != 0) return false;
  for (int64_t vector = std::max<int64_t>(1, 16 / elemBytes); vector >= 1; vector /= 2) {
    if (cols % vector) continue;
    int64_t best = 0;
    // A row spans more than a warp (whole warps: G is a power of two) only
    // when no G <= warp gives every thread work.
    for (int64_t group = 1; group <= threads; group *= 2) {
      if (!tilesEvenly(RegisterLayout{rows, cols, threads, group, vector})) continue;
      best = group;
      if (!columnsWide && (group * vector * elemBytes >= 128 || group >= warp)) break;
    }
    if (best) {
      *out = RegisterLayout{rows, cols, threads, best, vector};
      return true;
    }
  }
  return false;
}

// A padded row-group layout (see the header) for a group that no layout
// tiles evenly: V as the cost rule takes it, and the G with the fewest
// registers per thread for the group (`registers`, padding counted), rows
// within a warp before rows spanning warps, then the narrowest G (the
// widest for `columnsWide`); false when the threads are not whole warps.
bool choosePaddedLayout(int64_t rows, int64_t cols, int64_t threads, int64_t elemBytes, bool columnsWide, int64_t warp,
                        const std::function<int64_t(const RegisterLayout&)>& registers, RegisterLayout* out) {
  if (threads % 32 != 0) return false;
  int64_t vector = std::max<int64_t>(1, 16 / elemBytes);
  while (cols % vector) vector /= 2;
  auto cost = [&](const RegisterLayout& l) {
    return std::tuple{registers(l), l.group > warp, columnsWide ? -l.group : l.group};
  };
  *out = RegisterLayout{rows, cols, threads, 1, vector};
  for (int64_t group = 2; group <= threads; group *= 2)
    if (RegisterLayout l{rows, cols, threads, group, vector}; cost(l) < cost(*out)) *out = l;
  return true;
}

// The cost rule's layout `l`, or one with more threads per row (up to a
// warp of `warp` lanes) that takes fewer registers per thread for the group (`registers`):
// the tile's registers do not depend on G, but a column vector takes C / G
// of them in each thread and a row vector R * G / T, so a group with wide
// column vectors (a per-column scale and bias of a short, wide tile) holds
// them in fewer registers with more threads per row, which leaves room for
// more blocks per SM. Ties keep the narrower G.
RegisterLayout fewestRegisters(const RegisterLayout& l, int64_t warp,
                               const std::function<int64_t(const RegisterLayout&)>& registers) {
  RegisterLayout best = l;
  int64_t fewest = registers(l);
  for (int64_t group = l.group * 2; group <= std::min(warp, l.threads); group *= 2) {
    RegisterLayout wider{l.rows, l.cols, l.threads, group, l.vector};
    if (!tilesEvenly(wider)) continue;
    if (int64_t n = registers(wider); n < fewest) best = wider, fewest = n;
  }
  return best;
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
int64_t registersOf(FragmentUses& uses, const std::vector<const BufferNode*>& list, const RegisterLayout& layout) {
  int64_t regs = 0;
  for (auto* b : list) regs += RegisterTile{0, roleOf(uses.cands[b].role), layout}.registers();
  return regs;
}

// Records a group kept in registers with `layout`, and the nests over it.
void addGroup(FragmentLayoutPlan& plan, FragmentUses& uses, Groups& groups, const BufferNode* root,
              const std::vector<const BufferNode*>& list, const RegisterLayout& layout) {
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

// Why the gemm `g` cannot read its A operand, the mma tile `a` (layout
// `al`), from registers; empty when it can (see "Mma groups" in the header).
std::string registerOperandMismatch(const GemmStmt* g, const RegisterLayout& al, const FixedLayouts& fixed) {
  auto c = fixed.find(g->c.buffer.get());
  DType t = g->a.buffer->dtype;
  const bool sixteen = t == DType::Float16 || t == DType::BFloat16;
  const bool other = t == DType::Float8E4M3 || t == DType::Float8E5M2 || t == DType::Int8 || t == DType::Float32;
  if (!sixteen && !other)
    return "a register A operand must be float16, bfloat16, float8_e4m3, float8_e5m2, int8 or float32 (tf32)";
  if (g->transA) return "a register A operand cannot be transposed (transpose_A=True)";
  if (!isFullRegion(g->a)) return "the A operand is part of the buffer";
  if (c == fixed.end()) return "the gemm does not run on the tensor cores";
  const RegisterLayout& cl = c->second;
  // MFMA stages a register A through LDS (cuda_mfma.cpp): any warp grid fits.
  if (cl.mfma) return sixteen ? "" : "a register A operand of an MFMA gemm must be float16 or bfloat16";
  if (al.mfma) return "A has an MFMA accumulator layout, but the gemm does not run on MFMA";
  if (cl.warpsN != 1 || al.warpsN != 1)
    return "the gemm's warp grid splits rows over several warps, so no warp holds whole rows of A";
  if (cl.rows != al.rows || cl.warpsM != al.warpsM) return "A's rows are spread over other warps than the gemm's rows";
  // 8-bit and tf32 operands hold other columns per lane than the
  // accumulator layout (RegisterLayout::vector): such an A has a group of
  // its own, not an accumulator's.
  const int64_t V = registerOperandVector(t);
  if (al.vector != V)
    return "a " + std::string(dtypeName(t)) + " register A operand holds " + std::to_string(V) +
           " columns per lane and atom, not the accumulator layout's 2: it cannot share a loop nest with an "
           "accumulator";
  if (al.cols % (8 * V)) return "A's columns are not whole " + std::to_string(8 * V) + "-column k-steps";
  return "";
}

// A group with no accumulator whose fragment is the A operand of a
// tensor-core gemm (written, say, by a Parallel loop that dequantizes or
// scales a tile) takes that operand's register layout: the mma layout of the
// gemm's rows and warp grid over A's columns, which the gemm reads in place
// (the accumulator layout of the rows is the A-operand layout of k-steps of
// 16; on MFMA, the accumulator's layout over A's columns, which the gemm
// stages through LDS). Null when no gemm of the group can read its A
// operand so.
std::optional<std::pair<const BufferNode*, RegisterLayout>> registerOperandLayout(const FragmentUses& uses,
                                                                                  Groups& groups,
                                                                                  const BufferNode* root,
                                                                                  const FixedLayouts& fixed) {
  std::optional<std::pair<const BufferNode*, RegisterLayout>> found;
  for (auto& g : uses.gemmOperands) {
    if (groups.find(g.buffer) != root) continue;
    auto c = fixed.find(g.gemm->c.buffer.get());
    int64_t cols = 0;
    const int64_t V = registerOperandVector(g.buffer->dtype);
    if (c == fixed.end() || g.buffer->shape.size() != 2 || !constInt(g.buffer->shape[1], &cols) || cols % (8 * V))
      return std::nullopt;
    const RegisterLayout& cl = c->second;
    // On MFMA the tile's columns split into the accumulator's blocks per wavefront column.
    if (cl.mfma && cols % (cl.mfma * cl.warpsN)) return std::nullopt;
    RegisterLayout l = RegisterLayout::mma(cl.rows, cols, cl.warpsM, cl.warpsN, cl.mfma, cl.colMajor, V);
    if (!registerOperandMismatch(g.gemm, l, fixed).empty()) return std::nullopt;
    if (found && !(found->first == g.buffer && found->second.sameRows(l) && found->second.cols == l.cols))
      return std::nullopt;
    found = {{g.buffer, l}};
  }
  return found;
}

// The group of `root`, which holds accumulators: every member takes the
// accumulators' rows and warp grid, or the other members fall back.
void planMmaGroup(FragmentLayoutPlan& plan, FragmentUses& uses, Groups& groups, const BufferNode* root,
                  const std::vector<const BufferNode*>& all, const FixedLayouts& fixed,
                  const std::function<const AnnotateLayoutStmt*(const BufferNode*)>& annotationOf, int64_t limit) {
  // The A operand of a gemm whose warpgroups split the columns is read from
  // shared memory, whole rows by each warpgroup: it leaves the group (the
  // group's copies and loops store to it there).
  std::unordered_set<const BufferNode*> sharedOperands;
  for (auto& g : uses.gemmOperands) {
    auto c = fixed.find(g.gemm->c.buffer.get());
    if (c != fixed.end() && c->second.colMajor && !fixed.count(g.buffer) && !uses.cands[g.buffer].reduced) {
      sharedOperands.insert(g.buffer);
      plan.fallback[g.buffer] = "the A operand of a gemm whose warpgroups split the columns: each reads whole rows of it";
    }
  }
  std::vector<const BufferNode*> list;
  for (auto* b : all)
    if (!sharedOperands.count(b)) list.push_back(b);
  const RegisterLayout* rep = nullptr;
  std::string why;
  const BufferNode* culprit = nullptr;
  auto fail = [&](const std::string& w, const BufferNode* b) {
    if (why.empty()) why = w, culprit = b;
  };
  for (auto* b : list)
    if (auto it = fixed.find(b); it != fixed.end()) {
      if (!rep) rep = &it->second;
      else if (!rep->sameRows(it->second))
        fail("accumulators of different rows or warp grids share a loop nest", b);
    }
  std::unordered_map<const BufferNode*, RegisterLayout> layouts;
  int64_t columns = -1;  // the one column count of the group's tiles, or -2 when they differ
  int64_t regs = 0;
  bool hasColumnVector = false;
  for (auto* b : list) {
    auto& c = uses.cands[b];
    if (!c.fallback.empty()) fail(c.fallback, b);
    if (auto* a = annotationOf(b); a && a->layout.kind == LayoutKind::SharedFallback) fail("annotated shared_fallback", b);
    if (c.role == Role::Tile) {
      if (c.shape.size() != 2 || c.shape[0] != rep->rows || c.shape[1] % (rep->atomCols() * rep->warpsN)) {
        fail("its shape does not follow the rows and warps of the accumulator it shares a loop nest with", b);
        continue;
      }
      layouts[b] = c.fixed ? fixed.at(b)
                           : RegisterLayout::mma(rep->rows, c.shape[1], rep->warpsM, rep->warpsN, rep->mfma,
                                                 rep->colMajor, rep->vector);
      columns = columns == -1 || columns == c.shape[1] ? c.shape[1] : -2;
    } else if (c.role == Role::Rows) {
      if (c.shape[0] != rep->rows) fail("its shape does not follow the rows of the accumulator", b);
    } else if (c.role == Role::Columns) {
      hasColumnVector = true;
    } else {
      fail("no role in the accumulator's loop nests", b);
    }
    // Rows spanning several warps combine through shared memory
    // (emitWarpSpanningReduce); MFMA wavefronts do not.
    if (c.reduced && rep->warpsN > 1 && rep->mfma)
      fail("a row reduction of an accumulator whose rows span " + num(rep->warpsN) + " wavefronts", b);
  }
  if (hasColumnVector && columns < 0) fail("a column vector beside tiles of different widths", list[0]);
  RegisterLayout columnLayout =
      columns > 0 ? RegisterLayout::mma(rep->rows, columns, rep->warpsM, rep->warpsN, rep->mfma, rep->colMajor, rep->vector)
                  : *rep;
  const BufferNode* largest = nullptr;  // the member taking the most registers
  int64_t largestRegs = 0;
  for (auto* b : list) {
    auto& c = uses.cands[b];
    if (c.role == Role::Columns && c.shape[0] != columns) fail("its shape does not follow the accumulator's columns", b);
    if (c.fixed || !why.empty()) continue;
    RegisterTile t{0, roleOf(c.role), c.role == Role::Tile ? layouts[b] : c.role == Role::Columns ? columnLayout : *rep};
    regs += t.registers();
    if (!largest || t.registers() > largestRegs) largest = b, largestRegs = t.registers();
  }
  if (regs > limit) {
    ++plan.overLimit;
    fail("the fragments beside the accumulator need " + num(regs) + " registers per thread (at most " + num(limit) + ")",
         largest);
  }
  for (auto& n : uses.nests) {
    if (n.buffers.empty() || groups.find(n.buffers[0]) != root) continue;
    bool fits = (n.kind == Role::Tile && n.extents[0] == rep->rows && n.extents[1] % (rep->atomCols() * rep->warpsN) == 0) ||
                (n.kind == Role::Rows && n.extents[0] == rep->rows) ||
                (n.kind == Role::Columns && n.extents[0] == columns);
    if (!fits) fail("a Parallel loop nest whose extents are not the accumulator's", n.buffers[0]);
  }
  for (auto& g : uses.gemmOperands) {
    if (groups.find(g.buffer) != root || sharedOperands.count(g.buffer)) continue;
    auto it = layouts.find(g.buffer);
    std::string bad = it == layouts.end() ? "the A operand is no tile of the group"
                                          : registerOperandMismatch(g.gemm, it->second, fixed);
    if (!bad.empty()) fail("the A operand of a gemm: " + bad, g.buffer);
  }
  // A row-group annotation cannot hold in an mma group.
  for (auto* b : list) {
    const AnnotateLayoutStmt* a = annotationOf(b);
    if (!a || a->layout.kind != LayoutKind::RowGroups || fixed.count(b)) continue;
    LayoutConflict c{b, a->loc,
                     "no layout fits `" + b->name + "`: it is annotated with " + annotationText(a) +
                         ", but it shares a loop nest with a tensor-core gemm's accumulator, whose mma.sync "
                         "layout it takes; remove the annotation",
                     {}};
    for (auto* f : list)
      if (fixed.count(f)) {
        for (auto& n : linkPath(uses, b, f)) c.notes.push_back(n);
        break;
      }
    plan.conflicts.push_back(c);
    return;
  }
  if (!why.empty()) {
    for (auto* b : list) {
      if (fixed.count(b)) {
        if (uses.cands[b].reduced)
          plan.demote.push_back({b, b == culprit ? why : "shares a loop nest with `" + culprit->name + "`: " + why});
        continue;
      }
      plan.fallback[b] = b == culprit ? why : "shares a loop nest with `" + culprit->name + "`: " + why;
    }
    return;
  }
  int index = (int)plan.groups.size();
  plan.groups.push_back(*rep);
  for (auto* b : list) {
    auto& c = uses.cands[b];
    RegisterLayout l = c.role == Role::Tile ? layouts[b] : c.role == Role::Columns ? columnLayout : *rep;
    plan.buffers[b] = RegisterTile{index, roleOf(c.role), l};
  }
  for (auto& n : uses.nests) {
    if (n.buffers.empty() || groups.find(n.buffers[0]) != root) continue;
    RegisterLayout l = n.kind == Role::Tile ? RegisterLayout::mma(rep->rows, n.extents[1], rep->warpsM, rep->warpsN,
                                                                  rep->mfma, rep->colMajor, rep->vector)
                       : n.kind == Role::Columns ? columnLayout
                                                 : *rep;
    plan.nests[n.loop] = RegisterNest{roleOf(n.kind), index, l};
  }
}

}  // namespace

std::unordered_set<const GemmStmt*> fullRowGemms(const KernelStmt& kernel) {
  FragmentUses uses = collectFragmentUses(kernel, {});
  Groups groups;
  for (auto& l : uses.links) groups.join(l.a, l.b);
  std::unordered_set<const BufferNode*> rowWise;  // group roots
  for (auto& g : uses.gemmOperands) rowWise.insert(groups.find(g.buffer));
  for (auto& [b, c] : uses.cands)
    if (c.reduced) rowWise.insert(groups.find(b));
  struct Scan : IRVisitor {
    std::vector<const GemmStmt*> gemms;
    void visitGemm(const GemmStmt* g) override { gemms.push_back(g); }
  } scan;
  scan.visit(kernel.body);
  std::unordered_set<const GemmStmt*> out;
  for (const GemmStmt* g : scan.gemms)
    if (g->a.buffer->scope == MemScope::Fragment || rowWise.count(groups.find(g->c.buffer.get()))) out.insert(g);
  return out;
}

namespace {

// The plan with at most `limit` registers per thread for each group.
FragmentLayoutPlan planWithLimit(const KernelStmt& kernel, int64_t threads, const FixedLayouts& fixed,
                                 const LayoutAnnotations& annotations, int64_t warp, int64_t limit) {
  FragmentLayoutPlan plan;
  std::unordered_set<const BufferNode*> fixedSet;
  for (auto& [b, l] : fixed) fixedSet.insert(b);
  FragmentUses uses = collectFragmentUses(kernel, fixedSet);
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
  // A row vector that a reduction fills but some use needs in shared memory
  // does not take its source there too: the reduction writes it from registers.
  for (auto& l : uses.links)
    if (std::string_view(l.how) != "reduction" || uses.cands[l.b].fallback.empty()) groups.join(l.a, l.b);
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
    if (std::any_of(list.begin(), list.end(), [&](const BufferNode* b) { return fixed.count(b) > 0; })) {
      planMmaGroup(plan, uses, groups, root, list, fixed, annotationOf, limit);
      continue;
    }
    if (auto operand = registerOperandLayout(uses, groups, root, fixed)) {
      FixedLayouts withOperand = fixed;
      withOperand.emplace(operand->first, operand->second);
      planMmaGroup(plan, uses, groups, root, list, withOperand, annotationOf, limit);
      continue;
    }
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
    for (auto& g : uses.gemmOperands)
      if (groups.find(g.buffer) == root)
        fail("a gemm operand (a gemm reads A from registers only in the layout of an accumulator it shares a loop "
             "nest with)",
             g.buffer, {g.gemm->loc, "this use needs `" + g.buffer->name + "` in shared memory"}, true);
    if (tileShape.empty() && why.empty()) {
      // Only vectors, used by one-dimensional Parallel loops of their length
      // (a running sum per row, say): they are the rows of an [n, 1] tile,
      // one row per thread's slot.
      int64_t n = uses.cands[list[0]].shape.size() == 1 ? uses.cands[list[0]].shape[0] : 0;
      bool vectors = n > 0;
      for (auto* b : list) {
        const Candidate& c = uses.cands[b];
        vectors &= c.shape.size() == 1 && c.shape[0] == n && (c.role == Role::Unknown || c.role == Role::Rows);
      }
      for (auto& nu : uses.nests)
        if (!nu.buffers.empty() && groups.find(nu.buffers[0]) == root)
          vectors &= nu.extents.size() == 1 && nu.extents[0] == n;
      if (vectors) {
        tileShape = {n, 1};
        for (auto* b : list) uses.cands[b].role = Role::Rows;
        for (auto& nu : uses.nests)
          if (!nu.buffers.empty() && groups.find(nu.buffers[0]) == root) nu.kind = Role::Rows;
      }
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

    // The layout the cost rule gives the group (padded where no layout
    // tiles it evenly); false when none fits.
    auto ownLayout = [&](RegisterLayout* out) {
      const BufferNode* any = nullptr;
      for (auto* b : list)
        if (uses.cands[b].role == Role::Tile) any = b;
      int64_t elemBytes = bytes ? bytes : dtypeBytes((any ? any : list[0])->dtype);
      bool columns = false, rowsReduced = false;
      for (auto* b : list) {
        columns |= uses.cands[b].columnReduced;
        rowsReduced |= uses.cands[b].reduced;
      }
      auto regs = [&](const RegisterLayout& l) { return registersOf(uses, list, l); };
      if (chooseLayout(tileShape[0], tileShape[1], threads, elemBytes, columns && !rowsReduced, warp, out)) {
        *out = fewestRegisters(*out, warp, regs);
        return true;
      }
      return choosePaddedLayout(tileShape[0], tileShape[1], threads, elemBytes, columns && !rowsReduced, warp, regs,
                                out);
    };

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
      RegisterLayout layout{tileShape[0], tileShape[1], threads, annotated->layout.threadsPerRow, annotated->layout.vector};
      // A padded layout holds where it is the plan's own (the annotation the
      // inference pass wrote); a user's annotation tiles the group evenly.
      RegisterLayout own;
      std::string mismatch = rowGroupMismatch(layout);
      if (!mismatch.empty() && ownLayout(&own) && own == layout && (own.paddedRows() || own.paddedColumns()))
        mismatch.clear();
      std::string fix = "; choose threads per row and a run length that divide the tile over the threads, or remove "
                        "the annotation";
      if (threads % 32) fix = "; run the kernel with a multiple of 32 threads, or remove the annotation";
      int64_t regs = registersOf(uses, list, layout);
      if (mismatch.empty() && regs > limit) {
        ++plan.overLimit;
        mismatch = "its group would need " + num(regs) + " registers per thread (at most " + num(limit) + ")";
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

    RegisterLayout layout;
    if (why.empty() && !ownLayout(&layout))
      why = "no row-group layout of [" + num(tileShape[0]) + ", " + num(tileShape[1]) + "] over " + num(threads) +
            " threads: register layouts need whole warps";
    if (why.empty()) {
      int64_t regs = registersOf(uses, list, layout);
      if (regs > limit) {
        ++plan.overLimit;
        why = "the group needs " + num(regs) + " registers per thread (at most " + num(limit) + ")";
      }
    }
    if (!why.empty()) {
      for (auto* b : list)
        plan.fallback[b] = b == culprit || !culprit ? why : "shares a loop nest with `" + culprit->name + "`: " + why;
      if (!culprit) {  // every use fits registers, but no layout does
        const BufferNode* tile = list[0];
        for (auto* b : list)
          if (uses.cands[b].role == Role::Tile) {
            tile = b;
            break;
          }
        std::string fix = threads % 32 ? "run the kernel with a multiple of 32 threads"
                                       : "use more threads or a smaller tile";
        plan.unfit.push_back({tile, why + "; " + fix});
      }
      continue;
    }
    addGroup(plan, uses, groups, root, list, layout);
  }
  return plan;
}

}  // namespace

FragmentLayoutPlan inferFragmentLayouts(const KernelStmt& kernel, int64_t threads, const FixedLayouts& fixed,
                                        const LayoutAnnotations& annotations, int64_t warp) {
  FragmentLayoutPlan plan = planWithLimit(kernel, threads, fixed, annotations, warp, kMaxRegisterElems);
  if (plan.overLimit != 1 || threads > kSmallBlockThreads) return plan;
  // A small block: the one group over the limit may take what the others leave.
  int64_t used = 0;
  for (const auto& [b, tile] : plan.buffers) used += tile.registers();
  int64_t limit = kSmallBlockRegisterElems - used;
  if (limit <= kMaxRegisterElems) return plan;
  FragmentLayoutPlan wider = planWithLimit(kernel, threads, fixed, annotations, warp, limit);
  return wider.overLimit == 0 ? wider : plan;
}

}  // namespace tlc::cuda
