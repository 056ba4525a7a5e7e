#include "compiler/backends/cuda/ptxas_advice.h"

#include <map>
#include <regex>
#include <sstream>

namespace tlc::cuda {

std::vector<std::string> ptxasAdviceOptions() {
  // ptxas prints its performance notes (C7514 among them) with its spill
  // warnings; `-v` would add a line per kernel that nobody reads.
  return {"--ptxas-options=--warn-on-spills"};
}

std::vector<PtxasAdvice> parsePtxasAdvice(const std::string& log) {
  static const std::regex serialized(R"(\(C7514\).*in the function '([^']+)')");
  static const std::regex spills(
      R"(Registers are spilled to local memory in function '([^']+)', (\d+) bytes spill stores, (\d+) bytes spill loads)");
  std::vector<PtxasAdvice> out;
  auto seen = [&](PtxasAdvice::Kind kind, const std::string& fn) {
    for (const PtxasAdvice& a : out)
      if (a.kind == kind && a.function == fn) return true;
    return false;
  };
  std::istringstream lines(log);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, serialized)) {
      if (!seen(PtxasAdvice::Kind::WgmmaSerialized, m[1])) out.push_back({PtxasAdvice::Kind::WgmmaSerialized, m[1]});
    } else if (std::regex_search(line, m, spills)) {
      if (!seen(PtxasAdvice::Kind::Spills, m[1]))
        out.push_back({PtxasAdvice::Kind::Spills, m[1], std::stoll(m[2]), std::stoll(m[3])});
    }
  }
  return out;
}

void reportPtxasAdvice(const CudaModule& module, const std::string& log, bool spills, DiagnosticEngine& diags) {
  std::map<std::string, const KernelLaunch*> kernels;
  for (const FuncLaunch& f : module.funcs)
    for (const KernelLaunch& k : f.kernels) {
      kernels[k.name] = &k;
      if (!k.fallbackName.empty()) kernels[k.fallbackName] = &k;
    }
  for (const PtxasAdvice& a : parsePtxasAdvice(log)) {
    auto it = kernels.find(a.function);
    SourceLoc loc = it == kernels.end() ? SourceLoc{} : it->second->loc;
    std::string which = "`" + a.function + "`";
    if (it != kernels.end() && a.function == it->second->fallbackName)
      which += " (the version without TMA, for tensors whose strides TMA cannot describe)";
    if (a.kind == PtxasAdvice::Kind::WgmmaSerialized) {
      diags.report(DiagKind::CudaWgmmaSerialized, loc,
                   "ptxas serialized the wgmma instructions of " + which +
                       " (C7514): an accumulator's registers are touched while its wgmmas run, so each wgmma "
                       "waits for the one before; the tensor cores run at a fraction of their rate. This is a "
                       "code-generation problem of tlc's: please report the kernel");
    } else if (spills) {
      diags.report(DiagKind::CudaRegisterSpills, loc,
                   which + " spills registers to local memory (ptxas: " + std::to_string(a.spillStores) +
                       " bytes stored, " + std::to_string(a.spillLoads) +
                       " bytes loaded per thread): use smaller register tiles (fragments) or fewer of them per thread, "
                       "or more threads");
    }
  }
}

}  // namespace tlc::cuda
