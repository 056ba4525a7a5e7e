#include "compiler/backends/cpu/target.h"

#include "compiler/backends/cpu/narrow_vector_compares.h"

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

#include <algorithm>
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

// The name in `names` closest to `name`, or "" when none is close.
static std::string closest(const std::string& name, const std::vector<std::string>& names) {
  std::string best;
  unsigned bestDistance = ~0u;
  for (const std::string& n : names) {
    unsigned d = llvm::StringRef(n).edit_distance(name, /*AllowReplacements=*/true);
    if (d < bestDistance) {
      bestDistance = d;
      best = n;
    }
  }
  return bestDistance <= std::max<unsigned>(2, unsigned(name.size() / 3)) ? best : "";
}

static std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Whether a subtarget can generate code for the triple: x86-64 code needs a
// 64-bit CPU, and SSE2 (the ABI passes floating-point values in SSE
// registers).
static std::string subtargetProblem(const llvm::MCSubtargetInfo& sti, const llvm::Triple& triple) {
  if (triple.getArch() != llvm::Triple::x86_64) return "";
  if (!sti.checkFeatures("+64bit")) return "it cannot run 64-bit x86 code";
  if (!sti.checkFeatures("+sse2")) return "x86-64 code needs SSE and SSE2 (the ABI passes floating-point values in SSE registers)";
  return "";
}

// An empty string when `options` name a CPU and features LLVM can generate
// code for on this host; else what is wrong and the valid choices.
static std::string checkOptions(const llvm::Target& target, const std::string& triple, const CpuOptions& options,
                                bool hostCpu, const std::string& cpu, const std::string& features) {
  llvm::Triple tt(triple);
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target.createMCSubtargetInfo(triple, "", ""));
  if (!hostCpu) {
    std::vector<std::string> usable;
    for (const llvm::SubtargetSubTypeKV& kv : generic->getAllProcessorDescriptions()) {
      std::unique_ptr<llvm::MCSubtargetInfo> sti(target.createMCSubtargetInfo(triple, kv.Key, ""));
      if (subtargetProblem(*sti, tt).empty()) usable.push_back(kv.Key);
    }
    if (!generic->isCPUStringValid(cpu)) {
      std::string near = closest(cpu, usable);
      return "unknown CPU `--cpu=" + cpu + "` for " + triple + (near.empty() ? "" : "; did you mean `" + near + "`?") +
             " (omit --cpu for this machine's; the CPUs LLVM knows: " + joined(usable) + ")";
    }
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target.createMCSubtargetInfo(triple, cpu, ""));
    if (std::string problem = subtargetProblem(*sti, tt); !problem.empty())
      return "`--cpu=" + cpu + "` cannot be used for " + triple + ": " + problem +
             " (omit --cpu for this machine's; the CPUs that can: " + joined(usable) + ")";
  }
  std::vector<std::string> known;
  for (const llvm::SubtargetFeatureKV& kv : generic->getAllProcessorFeatures()) known.push_back(kv.Key);
  std::stringstream ss(options.features);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::string name = !item.empty() && (item[0] == '+' || item[0] == '-') ? item.substr(1) : item;
    if (item.empty() || std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string near = closest(name, known);
    return "unknown CPU feature `" + name + "` in `--features=" + options.features + "`" +
           (near.empty() ? "" : "; did you mean `" + near + "`?") + " (features are +NAME or -NAME, comma-separated; " +
           "the features LLVM knows for " + triple + ": " + joined(known) + ")";
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target.createMCSubtargetInfo(triple, cpu, features));
  if (std::string problem = subtargetProblem(*sti, tt); !problem.empty())
    return "`--features=" + options.features + "` leaves a CPU LLVM cannot generate code for: " + problem;
  return "";
}

std::string checkCpuOptions(const CpuOptions& options) {
  std::string error;
  return createCpuTarget(options, &error) ? "" : error;
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
  // LLVM aborts the process on a subtarget it cannot generate code for.
  if (std::string problem = checkOptions(*target, t->triple, options, hostCpu, t->cpu, t->features);
      !problem.empty()) {
    *error = problem;
    return nullptr;
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
  if (optLevel >= 2)
    pb.registerOptimizerLastEPCallback([](llvm::ModulePassManager& mpm, llvm::OptimizationLevel) {
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(NarrowVectorCompares()));
    });
  llvm::OptimizationLevel level = optLevel >= 3   ? llvm::OptimizationLevel::O3
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                  : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm =
      optLevel == 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

}  // namespace tlc::cpu
