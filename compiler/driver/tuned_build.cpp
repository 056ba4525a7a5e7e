#include "compiler/driver/tuned_build.h"

#include <iostream>

#include "compiler/driver/tune_db.h"
#include "compiler/driver/tuner.h"
#include "compiler/driver/tune_targets.h"

namespace tlc::driver {

std::optional<std::vector<std::string>> tunedDefines(const TunedBuildRequest& build, const ir::Module& module,
                                                     const std::vector<TuneSpace>& spaces,
                                                     const std::vector<std::string>& sources,
                                                     const TargetRequest& request,
                                                     std::vector<std::string>* records) {
  TuneDatabase db = TuneDatabase::locate(build.db);
  std::string device = build.device, why;
  if (device.empty()) {
    if (auto local = localTuneDevice(request, &why)) device = *local;
  }
  std::string bucket = build.dims.empty() ? "" : shapeBucket(build.dims);
  std::vector<std::string> out = build.defines;
  std::map<std::string, std::pair<std::string, std::string>> chosen;  // parameter -> (value, kernel)
  for (const ir::Func& f : module.funcs) {
    bool declared = false;
    for (const TuneSpace& s : spaces) declared = declared || (s.kernel == f->name && s.declared);
    TuneKey key = tuneKey(tuneKeyInputs(sources, f->name, request, build.defines));
    std::vector<TuneRecord> matching = db.usable() ? db.matching(key.matchKey) : std::vector<TuneRecord>{};
    std::vector<const TuneRecord*> fit;
    std::string others;
    for (const TuneRecord& r : matching) {
      if ((device.empty() || r.device == device) && (bucket.empty() || r.bucket == bucket)) fit.push_back(&r);
      else others += "\n  tuned on " + r.device + " at " + r.bucket;
    }
    if (device.empty() && fit.size() > 1) {
      for (const TuneRecord* r : fit)
        if (r->device != fit[0]->device) {
          std::cerr << "tlc: error: `" << f->name << "` was tuned on several devices and " << why
                    << ": pass --device NAME (`tlc tune --show` lists them)\n";
          return std::nullopt;
        }
    }
    if (fit.empty()) {
      if (!declared) continue;
      std::string run = "tlc tune " + build.file + " --target=" + request.target;
      for (const std::string& d : build.defines) run += " -D " + d;
      for (const auto& [name, size] : build.dims) run += " --dim " + name + "=" + std::to_string(size);
      std::cerr << "tlc: error: --tuned: no tuning results for `" << f->name << "` on " << request.target << " ("
                << (device.empty() ? why : device) << (bucket.empty() ? "" : ", " + bucket)
                << ") for this source, its imports, these -D and this tlc; tune it first: `" << run << "`"
                << (others.empty() ? "" : "\n  results exist for other devices or shapes:" + others) << "\n";
      return std::nullopt;
    }
    const TuneRecord& r = *fit.front();
    records->push_back(db.recordPath(r.key));
    std::string dims;
    for (const auto& [name, size] : r.dims) dims += " " + name + "=" + std::to_string(size);
    std::cerr << "tlc: note: `" << f->name << "`: tuned " << r.best.label() << " (" << r.bestMs << " ms on "
              << r.device << (dims.empty() ? "" : " at" + dims) << ", " << r.tunedAt << ")\n";
    for (const auto& [name, value] : r.best.values) {
      auto [it, inserted] = chosen.emplace(name, std::make_pair(value, f->name));
      if (!inserted && it->second.first != value) {
        std::cerr << "tlc: error: --tuned: `" << it->second.second << "` was tuned with " << name << "="
                  << it->second.first << " and `" << f->name << "` with " << name << "=" << value
                  << ", but -D binds one value for the whole file: put the kernels in separate files\n";
        return std::nullopt;
      }
      if (inserted) out.push_back(name + "=" + value);
    }
  }
  return out;
}

}  // namespace tlc::driver
