#include "compiler/backends/cpu/tile_transpose.h"

#include "compiler/backends/cpu/contiguous_access.h"

namespace tlc::cpu {

using namespace ir;

namespace {

bool zeroStart(const ForStmt& f, int64_t* extent) {
  int64_t lo = -1;
  return constInt(f.min, &lo) && lo == 0 && constInt(f.extent, extent);
}

}  // namespace

std::optional<TransposeNest> matchTransposeNest(const ForStmt& outer, int vectorBits) {
  auto* inner = as<ForStmt>(outer.body);
  if (outer.forKind != ForKind::Serial || !inner || inner->forKind != ForKind::Vectorized) return std::nullopt;
  auto* store = as<StoreStmt>(inner->body);
  auto* load = store ? as<Load>(store->value) : nullptr;
  if (!load || load->buffer == store->buffer || load->buffer->dtype != store->buffer->dtype) return std::nullopt;
  DType t = store->buffer->dtype;
  int bytes = dtypeBytes(t);
  if (t == DType::Bool || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)) return std::nullopt;
  const VarNode* i = outer.var.get();
  const VarNode* j = inner->var.get();
  // The store runs along one variable, the load along the other, and each
  // uses the other variable.
  bool loadAlongOuter = contiguousIn(store->indices, j) && contiguousIn(load->indices, i);
  if (!loadAlongOuter && !(contiguousIn(store->indices, i) && contiguousIn(load->indices, j))) return std::nullopt;
  bool storeUsesI = false, loadUsesJ = false;
  for (const Expr& e : store->indices) storeUsesI |= usesVar(e, i);
  for (const Expr& e : load->indices) loadUsesJ |= usesVar(e, j);
  if (!storeUsesI || !loadUsesJ) return std::nullopt;
  int64_t rows = 0, cols = 0;
  if (!zeroStart(outer, &rows) || !zeroStart(*inner, &cols)) return std::nullopt;
  int64_t lanes = vectorBits / (8 * bytes);
  int64_t block = std::min<int64_t>(16, lanes);
  if (block < 4 || rows % block || cols % block) return std::nullopt;
  // Blocks side by side along the stores, so that each store fills a vector
  // register (a 64-byte line of float16 with AVX-512, not half of one).
  int64_t across = loadAlongOuter ? cols : rows;
  int64_t pack = lanes / block;
  while (pack > 1 && across % (pack * block)) pack /= 2;
  return TransposeNest{&outer, inner, store, load, rows, cols, block, pack, loadAlongOuter};
}

llvm::Value* concatVectors(llvm::IRBuilder<>& b, std::vector<llvm::Value*> parts) {
  while (parts.size() > 1) {
    std::vector<llvm::Value*> joined;
    for (size_t q = 0; q < parts.size(); q += 2) {
      unsigned n = llvm::cast<llvm::FixedVectorType>(parts[q]->getType())->getNumElements();
      std::vector<int> mask(2 * n);
      for (unsigned e = 0; e < 2 * n; ++e) mask[e] = int(e);
      joined.push_back(b.CreateShuffleVector(parts[q], parts[q + 1], mask));
    }
    parts = std::move(joined);
  }
  return parts[0];
}

std::vector<llvm::Value*> transposeInRegisters(llvm::IRBuilder<>& b, std::vector<llvm::Value*> rows) {
  int n = int(rows.size());
  int width = int(llvm::cast<llvm::FixedVectorType>(rows[0]->getType())->getNumElements());
  // Round s swaps, for each pair of rows r and r + s (r & s == 0), the
  // s-wide blocks above and below the diagonal of their 2s x 2s blocks, in
  // each n-element segment of the rows.
  for (int s = n / 2; s >= 1; s /= 2) {
    std::vector<int> low(width), high(width);
    for (int e = 0; e < width; ++e) {
      int k = e % n;
      low[e] = (k & s) ? width + e - s : e;
      high[e] = (k & s) ? width + e : e + s;
    }
    for (int r = 0; r < n; ++r) {
      if (r & s) continue;
      llvm::Value* a = rows[r];
      llvm::Value* c = rows[r + s];
      rows[r] = b.CreateShuffleVector(a, c, low);
      rows[r + s] = b.CreateShuffleVector(a, c, high);
    }
  }
  return rows;
}

}  // namespace tlc::cpu
