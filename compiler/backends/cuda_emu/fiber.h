// Fibers for emulated GPU threads: each GPU thread of a block runs on its own
// stack and gives control back to the scheduler only at the points the
// emulator chooses (barriers, warp collectives, async-copy waits, exit).
//
// x86-64 uses a hand-written switch of the callee-saved registers (a few
// nanoseconds, so blocks of 1024 threads switching at every warp collective
// stay fast); other hosts fall back to ucontext. Stacks are mmap'd with a
// guard page below them, so a stack overflow faults instead of corrupting
// memory. Not thread-safe: one scheduler per OS thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tlc::cuda_emu {

class Fiber {
 public:
  using Entry = void (*)(void* arg);
  Fiber() = default;
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Allocates the stack once (reused by later start() calls).
  void allocate(size_t stackBytes);
  // Uses caller-owned memory as the stack instead (it must outlive the fiber
  // and should have a guard page below it).
  void useStack(uint8_t* base, size_t bytes);
  // Prepares the fiber to run entry(arg) from the top of its stack on the
  // next resume(). entry must never return: it ends with suspend() forever.
  void start(Entry entry, void* arg);
  // Runs the fiber until it calls suspend(). Called from the scheduler.
  void resume();
  // Returns control to the scheduler. Called from inside the fiber.
  void suspend();

  const uint8_t* stackBegin() const { return stack_; }
  const uint8_t* stackEnd() const { return stack_ + stackBytes_; }

 private:
  uint8_t* mapping_ = nullptr;  // guard page + stack
  size_t mappingBytes_ = 0;
  uint8_t* stack_ = nullptr;
  size_t stackBytes_ = 0;
  void* fiberSp_ = nullptr;      // saved stack pointer of the fiber
  void* schedulerSp_ = nullptr;  // saved stack pointer of the scheduler
  void* ucontextStorage_ = nullptr;
  Entry entry_ = nullptr;
  void* arg_ = nullptr;
  static void trampoline(Fiber* self);
  friend struct FiberAccess;
};

}  // namespace tlc::cuda_emu
