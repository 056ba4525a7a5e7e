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

#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/interp/host_tensor.h"
#include "compiler/interp/program.h"
#include "compiler/support/diagnostics.h"

namespace tlc::interp {

// Thrown after the diagnostic that stops a run has been reported.
struct Abort {};

// An issued asynchronous copy: the values it will write, read when it was issued.
struct PendingCopy {
  int slot;
  int64_t version;
  std::vector<std::pair<int64_t, Value>> writes;  // flat offset, value
  SourceLoc loc;
  int64_t bytes = 0;
};

// One barrier of a barrier buffer (barriers.cpp).
struct BarrierState {
  int64_t phase = 0;     // phases completed
  int64_t arrivals = 0;  // arrivals in the current phase
  int64_t bytes = 0;     // announced bytes its copies have not delivered (negative: delivered first)
  std::vector<PendingCopy> copies;   // the current phase's landed copies, written when it completes
  std::vector<PendingCopy> inFlight;  // issued copies whose bytes have not yet arrived
};

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
  // Barrier buffers: one state per barrier.
  std::vector<BarrierState> barriers;
  // Version `v`'s tensor (version 0 is the allocation's own).
  HostTensor& versionTensor(int64_t v) { return v == 0 ? *owned : *versions[static_cast<size_t>(v)]; }
  // The multi-index of flat element `flat`.
  std::vector<int64_t> indexOf(int64_t flat) const;
};

// `written` flags: kUnwritten, kWritten, or kPending (an asynchronous copy
// not yet waited for will write the element).
constexpr uint8_t kUnwritten = 0, kWritten = 1, kPending = 2;

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

  // The roles of the running warp_specialize (barriers.cpp): each runs on a
  // host thread of its own, one at a time, switching only where the running
  // one waits on a barrier phase that has not completed or ends. A role's
  // own state (variables, selected versions, copy groups) is saved while
  // the other runs.
  struct RoleWait {
    const CStmt* at = nullptr;  // the barrier_wait, or null while the role can run
    int slot = -1;
    int64_t index = 0, parity = 0;
  };
  struct Role {
    const char* name = "";
    bool done = false;
    RoleWait wait;
    std::vector<Value> vars;
    std::vector<int64_t> versionOf;  // per buffer slot
    std::vector<PendingCopy> openGroup;
    std::vector<std::vector<PendingCopy>> groups;
  };
  struct Roles {
    std::mutex m;
    std::condition_variable cv;
    int running = 0;
    bool cancel = false;  // a role failed: the other unwinds
    std::exception_ptr error;
    Role role[2];
    const CStmt* stmt = nullptr;
  };
  Roles* roles_ = nullptr;
  int role_ = -1;

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

  // Barriers and warp specialization (barriers.cpp).
  // The barrier `s` names (its slot, its index first of its exprs); `index` receives the index.
  BarrierState& barrierAt(const CStmt& s, int64_t* index = nullptr);
  std::string barrierName(int slot, int64_t index) const;
  bool phaseDone(const BarrierState& b, int64_t parity) const { return b.phase % 2 != parity; }
  void arrive(BarrierState& b, int slot, int64_t index, SourceLoc loc);
  void land(BarrierState& b, int slot, int64_t index);
  bool reached(BarrierState& b, int slot, int64_t index, int64_t parity);
  void settle(BarrierState& b, int slot, int64_t index, SourceLoc loc);
  void execBarrierArrive(const CStmt& s);
  void execBarrierWait(const CStmt& s);
  void execWarpSpecialize(const CStmt& s);
  void runRole(int me, const CStmt& body);
  bool canRun(const Role& r);
  void saveRole(Role& r);
  void loadRole(const Role& r);
  // Hands the host to the other role (when it can run) and sleeps until
  // this one may run again; reports a deadlock when neither can.
  void yieldRole(std::unique_lock<std::mutex>& lock);
  // A deadlock reported at the wait `at`, with a note for each other role.
  [[noreturn]] void failDeadlock(const CStmt& at, const std::string& message);
  std::string waitText(const RoleWait& w);

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
