#include "compiler/backends/cpu/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>
#include <set>
#include <sstream>

namespace tlc::cpu {

static void initializeLLVMOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// Host features, then the user's overrides (later entries win).
static std::string resolveFeatures(const CpuOptions& options, bool hostCpu) {
  std::vector<std::string> feats;
  if (hostCpu) {
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (auto& kv : host) feats.push_back((kv.second ? "+" : "-") + kv.first().str());
  }
  std::stringstream ss(options.features);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    if (item[0] != '+' && item[0] != '-') item = "+" + item;
    feats.push_back(item);
  }
  std::string out;
  for (const std::string& f : feats) out += (out.empty() ? "" : ",") + f;
  return out;
}

// Whether the feature string (with overrides applied in order) enables `name`.
static bool featureOn(const llvm::TargetMachine& tm, const std::string& features, const std::string& name) {
  bool on = false;
  bool seen = false;
  std::stringstream ss(features);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.size() > 1 && item.substr(1) == name) {
      on = item[0] == '+';
      seen = true;
    }
  }
  if (seen) return on;
  // Not listed: ask the subtarget of the named CPU.
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  return sti && sti->checkFeatures("+" + name);
}

std::unique_ptr<CpuTarget> createCpuTarget(const CpuOptions& options, std::string* error) {
  initializeLLVMOnce();
  auto t = std::make_unique<CpuTarget>();
  t->triple = llvm::sys::getProcessTriple();
  bool hostCpu = options.cpu.empty() || options.cpu == "native";
  t->cpu = hostCpu ? llvm::sys::getHostCPUName().str() : options.cpu;
  t->features = resolveFeatures(options, hostCpu);
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t->triple, err);
  if (!target) {
    *error = "no LLVM target for " + t->triple + ": " + err;
    return nullptr;
  }
  if (!hostCpu) {
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(t->triple, "", ""));
    if (!sti->isCPUStringValid(t->cpu)) {
      *error = "unknown CPU `" + t->cpu + "` for " + t->triple;
      return nullptr;
    }
  }
  llvm::TargetOptions to;
  to.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // fused multiply-add, as GPUs do
  auto level = options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
               : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
               : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                       : llvm::CodeGenOptLevel::None;
  t->machine.reset(target->createTargetMachine(t->triple, t->cpu, t->features, to, llvm::Reloc::PIC_,
                                               std::nullopt, level));
  if (!t->machine) {
    *error = "cannot create a target machine for " + t->cpu;
    return nullptr;
  }
  const llvm::TargetMachine& tm = *t->machine;
  bool x86 = llvm::Triple(t->triple).isX86();
  if (x86) {
    if (featureOn(tm, t->features, "avx512f")) {
      t->vectors = {512, 32, true};
    } else if (featureOn(tm, t->features, "avx")) {
      t->vectors = {256, 16, featureOn(tm, t->features, "fma")};
    } else {
      t->vectors = {128, 16, false};
    }
  } else {
    t->vectors = {128, 32, true};  // AArch64 NEON
  }
  return t;
}

void applyTargetAttributes(llvm::Module& m, const CpuTarget& target) {
  m.setTargetTriple(target.triple);
  m.setDataLayout(target.machine->createDataLayout());
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", target.cpu);
    f.addFnAttr("target-features", target.features);
    f.addFnAttr("prefer-vector-width", std::to_string(target.vectors.vectorBits));
    f.addFnAttr("min-legal-vector-width", std::to_string(target.vectors.vectorBits));
    f.addFnAttr(llvm::Attribute::NoUnwind);
    // Tile rows are short: a library call per row costs more than the inline
    // vector loop the vectorizer makes, so loops are not turned into memcpy/memset.
    f.addFnAttr("no-builtin-memcpy");
    f.addFnAttr("no-builtin-memset");
    f.addFnAttr("no-builtin-memmove");
  }
}

void optimizeModule(llvm::Module& m, CpuTarget& target, int optLevel) {
  applyTargetAttributes(m, target);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = optLevel >= 2;
  pto.SLPVectorization = optLevel >= 2;
  llvm::PassBuilder pb(target.machine.get(), pto);
  // Vector math from glibc's libmvec (expf, logf, ... on whole vectors).
  llvm::Triple triple(target.triple);
  auto tlii = std::make_unique<llvm::TargetLibraryInfoImpl>(triple);
  if (triple.isX86() && triple.isOSLinux())
    tlii->addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(*tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel >= 3   ? llvm::OptimizationLevel::O3
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                  : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm =
      optLevel == 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

}  // namespace tlc::cpu
