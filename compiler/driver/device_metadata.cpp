#include "compiler/driver/device_metadata.h"


#include "compiler/backends/metadata.h"
#include "compiler/support/file_io.h"

namespace tlc::driver {

std::string cudaModuleMetadata(const ir::Module& module, const cuda::CudaModule& generated, const std::string& target,
                               const SourceManager* sources, const std::string& binary,
                               const std::string& fallbackImage) {
  meta::MetadataOptions o;
  o.target = target;
  o.binary = binary;
  o.fallbackImage = fallbackImage;
  o.sources = sources;
  o.launchPlanFor = [&](const std::string& funcName) -> std::optional<meta::DeviceLaunchPlan> {
    for (const cuda::FuncLaunch& f : generated.funcs) {
      if (f.funcName != funcName) continue;
      meta::DeviceLaunchPlan plan;
      for (const cuda::KernelArg& a : f.args) {
        meta::DeviceArg d;
        d.dtype = a.dtype;
        switch (a.kind) {
          case cuda::KernelArg::Kind::Tensor:
          case cuda::KernelArg::Kind::Scalar:
            d.kind = meta::DeviceArg::Kind::Param;
            d.paramIndex = a.paramIndex;
            break;
          case cuda::KernelArg::Kind::ShapeVar:
            d.kind = meta::DeviceArg::Kind::Symbol;
            d.name = a.var->name;
            break;
          case cuda::KernelArg::Kind::HostLet:
            d.kind = meta::DeviceArg::Kind::Let;
            d.name = a.var->name;
            break;
        }
        plan.args.push_back(d);
      }
      plan.hostLets = f.hostLets;
      for (const cuda::KernelLaunch& k : f.kernels) {
        meta::DeviceLaunch l{k.name,         k.grid,           k.threads,          k.sharedBytes,         k.tensorMaps,
                             k.fallbackName, k.fallbackThreads, k.fallbackSharedBytes, k.persistentBlocksPerSM};
        plan.launches.push_back(l);
      }
      return plan;
    }
    return std::nullopt;
  };
  return meta::moduleMetadataJson(module, o, 1);
}

bool writeMetadataBeside(const std::string& binaryPath, const std::string& json, std::string* error) {
  return replaceNamedFile(binaryPath + ".json", json + "\n", error);
}

}  // namespace tlc::driver
