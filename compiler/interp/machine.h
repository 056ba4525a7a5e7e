// The interpreter's run-time state and its tree walk over a compiled Program.
//
// Assumes a Program that compileProgram() accepted (slots resolved, scopes
// checked). Runs statements in order, blocks of a kernel's grid one after the
// other (block variable 0 fastest), loops of every kind sequentially.
// A user-level error (out-of-bounds access, integer division by zero, shape
// disagreement at run time) is reported through the DiagnosticEngine with the
// offending node's location and a note naming the current block; the walk
// then stops by throwing Abort, which interpret() catches.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "compiler/interp/host_tensor.h"
#include "compiler/interp/program.h"
#include "compiler/support/diagnostics.h"

namespace tlc::interp {

// Thrown after the diagnostic that stops a run has been reported.
struct Abort {};

struct BufferState {
  HostTensor* tensor = nullptr;
  std::unique_ptr<HostTensor> owned;  // allocations
  std::vector<int64_t> shape, strides;
  std::vector<uint8_t> written;  // allocations: which elements were written since the Alloc
  bool tracked = false;          // true for allocations
  bool warned = false;           // an uninitialized read was reported for this buffer
  bool live = false;
  // Allocations with several versions (AllocStmt::versions): `tensor` and
  // `written` are those of version `current`; the others' are kept here
  // (versionWritten[current] is empty while its flags are in `written`).
  std::vector<std::unique_ptr<HostTensor>> versions;
  std::vector<std::vector<uint8_t>> versionWritten;
  int64_t current = 0;
  // Version `v`'s tensor (version 0 is the allocation's own).
  HostTensor& versionTensor(int64_t v) { return v == 0 ? *owned : *versions[static_cast<size_t>(v)]; }
  // The multi-index of flat element `flat`.
  std::vector<int64_t> indexOf(int64_t flat) const;
};

// `written` flags: kUnwritten, kWritten, or kPending (an asynchronous copy
// not yet waited for will write the element).
constexpr uint8_t kUnwritten = 0, kWritten = 1, kPending = 2;

// An issued asynchronous copy: the values it will write, read when it was issued.
struct PendingCopy {
  int slot;
  int64_t version;
  std::vector<std::pair<int64_t, Value>> writes;  // flat offset, value
  SourceLoc loc;
};

// A region with its bounds evaluated.
struct RegionVal {
  BufferState* buf = nullptr;
  const ir::BufferNode* node = nullptr;
  std::vector<int64_t> mins, extents;
  int64_t numel = 1;
  SourceLoc loc;
  // Flat buffer offset of the element at local multi-index `idx`, or -1 when
  // it lies outside the buffer (masked).
  int64_t offset(const int64_t* idx) const;
};

class Machine {
 public:
  // `printTo`: where T.print lines go (null: nowhere; they are still evaluated).
  Machine(const Program& prog, DiagnosticEngine& diags, std::FILE* printTo = nullptr);

  void bindTensor(int slot, HostTensor* t);
  void setVar(int slot, Value v) { vars_[slot] = v; }
  Value eval(const CExpr& e);
  void exec(const CStmt& s);

  [[noreturn]] void fail(DiagKind kind, SourceLoc loc, std::string message, const ir::BufferNode* declared = nullptr);

 private:
  const Program& prog_;
  DiagnosticEngine& diags_;
  std::vector<Value> vars_;
  // A break or continue on its way out to its loop.
  enum class Jump { None, Break, Continue };
  Jump jump_ = Jump::None;
  std::vector<BufferState> bufs_;
  const ir::KernelStmt* kernel_ = nullptr;
  std::FILE* printTo_ = nullptr;
  std::vector<int64_t> block_;
  // Asynchronous copies issued since the last commit_group, and the
  // committed groups not yet completed, oldest first.
  std::vector<PendingCopy> openGroup_;
  std::vector<std::vector<PendingCopy>> groups_;

  void addBlockNote(Diagnostic& d);
  Value evalBinary(const CExpr& e);
  Value evalUnary(const CExpr& e);
  Value evalCall(const CExpr& e);
  int64_t evalInt(const CExpr& e);
  int64_t elementOffset(int slot, const CExpr* const* indices, size_t n, SourceLoc loc);
  Value loadElement(BufferState& b, const ir::BufferNode* node, int64_t flat, SourceLoc loc);
  void storeElement(BufferState& b, int64_t flat, Value v) {
    writeElement(*b.tensor, flat, v);
    if (b.tracked) b.written[static_cast<size_t>(flat)] = kWritten;
  }
  [[noreturn]] void failPending(const ir::BufferNode* node, const BufferState& b, int64_t flat, SourceLoc loc);
  void warnUninitialized(BufferState& b, const ir::BufferNode* node, int64_t flat, SourceLoc loc);

  void execKernel(const CStmt& s);
  void execAlloc(const CStmt& s);
  void execFor(const CStmt& s);
  void execStore(const CStmt& s);
  void execAtomic(const CStmt& s);
  void execPrint(const CStmt& s);  // print.cpp

  // Asynchronous pipelines (async_copies.cpp).
  void allocVersions(int slot);
  void selectVersion(BufferState& b, int64_t v);
  void execVersion(const CStmt& s);
  void issueWrite(PendingCopy& c, BufferState& dst, int64_t flat, Value v);
  void execAsyncWait(const CStmt& s);
  void complete(const PendingCopy& c);
  void checkNoPendingCopies();

  // Tile operations (tile_ops.cpp).
  RegionVal evalRegion(const CRegion& r);
  void execCopy(const CStmt& s);
  void execGemm(const CStmt& s);
  void execFill(const CStmt& s);
  void execReduce(const CStmt& s);
  // Reads a region element (masked reads give 0 of the buffer's dtype).
  Value regionLoad(const RegionVal& r, int64_t offset, SourceLoc loc);
};

std::string formatIndex(const std::vector<int64_t>& idx);

}  // namespace tlc::interp
