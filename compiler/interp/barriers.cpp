// The interpreter's barriers and warp specialization (ir.h: AllocStmt::
// arrivals, CopyStmt::barrier, BarrierArriveStmt, BarrierWaitStmt,
// WarpSpecializeStmt; docs/tile-ir.md, "Barriers and warp specialization").
//
// A barrier counts the arrivals and the announced bytes of its current
// phase. A copy on a barrier reads its source when issued, but its bytes
// arrive as late as they may: when a wait on the barrier cannot return
// without them (a copy still in flight when its block ends is an error); its destination is written when the phase
// completes (all arrivals in, every announced byte delivered). So a read
// that no wait orders after the copy finds pending elements and fails,
// whatever order the roles run in.
// The two roles of a warp_specialize run on two host threads, one at a
// time: the running role switches only at a wait whose phase has not
// completed, or at its end; when neither role can go on, the program
// deadlocks on a GPU, and that is reported with both waits.
#include <thread>

#include "compiler/interp/machine.h"

namespace tlc::interp {

using namespace tlc::ir;

namespace {

// Unwinds a role whose partner failed.
struct Cancelled {};

}  // namespace

std::string Machine::barrierName(int slot, int64_t index) const {
  return "`" + prog_.buffers[static_cast<size_t>(slot)].buffer->name + "[" + std::to_string(index) + "]`";
}

BarrierState& Machine::barrierAt(const CStmt& s, int64_t* index) {
  BufferState& b = bufs_[s.slot];
  const BufferNode* node = prog_.buffers[s.slot].buffer;
  if (!b.live) fail(DiagKind::InterpInvalidProgram, s.node->loc, "barriers `" + node->name + "` are used before they are allocated", node);
  int64_t i = evalInt(*s.exprs[0]);
  if (i < 0 || i >= static_cast<int64_t>(b.barriers.size()))
    fail(DiagKind::InterpOutOfBounds, s.node->loc,
         "barrier " + std::to_string(i) + " of `" + node->name + "`, which has " + std::to_string(b.barriers.size()),
         node);
  if (index) *index = i;
  return b.barriers[static_cast<size_t>(i)];
}

void Machine::arrive(BarrierState& b, int slot, int64_t index, SourceLoc loc) {
  int64_t expected = prog_.buffers[static_cast<size_t>(slot)].arrivals;
  if (b.arrivals >= expected)
    fail(DiagKind::InterpInvalidProgram, loc,
         "an arrival on " + barrierName(slot, index) + " beyond the " + std::to_string(expected) +
             " that complete its phase " + std::to_string(b.phase) + ", which still awaits " +
             std::to_string(b.bytes) + " bytes of copies");
  ++b.arrivals;
  settle(b, slot, index, loc);
}

// The bytes of the copies in flight on `b` arrive.
void Machine::land(BarrierState& b, int slot, int64_t index) {
  std::vector<PendingCopy> arriving = std::move(b.inFlight);
  b.inFlight.clear();
  for (PendingCopy& c : arriving) {
    b.bytes -= c.bytes;
    SourceLoc loc = c.loc;
    b.copies.push_back(std::move(c));
    settle(b, slot, index, loc);
  }
}

// Completes the phase when it has every arrival and every announced byte.
void Machine::settle(BarrierState& b, int slot, int64_t index, SourceLoc loc) {
  if (b.arrivals < prog_.buffers[static_cast<size_t>(slot)].arrivals) return;
  if (b.bytes < 0)
    fail(DiagKind::InterpInvalidProgram, loc,
         "phase " + std::to_string(b.phase) + " of " + barrierName(slot, index) + " received " +
             std::to_string(-b.bytes) + " bytes of copies more than its arrivals announced (expect_bytes)");
  if (b.bytes > 0) return;
  for (const PendingCopy& c : b.copies) complete(c);
  b.copies.clear();
  b.arrivals = 0;
  ++b.phase;
}

// Whether the phase of parity `parity` has completed; the copies in flight
// land only when it has not without them.
bool Machine::reached(BarrierState& b, int slot, int64_t index, int64_t parity) {
  if (phaseDone(b, parity)) return true;
  land(b, slot, index);
  return phaseDone(b, parity);
}

void Machine::execBarrierArrive(const CStmt& s) {
  int64_t index;
  BarrierState& b = barrierAt(s, &index);
  if (s.exprs.size() > 1) {
    int64_t bytes = evalInt(*s.exprs[1]);
    if (bytes < 0)
      fail(DiagKind::InterpUndefinedBehavior, s.node->loc, "a barrier cannot expect a negative number of bytes (" + std::to_string(bytes) + ")");
    b.bytes += bytes;
  }
  arrive(b, s.slot, index, s.node->loc);
}

std::string Machine::waitText(const RoleWait& w) {
  const BarrierState& b = bufs_[w.slot].barriers[static_cast<size_t>(w.index)];
  std::string text = "for the phase of parity " + std::to_string(w.parity) + " of " + barrierName(w.slot, w.index) +
                     ", which has completed " + std::to_string(b.phase) + " phases and has " +
                     std::to_string(b.arrivals) + " of " + std::to_string(prog_.buffers[w.slot].arrivals) + " arrivals";
  if (b.bytes > 0) text += " and " + std::to_string(b.bytes) + " announced bytes no copy delivered";
  return text;
}

void Machine::failDeadlock(const CStmt& at, const std::string& message) {
  Diagnostic& d = diags_.report(DiagKind::InterpDeadlock, at.node->loc, message);
  if (roles_)
    for (const Role& r : roles_->role) {
      if (r.done)
        d.note(roles_->stmt->node->loc, std::string("the ") + r.name + " role has finished");
      else if (r.wait.at && r.wait.at != &at)  // the message says what `at` waits for
        d.note(r.wait.at->node->loc, std::string("the ") + r.name + " role waits here " + waitText(r.wait));
    }
  addBlockNote(d);
  throw Abort{};
}

void Machine::execBarrierWait(const CStmt& s) {
  int64_t index;
  BarrierState& b = barrierAt(s, &index);
  int64_t parity = evalInt(*s.exprs[1]);
  if (parity != 0 && parity != 1)
    fail(DiagKind::InterpUndefinedBehavior, s.node->loc, "a phase's parity is 0 or 1, not " + std::to_string(parity));
  if (reached(b, s.slot, index, parity)) return;
  RoleWait wait{&s, s.slot, index, parity};
  if (!roles_)
    failDeadlock(s, "this wait never returns: nothing else in the block runs to complete the phase it waits " +
                                  waitText(wait));
  std::unique_lock<std::mutex> lock(roles_->m);
  roles_->role[role_].wait = wait;
  yieldRole(lock);
  roles_->role[role_].wait = {};
}

bool Machine::canRun(const Role& r) {
  if (r.done) return false;
  if (!r.wait.at) return true;
  return reached(bufs_[r.wait.slot].barriers[static_cast<size_t>(r.wait.index)], r.wait.slot, r.wait.index,
                 r.wait.parity);
}

void Machine::saveRole(Role& r) {
  r.vars = vars_;
  r.versionOf.assign(bufs_.size(), 0);
  for (size_t i = 0; i < bufs_.size(); ++i) r.versionOf[i] = bufs_[i].current;
  r.openGroup = openGroup_;
  r.groups = groups_;
}

void Machine::loadRole(const Role& r) {
  vars_ = r.vars;
  for (size_t i = 0; i < bufs_.size(); ++i)
    if (!bufs_[i].versions.empty() && i < r.versionOf.size()) selectVersion(bufs_[i], r.versionOf[i]);
  openGroup_ = r.openGroup;
  groups_ = r.groups;
}

void Machine::yieldRole(std::unique_lock<std::mutex>& lock) {
  Roles& r = *roles_;
  int me = role_, other = 1 - role_;
  if (!canRun(r.role[other])) {
    lock.unlock();
    failDeadlock(*r.role[me].wait.at,
                 std::string("deadlock: the ") + r.role[me].name + " role waits " + waitText(r.role[me].wait) +
                     ", and the " + r.role[other].name + " role, which could complete it, " +
                     (r.role[other].done ? "has finished" : "waits too"));
  }
  saveRole(r.role[me]);
  loadRole(r.role[other]);
  role_ = other;
  r.running = other;
  r.cv.notify_all();
  r.cv.wait(lock, [&] { return r.running == me || r.cancel; });
  if (r.cancel) throw Cancelled{};
}

void Machine::runRole(int me, const CStmt& body) {
  Roles& r = *roles_;
  {
    std::unique_lock<std::mutex> lock(r.m);
    r.cv.wait(lock, [&] { return r.running == me || r.cancel; });
    if (r.cancel) return;
  }
  auto failed = [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(r.m);
    if (!r.error) r.error = e;
    r.cancel = true;
    r.cv.notify_all();
  };
  try {
    exec(body);
  } catch (const Cancelled&) {
    return;
  } catch (...) {
    return failed(std::current_exception());
  }
  std::unique_lock<std::mutex> lock(r.m);
  r.role[me].done = true;
  saveRole(r.role[me]);
  int other = 1 - me;
  if (!r.role[other].done) {
    if (!canRun(r.role[other])) {
      lock.unlock();
      try {
        failDeadlock(*r.role[other].wait.at,
                     std::string("deadlock: the ") + r.role[other].name + " role waits " + waitText(r.role[other].wait) +
                         ", and the " + r.role[me].name + " role has finished without completing it");
      } catch (...) {
        return failed(std::current_exception());
      }
    }
    loadRole(r.role[other]);
    role_ = other;
    r.running = other;
  }
  r.cv.notify_all();
}

void Machine::execWarpSpecialize(const CStmt& s) {
  if (roles_) fail(DiagKind::InterpUnsupported, s.node->loc, "a warp_specialize inside a role of another");
  Roles r;
  r.stmt = &s;
  r.role[0].name = "producer";
  r.role[1].name = "consumer";
  saveRole(r.role[0]);
  saveRole(r.role[1]);
  std::vector<Value> vars = vars_;
  roles_ = &r;
  role_ = 0;
  r.running = 0;
  {
    std::thread producer([&] { runRole(0, *s.body[0]); });
    std::thread consumer([&] { runRole(1, *s.body[1]); });
    {
      std::unique_lock<std::mutex> lock(r.m);
      r.cv.wait(lock, [&] { return (r.role[0].done && r.role[1].done) || r.error; });
      r.cancel = r.cancel || r.error;
      r.cv.notify_all();
    }
    producer.join();
    consumer.join();
  }
  roles_ = nullptr;
  role_ = -1;
  if (r.error) std::rethrow_exception(r.error);
  // Both roles ended outside their version blocks; their copy groups go on.
  vars_ = std::move(vars);
  openGroup_ = r.role[0].openGroup;
  openGroup_.insert(openGroup_.end(), r.role[1].openGroup.begin(), r.role[1].openGroup.end());
  groups_ = r.role[0].groups;
  groups_.insert(groups_.end(), r.role[1].groups.begin(), r.role[1].groups.end());
}

}  // namespace tlc::interp
