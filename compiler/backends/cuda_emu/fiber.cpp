// Fibers (see fiber.h).
#include "compiler/backends/cuda_emu/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <new>
#include <stdexcept>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace tlc::cuda_emu {

#if defined(__x86_64__)
// void tlc_emu_switch(void** saveSp, void* loadSp): pushes the callee-saved
// registers, stores rsp into *saveSp, loads loadSp and pops the other
// context's registers; `ret` resumes it.
extern "C" void tlc_emu_switch(void** saveSp, void* loadSp);
asm(R"(
  .text
  .globl tlc_emu_switch
  .type tlc_emu_switch, @function
tlc_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tlc_emu_switch, .-tlc_emu_switch

  .globl tlc_emu_fiber_start
  .type tlc_emu_fiber_start, @function
tlc_emu_fiber_start:
  movq %r12, %rdi
  call *%r13
  ud2
  .size tlc_emu_fiber_start, .-tlc_emu_fiber_start
)");
extern "C" void tlc_emu_fiber_start();
#endif

struct FiberAccess {
  static void run(Fiber* f) { Fiber::trampoline(f); }
};

namespace {
extern "C" void tlc_emu_fiber_main(void* f) { FiberAccess::run(static_cast<Fiber*>(f)); }
#if !defined(__x86_64__)
void ucontextEntry(unsigned hi, unsigned lo) {
  uintptr_t p = ((uintptr_t)hi << 32) | lo;
  tlc_emu_fiber_main(reinterpret_cast<void*>(p));
}
#endif
}  // namespace

Fiber::~Fiber() {
  if (mapping_) munmap(mapping_, mappingBytes_);
#if !defined(__x86_64__)
  delete[] static_cast<ucontext_t*>(ucontextStorage_);
#endif
}

void Fiber::allocate(size_t stackBytes) {
  if (mapping_) return;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  stackBytes = (stackBytes + page - 1) / page * page;
  mappingBytes_ = stackBytes + page;
  void* m = mmap(nullptr, mappingBytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  mapping_ = static_cast<uint8_t*>(m);
  mprotect(mapping_, page, PROT_NONE);  // guard page below the stack
  stack_ = mapping_ + page;
  stackBytes_ = stackBytes;
#if !defined(__x86_64__)
  ucontextStorage_ = new ucontext_t[2];
#endif
}

void Fiber::useStack(uint8_t* base, size_t bytes) {
  stack_ = base;
  stackBytes_ = bytes;
#if !defined(__x86_64__)
  if (!ucontextStorage_) ucontextStorage_ = new ucontext_t[2];
#endif
}

void Fiber::trampoline(Fiber* self) {
  self->entry_(self->arg_);
  std::abort();  // entries never return
}

void Fiber::start(Entry entry, void* arg) {
  entry_ = entry;
  arg_ = arg;
#if defined(__x86_64__)
  // Initial frame popped by tlc_emu_switch: mxcsr/fpu word, r15, r14, r13,
  // r12, rbx, rbp, return address. r12 = this, r13 = tlc_emu_fiber_main.
  uintptr_t top = reinterpret_cast<uintptr_t>(stack_ + stackBytes_) & ~uintptr_t(15);
  uint64_t* sp = reinterpret_cast<uint64_t*>(top);
  // After `ret` pops the start address, rsp == top (16-byte aligned) at the
  // call in tlc_emu_fiber_start, as the ABI requires.
  *--sp = reinterpret_cast<uint64_t>(&tlc_emu_fiber_start);
  *--sp = 0;                                                     // rbp
  *--sp = 0;                                                     // rbx
  *--sp = reinterpret_cast<uint64_t>(this);                      // r12
  *--sp = reinterpret_cast<uint64_t>(&tlc_emu_fiber_main);       // r13
  *--sp = 0;                                                     // r14
  *--sp = 0;                                                     // r15
  uint32_t mxcsr;
  uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  *--sp = (uint64_t)mxcsr | ((uint64_t)fpucw << 32);
  fiberSp_ = sp;
#else
  ucontext_t* uc = static_cast<ucontext_t*>(ucontextStorage_);
  getcontext(&uc[0]);
  uc[0].uc_stack.ss_sp = stack_;
  uc[0].uc_stack.ss_size = stackBytes_;
  uc[0].uc_link = nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(this);
  makecontext(&uc[0], (void (*)())ucontextEntry, 2, (unsigned)(p >> 32), (unsigned)p);
#endif
}

void Fiber::resume() {
#if defined(__x86_64__)
  tlc_emu_switch(&schedulerSp_, fiberSp_);
#else
  ucontext_t* uc = static_cast<ucontext_t*>(ucontextStorage_);
  swapcontext(&uc[1], &uc[0]);
#endif
}

void Fiber::suspend() {
#if defined(__x86_64__)
  tlc_emu_switch(&fiberSp_, schedulerSp_);
#else
  ucontext_t* uc = static_cast<ucontext_t*>(ucontextStorage_);
  swapcontext(&uc[0], &uc[1]);
#endif
}

}  // namespace tlc::cuda_emu
