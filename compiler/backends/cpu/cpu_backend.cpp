// The CPU backend's entry points: JIT, shared objects, textual LLVM IR and
// assembly, all from one code generation + optimization path.
#include "compiler/backends/cpu/cpu_backend.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <unistd.h>

#include "compiler/backends/c_names.h"
#include "compiler/backends/cpu/llvm_codegen.h"
#include "compiler/backends/cpu/llvm_types.h"
#include "compiler/backends/cpu/target.h"
#include "compiler/support/module_image.h"
#include "runtime/cpu/tlc_cpu_runtime.h"

namespace tlc::cpu {

std::string cpuKernelSymbol(const std::string& funcName) { return "tlc_kernel_" + backend::cName(funcName); }

namespace {

class StageTimer {
 public:
  StageTimer(bool on, const char* name) : on_(on), name_(name), start_(std::chrono::steady_clock::now()) {}
  ~StageTimer() {
    if (!on_) return;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "  %8.3f ms  %s\n", ms, name_);
  }

 private:
  bool on_;
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

// Generates and optimizes the module; null with *error on failure.
// Optimization remarks and "loop not vectorized" warnings are for compiler
// developers (--emit=llvm shows the result); only errors are printed.
void onLLVMDiagnostic(const llvm::DiagnosticInfo* info, void*) {
  if (info->getSeverity() != llvm::DS_Error) return;
  llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
  llvm::errs() << "LLVM error: ";
  info->print(printer);
  llvm::errs() << "\n";
}

std::unique_ptr<llvm::Module> compileToLLVM(const ir::Module& lowered, llvm::LLVMContext& ctx, CpuTarget& target,
                                            const CpuOptions& options, bool optimize = true) {
  ctx.setDiagnosticHandlerCallBack(onLLVMDiagnostic);
  std::unique_ptr<llvm::Module> m;
  {
    StageTimer t(options.timePasses, "llvm-codegen");
    m = generateLLVM(lowered, ctx, target, CodegenOptions{options.checkBounds, options.sources});
    defineBFloatLibcalls(*m);
  }
  if (optimize) {
    StageTimer t(options.timePasses, "llvm-optimize");
    optimizeModule(*m, target, options.optLevel);
  } else {
    applyTargetAttributes(*m, target);
  }
  if (options.dumpLLVM) m->print(llvm::errs(), nullptr);
  return m;
}

class LLJitModule : public CpuJitModule {
 public:
  explicit LLJitModule(std::unique_ptr<llvm::orc::LLJIT> jit) : jit_(std::move(jit)) {}
  CpuKernelFn kernel(const std::string& funcName) override {
    auto sym = jit_->lookup(cpuKernelSymbol(funcName));
    if (!sym) {
      llvm::consumeError(sym.takeError());
      return nullptr;
    }
    return sym->toPtr<CpuKernelFn>();
  }
  CpuFailureFn failureAccessor() override {
    auto sym = jit_->lookup(kCpuFailureSymbol);
    if (!sym) {
      llvm::consumeError(sym.takeError());
      return nullptr;
    }
    return sym->toPtr<CpuFailureFn>();
  }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

std::vector<std::string> splitFeatures(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

std::unique_ptr<CpuJitModule> jitCompile(const ir::Module& lowered, const CpuOptions& options, std::string* error) {
  std::unique_ptr<CpuTarget> target = createCpuTarget(options, error);
  if (!target) return nullptr;
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = compileToLLVM(lowered, *ctx, *target, options);

  StageTimer t(options.timePasses, "llvm-jit-codegen");
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target->triple)};
  jtmb.setCPU(target->cpu);
  jtmb.addFeatures(splitFeatures(target->features));
  jtmb.setCodeGenOptLevel(target->machine->getOptLevel());
  jtmb.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Fast;
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) {
    *error = "cannot create the JIT: " + llvm::toString(jit.takeError());
    return nullptr;
  }
  // Vector math (libmvec) and libm come from the process; the runtime is ours.
  llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  auto& jd = (*jit)->getMainJITDylib();
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (gen) jd.addGenerator(std::move(*gen));
  else llvm::consumeError(gen.takeError());
  llvm::orc::MangleAndInterner mangle((*jit)->getExecutionSession(), (*jit)->getDataLayout());
  llvm::orc::SymbolMap runtime;
  auto add = [&](const char* name, auto* fn) {
    runtime[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported};
  };
  add("tlc_cpu_parallel_for", &tlc_cpu_parallel_for);
  add("tlc_cpu_stream_store_min_bytes", &tlc_cpu_stream_store_min_bytes);
  add("tlc_cpu_f8e4m3_to_f32", &tlc_cpu_f8e4m3_to_f32);
  add("tlc_cpu_f32_to_f8e4m3", &tlc_cpu_f32_to_f8e4m3);
  add("tlc_cpu_f8e5m2_to_f32", &tlc_cpu_f8e5m2_to_f32);
  add("tlc_cpu_f32_to_f8e5m2", &tlc_cpu_f32_to_f8e5m2);
  add("tlc_cpu_failure_begin", &tlc_cpu_failure_begin);
  add("tlc_cpu_fail_bounds", &tlc_cpu_fail_bounds);
  add("tlc_cpu_fail_memory", &tlc_cpu_fail_memory);
  add("tlc_cpu_failure_end", &tlc_cpu_failure_end);
  add("tlc_cpu_last_failure", &tlc_cpu_last_failure);
  add("tlc_cpu_alloc_local", &tlc_cpu_alloc_local);
  add("tlc_cpu_free_local", &tlc_cpu_free_local);
  if (auto err = jd.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    *error = llvm::toString(std::move(err));
    return nullptr;
  }
  if (auto err = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)))) {
    *error = llvm::toString(std::move(err));
    return nullptr;
  }
  auto result = std::make_unique<LLJitModule>(std::move(*jit));
  // Materialize now, so compile time is spent here and not at the first call.
  for (const ir::Func& f : lowered.funcs) result->kernel(f->name);
  return result;
}

static bool emitObjectFile(llvm::Module& m, CpuTarget& target, const std::string& path, std::string* error,
                           llvm::CodeGenFileType type = llvm::CodeGenFileType::ObjectFile) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    *error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  llvm::legacy::PassManager pm;
  if (target.machine->addPassesToEmitFile(pm, out, nullptr, type)) {
    *error = "the target cannot emit this file type";
    return false;
  }
  pm.run(m);
  out.flush();
  return true;
}

static std::string runtimeArchive() {
  if (const char* env = std::getenv("TLC_CPU_RUNTIME")) return env;
  return TLC_CPU_RUNTIME_ARCHIVE;
}

bool buildSharedObject(const ir::Module& lowered, const std::string& path, const CpuOptions& options,
                       std::string* error) {
  std::unique_ptr<CpuTarget> target = createCpuTarget(options, error);
  if (!target) return false;
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = compileToLLVM(lowered, ctx, *target, options);
  if (!options.moduleMetadata.empty()) {
    // Read by the host runtime (runtime/include/tlc/runtime.h) through dlsym.
    llvm::Constant* text = llvm::ConstantDataArray::getString(ctx, options.moduleMetadata, /*AddNull=*/true);
    new llvm::GlobalVariable(*m, text->getType(), /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage, text,
                             "tlc_module_metadata");
  }
  llvm::SmallString<128> obj;
  int fd = -1;
  if (auto ec = llvm::sys::fs::createTemporaryFile("tlc-kernel", "o", fd, obj)) {
    *error = "cannot create a temporary file: " + ec.message();
    return false;
  }
  ::close(fd);
  bool ok;
  {
    StageTimer t(options.timePasses, "llvm-object-emission");
    ok = emitObjectFile(*m, *target, obj.str().str(), error);
  }
  if (ok) {
    StageTimer t(options.timePasses, "link-shared-object");
    auto cc = llvm::sys::findProgramByName("cc");
    if (!cc) {
      *error = "no C compiler driver (`cc`) to link the shared object";
      ok = false;
    } else {
      std::string objPath = obj.str().str();
      std::string rt = runtimeArchive();
      // The runtime's symbols stay private to the library (--exclude-libs), and
      // the library stays mapped after dlclose (nodelete): its pool threads
      // outlive any one call.
      std::vector<llvm::StringRef> args = {*cc,     "-shared", "-o",      path,    objPath,
                                           rt,      "-Wl,--exclude-libs,ALL", "-Wl,-z,nodelete",
                                           "-lmvec", "-lm",     "-lpthread"};
      std::string msg;
      int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &msg);
      if (rc != 0) {
        *error = "linking " + path + " failed" + (msg.empty() ? "" : ": " + msg);
        ok = false;
      } else {
        ok = appendModuleTrailer(path, error);  // checked by the runtime before dlopen
      }
    }
  }
  llvm::sys::fs::remove(obj);
  return ok;
}

std::string emitLLVMText(const ir::Module& lowered, const CpuOptions& options, bool optimized) {
  std::string error;
  std::unique_ptr<CpuTarget> target = createCpuTarget(options, &error);
  if (!target) return "; error: " + error + "\n";
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = compileToLLVM(lowered, ctx, *target, options, optimized);
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return os.str();
}

std::string emitAssembly(const ir::Module& lowered, const CpuOptions& options) {
  std::string error;
  std::unique_ptr<CpuTarget> target = createCpuTarget(options, &error);
  if (!target) return "# error: " + error + "\n";
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = compileToLLVM(lowered, ctx, *target, options);
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  if (target->machine->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return "# error: the target cannot emit assembly\n";
  pm.run(*m);
  return std::string(text.str());
}

std::string describeTarget(const CpuOptions& options) {
  std::string error;
  std::unique_ptr<CpuTarget> target = createCpuTarget(options, &error);
  if (!target) return "error: " + error;
  return target->triple + " cpu=" + target->cpu + " vector=" + std::to_string(target->vectors.vectorBits) + "-bit";
}

}  // namespace tlc::cpu
