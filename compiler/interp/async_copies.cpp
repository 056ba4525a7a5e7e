// The interpreter's asynchronous pipelines (ir.h: AllocStmt::versions,
// VersionStmt, CopyStmt::async, AsyncCommitStmt, AsyncWaitStmt).
//
// A buffer with several versions keeps one tensor and one set of `written`
// flags per version; a VersionStmt selects which one its body's accesses
// reach. An asynchronous copy (execCopy) reads its source when issued and marks its
// destination elements pending; its writes land when an AsyncWaitStmt
// completes its group. Reading a pending element is an error (on a GPU it
// would race with the copy), and so is a block that ends with copies no
// wait completed: a wrong expansion of a pipeline cannot pass unnoticed.
#include "compiler/interp/machine.h"

namespace tlc::interp {

using namespace tlc::ir;

void Machine::failPending(const BufferNode* node, const BufferState& b, int64_t flat, SourceLoc loc) {
  std::vector<int64_t> idx = b.indexOf(flat);
  std::string which = b.versions.empty() ? "" : " (version " + std::to_string(b.current) + ")";
  fail(DiagKind::InterpInvalidProgram, loc,
       "`" + node->name + "`" + which + " is read at " + formatIndex(idx) +
           " while an asynchronous copy to it is in flight; a wait_group that completes the copy's group must come "
           "first",
       node);
}

// `first` (the Alloc's tensor) is version 0; the others start as its copies
// (poisoned, unwritten).
void Machine::allocVersions(int slot) {
  BufferState& b = bufs_[slot];
  const HostTensor& first = *b.owned;
  size_t n = static_cast<size_t>(prog_.buffers[slot].versions);
  b.versions.resize(n);
  for (size_t v = 1; v < n; ++v)
    if (!b.versions[v] || b.versions[v]->shape != first.shape) b.versions[v] = std::make_unique<HostTensor>(first);
  b.versionWritten.assign(n, std::vector<uint8_t>(b.written.size(), kUnwritten));
  b.versionWritten[0].clear();
  b.current = 0;
}

void Machine::selectVersion(BufferState& b, int64_t v) {
  if (v == b.current) return;
  std::swap(b.written, b.versionWritten[static_cast<size_t>(b.current)]);
  std::swap(b.written, b.versionWritten[static_cast<size_t>(v)]);
  b.current = v;
  b.tensor = &b.versionTensor(v);
}

void Machine::execVersion(const CStmt& s) {
  int64_t v = evalInt(*s.exprs[0]);
  std::vector<int64_t> before;
  for (int slot : s.vars) {
    BufferState& b = bufs_[slot];
    const BufferNode* node = prog_.buffers[slot].buffer;
    if (!b.live) fail(DiagKind::InterpInvalidProgram, s.node->loc, "buffer `" + node->name + "` is used before it is allocated", node);
    if (v < 0 || v >= static_cast<int64_t>(b.versions.size()))
      fail(DiagKind::InterpOutOfBounds, s.node->loc,
           "version " + std::to_string(v) + " of `" + node->name + "`, which has " + std::to_string(b.versions.size()) +
               " versions",
           node);
    before.push_back(b.current);
    selectVersion(b, v);
  }
  exec(*s.body[0]);
  for (size_t i = 0; i < s.vars.size(); ++i) selectVersion(bufs_[s.vars[i]], before[i]);
}

// An issued copy's element: written when its group completes, pending until then.
void Machine::issueWrite(PendingCopy& c, BufferState& dst, int64_t flat, Value v) {
  if (dst.tracked && dst.written[static_cast<size_t>(flat)] == kPending)
    fail(DiagKind::InterpInvalidProgram, c.loc,
         "this asynchronous copy writes `" + prog_.buffers[static_cast<size_t>(c.slot)].buffer->name + "` at " +
             formatIndex(dst.indexOf(flat)) + " while an earlier one to it is in flight",
         prog_.buffers[static_cast<size_t>(c.slot)].buffer);
  c.writes.emplace_back(flat, v);
  if (dst.tracked) dst.written[static_cast<size_t>(flat)] = kPending;
}

void Machine::complete(const PendingCopy& c) {
  BufferState& b = bufs_[c.slot];
  bool current = c.version < 0 || c.version == b.current;
  HostTensor& t = current ? *b.tensor : b.versionTensor(c.version);
  std::vector<uint8_t>& written = current ? b.written : b.versionWritten[size_t(c.version)];
  for (const auto& [off, v] : c.writes) {
    writeElement(t, off, v);
    if (b.tracked) written[static_cast<size_t>(off)] = kWritten;
  }
}

void Machine::execAsyncWait(const CStmt& s) {
  size_t keep = static_cast<size_t>(static_cast<const AsyncWaitStmt*>(s.node)->pending);
  if (groups_.size() <= keep) return;
  size_t done = groups_.size() - keep;
  for (size_t g = 0; g < done; ++g)
    for (const PendingCopy& c : groups_[g]) complete(c);
  groups_.erase(groups_.begin(), groups_.begin() + static_cast<std::ptrdiff_t>(done));
}

void Machine::checkNoPendingCopies() {
  for (const auto& g : groups_)
    if (!g.empty())
      fail(DiagKind::InterpInvalidProgram, g.front().loc,
           "this asynchronous copy is never completed: the block ends before a wait_group completes its group");
  if (!openGroup_.empty())
    fail(DiagKind::InterpInvalidProgram, openGroup_.front().loc,
         "this asynchronous copy is never committed: a commit_group and then a wait_group must follow it");
  groups_.clear();
  for (size_t slot = 0; slot < bufs_.size(); ++slot)
    for (size_t i = 0; i < bufs_[slot].barriers.size(); ++i)
      for (const auto* copies : {&bufs_[slot].barriers[i].copies, &bufs_[slot].barriers[i].inFlight})
        if (!copies->empty())
          fail(DiagKind::InterpInvalidProgram, copies->front().loc,
               "this asynchronous copy is never completed: the block ends before phase " +
                   std::to_string(bufs_[slot].barriers[i].phase) + " of " + barrierName(int(slot), int64_t(i)) +
                   " completes");
}

}  // namespace tlc::interp
