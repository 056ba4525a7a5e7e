// The register layouts of fragments (RegisterLayout, cuda_fragment_layout.h):
// where a row, column or element of a tile lives (warp, lane, register), and
// the same as layout::Fragment values for the layout plan and the checks.
#include "compiler/backends/cuda/cuda_fragment_layout.h"

namespace tlc::cuda {

using namespace ir;

namespace {

std::vector<Var> placeholders(size_t n) {
  std::vector<Var> vars;
  for (size_t d = 0; d < n; ++d) vars.push_back(makeVar("i" + std::to_string(d)));
  return vars;
}

// The thread's column group and the register of column j within a row.
Expr columnGroup(const RegisterLayout& l, const Expr& j) {
  return floorMod(floorDiv(j, makeInt(l.vector)), makeInt(l.group));
}
Expr columnRegister(const RegisterLayout& l, const Expr& j) {
  return add(mul(floorDiv(j, makeInt(l.group * l.vector)), makeInt(l.vector)), floorMod(j, makeInt(l.vector)));
}

Expr eq(const Expr& a, int64_t b) { return makeBinary(BinaryOp::Eq, a, makeInt(b)); }

}  // namespace

RegisterLayout RegisterLayout::mma(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN, int64_t mfma, bool colMajor,
                                   int64_t vector) {
  if (mfma) return RegisterLayout{m, n, warpsM * warpsN * 64, mfma, 1, Kind::Mma, warpsM, warpsN, mfma};
  RegisterLayout l{m, n, warpsM * warpsN * 32, 4, vector, Kind::Mma, warpsM, warpsN};
  l.colMajor = colMajor && warpsN > 1;
  return l;
}

Expr RegisterLayout::warpRow(const Expr& tid) const {
  Expr warp = floorDiv(tid, makeInt(mfma ? 64 : 32));
  return colMajor ? floorMod(warp, makeInt(warpsM)) : floorDiv(warp, makeInt(warpsN));
}

Expr RegisterLayout::warpCol(const Expr& tid) const {
  Expr warp = floorDiv(tid, makeInt(mfma ? 64 : 32));
  return colMajor ? floorDiv(warp, makeInt(warpsM)) : floorMod(warp, makeInt(warpsN));
}

// MFMA (mfma = S, G = 64 / S lane groups, R = S * S / 64 registers per
// block): register row ri is row 4G * ((ri % R) / 4) + 4 * (lane / S) + ri % 4
// of block row ri / R; column chunk c is column lane % S of block column c.
int64_t RegisterLayout::rowsPerThread() const {
  if (mfma) return rows / warpsM / mfma * (mfma * mfma / 64);
  return isMma() ? 2 * (rows / warpsM / 16) : (rows + rowSlots() - 1) / rowSlots();
}
int64_t RegisterLayout::chunksPerRow() const {
  if (mfma) return cols / warpsN / mfma;
  return isMma() ? cols / warpsN / atomCols() : (cols + group * vector - 1) / (group * vector);
}
bool RegisterLayout::paddedRows() const { return !isMma() && rows % rowSlots() != 0; }
bool RegisterLayout::paddedColumns() const { return !isMma() && cols % (group * vector) != 0; }
Expr RegisterLayout::rowInRange(const Expr& ri, const Expr& tid) const {
  return paddedRows() ? lt(rowOf(ri, tid), makeInt(rows)) : makeBool(true);
}
Expr RegisterLayout::chunkInRange(const Expr& chunk, const Expr& tid) const {
  return paddedColumns() ? lt(colOf(chunk, makeInt(0), tid), makeInt(cols)) : makeBool(true);
}
int64_t RegisterLayout::rowLanes(int64_t warp) const { return isMma() ? (mfma ? mfma : 4) : std::min(group, warp); }
int64_t RegisterLayout::rowWarps(int64_t warp) const { return isMma() ? warpsN : group > warp ? group / warp : 1; }

bool RegisterLayout::sameRows(const RegisterLayout& o) const {
  if (kind != o.kind || rows != o.rows || threads != o.threads || mfma != o.mfma) return false;
  return isMma() ? warpsM == o.warpsM && warpsN == o.warpsN && colMajor == o.colMajor : group == o.group;
}

bool RegisterLayout::operator==(const RegisterLayout& o) const {
  return sameRows(o) && cols == o.cols && vector == o.vector;
}

Expr RegisterLayout::rowOf(const Expr& ri, const Expr& tid) const {
  if (!isMma()) return add(mul(ri, makeInt(rowSlots())), floorDiv(tid, makeInt(group)));
  if (mfma) {
    const int64_t regs = mfma * mfma / 64;
    Expr waveM = warpRow(tid), r = floorMod(ri, makeInt(regs));
    Expr inBlock = add(add(mul(floorDiv(r, makeInt(4)), makeInt(4 * (64 / mfma))),
                           mul(floorDiv(floorMod(tid, makeInt(64)), makeInt(mfma)), makeInt(4))),
                       floorMod(r, makeInt(4)));
    return add(add(mul(waveM, makeInt(rows / warpsM)), mul(floorDiv(ri, makeInt(regs)), makeInt(mfma))), inBlock);
  }
  Expr warpM = warpRow(tid);
  Expr inWarp = add(add(mul(floorDiv(ri, makeInt(2)), makeInt(16)), mul(floorMod(ri, makeInt(2)), makeInt(8))),
                    floorDiv(floorMod(tid, makeInt(32)), makeInt(4)));
  return add(mul(warpM, makeInt(rows / warpsM)), inWarp);
}

Expr RegisterLayout::colOf(const Expr& chunk, const Expr& v, const Expr& tid) const {
  if (!isMma()) return add(mul(add(mul(chunk, makeInt(group)), floorMod(tid, makeInt(group))), makeInt(vector)), v);
  if (mfma) {
    Expr waveN = warpCol(tid);
    return add(add(mul(waveN, makeInt(cols / warpsN)), mul(chunk, makeInt(mfma))), add(floorMod(tid, makeInt(mfma)), v));
  }
  Expr warpN = warpCol(tid);
  Expr inWarp = add(add(mul(chunk, makeInt(atomCols())), mul(floorMod(tid, makeInt(4)), makeInt(vector))), v);
  return add(mul(warpN, makeInt(cols / warpsN)), inWarp);
}

Expr RegisterLayout::tileRegister(const Expr& ri, const Expr& chunk, const Expr& v) const {
  if (!isMma()) return add(mul(ri, makeInt(colsPerThread())), add(mul(chunk, makeInt(vector)), v));
  if (mfma) {
    const int64_t regs = mfma * mfma / 64;
    Expr blk = add(mul(floorDiv(ri, makeInt(regs)), makeInt(chunksPerRow())), add(chunk, v));
    return add(mul(blk, makeInt(regs)), floorMod(ri, makeInt(regs)));
  }
  Expr atom = add(mul(floorDiv(ri, makeInt(2)), makeInt(chunksPerRow())), chunk);
  return add(mul(atom, makeInt(2 * vector)), add(mul(floorMod(ri, makeInt(2)), makeInt(vector)), v));
}

Expr RegisterLayout::tileRegisterAt(const Expr& ri, const Expr& c) const {
  if (!isMma()) return add(mul(ri, makeInt(colsPerThread())), c);
  return tileRegister(ri, floorDiv(c, makeInt(vector)), floorMod(c, makeInt(vector)));
}

Expr RegisterLayout::rowVectorOwner(const Expr& tid) const {
  if (!isMma()) return eq(floorMod(tid, makeInt(group)), 0);
  return logicalAnd(eq(floorMod(tid, makeInt(mfma ? mfma : 4)), 0), eq(warpCol(tid), 0));
}

Expr RegisterLayout::columnVectorOwner(const Expr& tid) const {
  if (!isMma()) return lt(tid, makeInt(group));
  if (mfma) return logicalAnd(lt(floorMod(tid, makeInt(64)), makeInt(mfma)), lt(tid, makeInt(64 * warpsN)));
  return logicalAnd(lt(floorMod(tid, makeInt(32)), makeInt(4)), eq(warpRow(tid), 0));
}

layout::Fragment RegisterLayout::tile() const {
  if (mfma) return layout::Fragment::mfmaAccumulator(rows, cols, warpsM, warpsN, mfma);
  if (isMma()) return layout::Fragment::mmaAccumulator(rows, cols, warpsM, warpsN, colMajor, vector);
  auto v = placeholders(2);
  Expr i = makeVarRef(v[0]), j = makeVarRef(v[1]);
  Expr thread = add(mul(floorMod(i, makeInt(rowSlots())), makeInt(group)), columnGroup(*this, j));
  Expr reg = add(mul(floorDiv(i, makeInt(rowSlots())), makeInt(colsPerThread())), columnRegister(*this, j));
  return layout::Fragment({rows, cols}, v, thread, {reg}, threads);
}

layout::Fragment RegisterLayout::rowVector() const {
  auto v = placeholders(1);
  Var rep = makeVar("rep");
  Expr i = makeVarRef(v[0]), r = makeVarRef(rep);
  if (mfma) {
    // Row i: wavefront row i / wm, lane group (i0 / 4) % G of its block row;
    // replicas: the S lanes of the group, then the warpsN wavefronts.
    const int64_t wm = rows / warpsM, groups = 64 / mfma, regs = mfma * mfma / 64;
    Expr ii = floorMod(i, makeInt(wm)), i0 = floorMod(ii, makeInt(mfma));
    Expr wave = add(mul(floorDiv(i, makeInt(wm)), makeInt(warpsN)), floorDiv(r, makeInt(mfma)));
    Expr lane = add(mul(floorMod(floorDiv(i0, makeInt(4)), makeInt(groups)), makeInt(mfma)), floorMod(r, makeInt(mfma)));
    Expr reg = add(mul(floorDiv(ii, makeInt(mfma)), makeInt(regs)),
                   add(mul(floorDiv(i0, makeInt(4 * groups)), makeInt(4)), floorMod(i0, makeInt(4))));
    return layout::Fragment({rows}, v, add(mul(wave, makeInt(64)), lane), {reg}, threads, mfma * warpsN, rep);
  }
  if (isMma()) {
    // Row i: warp row i / wm, lane group (i % 8); replicas: the 4 lanes, then the warpsN warps.
    int64_t wm = rows / warpsM;
    Expr ii = floorMod(i, makeInt(wm));
    Expr wRow = floorDiv(i, makeInt(wm)), wCol = floorDiv(r, makeInt(4));
    Expr warp = layout::Fragment::gridWarp(wRow, wCol, warpsM, warpsN, colMajor);
    Expr thread = add(mul(warp, makeInt(32)), add(mul(floorMod(ii, makeInt(8)), makeInt(4)), floorMod(r, makeInt(4))));
    Expr reg = add(mul(floorDiv(ii, makeInt(16)), makeInt(2)), floorDiv(floorMod(ii, makeInt(16)), makeInt(8)));
    return layout::Fragment({rows}, v, thread, {reg}, threads, 4 * warpsN, rep);
  }
  Expr thread = add(mul(floorMod(i, makeInt(rowSlots())), makeInt(group)), r);
  return layout::Fragment({rows}, v, thread, {floorDiv(i, makeInt(rowSlots()))}, threads, group, rep);
}

layout::Fragment RegisterLayout::columnVector() const {
  auto v = placeholders(1);
  Var rep = makeVar("rep");
  Expr j = makeVarRef(v[0]), r = makeVarRef(rep);
  if (mfma) {
    // Column j: wavefront column j / wn, lane j % S of each lane group;
    // replicas: the G lane groups, then the warpsM wavefronts.
    const int64_t wn = cols / warpsN, groups = 64 / mfma;
    Expr jj = floorMod(j, makeInt(wn));
    Expr wave = add(mul(floorDiv(r, makeInt(groups)), makeInt(warpsN)), floorDiv(j, makeInt(wn)));
    Expr lane = add(mul(floorMod(r, makeInt(groups)), makeInt(mfma)), floorMod(jj, makeInt(mfma)));
    return layout::Fragment({cols}, v, add(mul(wave, makeInt(64)), lane), {floorDiv(jj, makeInt(mfma))}, threads,
                            groups * warpsM, rep);
  }
  if (isMma()) {
    // Column j: warp column j / wn, lane (j % 4V) / V; replicas: the 8 lane groups, then the warpsM warps.
    int64_t wn = cols / warpsN, atom = atomCols();
    Expr jj = floorMod(j, makeInt(wn));
    Expr wRow = floorDiv(r, makeInt(8)), wCol = floorDiv(j, makeInt(wn));
    Expr warp = layout::Fragment::gridWarp(wRow, wCol, warpsM, warpsN, colMajor);
    Expr thread =
        add(mul(warp, makeInt(32)),
            add(mul(floorMod(r, makeInt(8)), makeInt(4)), floorDiv(floorMod(jj, makeInt(atom)), makeInt(vector))));
    Expr reg = add(mul(floorDiv(jj, makeInt(atom)), makeInt(vector)), floorMod(jj, makeInt(vector)));
    return layout::Fragment({cols}, v, thread, {reg}, threads, 8 * warpsM, rep);
  }
  Expr thread = add(mul(r, makeInt(group)), columnGroup(*this, j));
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

}  // namespace tlc::cuda
