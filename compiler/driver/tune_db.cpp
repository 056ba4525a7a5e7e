#include "compiler/driver/tune_db.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "compiler/backends/metadata.h"
#include "compiler/support/file_io.h"

namespace tlc::driver {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "tlc-tune-results";
constexpr int kFormatVersion = 1;

json configJson(const Candidate& c) {
  json j = json::array();
  for (const auto& [name, value] : c.values) j.push_back(json::array({name, value}));
  return j;
}

Candidate configFrom(const json& j) {
  Candidate c;
  for (const json& pair : j) c.values.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  return c;
}

}  // namespace

TuneKey tuneKey(const TuneKeyInputs& in) {
  CacheKeyParts parts;
  parts.sources = in.sources;
  parts.defines = in.defines;
  parts.target = in.target;
  parts.options = "tune|kernel=" + in.kernel + "|" + in.options;
  parts.version = in.version;
  TuneKey k;
  k.matchKey = cacheKey(parts);
  k.key = sha256Hex("tune-record|" + k.matchKey + "|device=" + std::to_string(in.device.size()) + ":" + in.device +
                    "|bucket=" + in.bucket);
  return k;
}

std::string TuneRecord::toJson() const {
  json j;
  j["format"] = kFormat;
  j["format_version"] = kFormatVersion;
  j["key"] = key;
  j["match_key"] = matchKey;
  j["file"] = file;
  j["kernel"] = kernel;
  j["target"] = target;
  j["device"] = device;
  j["bucket"] = bucket;
  j["options"] = options;
  j["tlc_version"] = tlcVersion;
  j["dims"] = dims;
  j["defines"] = defines;
  j["tuned_at"] = tunedAt;
  j["best"] = configJson(best);
  j["best_ms"] = bestMs;
  json rs = json::array();
  for (const TuneResult& r : results) {
    json x;
    x["config"] = configJson(r.config);
    x["status"] = r.status;
    x["ms"] = r.ms;
    x["note"] = r.note;
    rs.push_back(x);
  }
  j["results"] = rs;
  return j.dump(1);
}

std::optional<TuneRecord> TuneRecord::fromJson(const std::string& text, std::string* why) {
  try {
    json j = json::parse(text);
    if (j.at("format") != kFormat || j.at("format_version") != kFormatVersion) {
      *why = "not a tuning record of format version " + std::to_string(kFormatVersion);
      return std::nullopt;
    }
    TuneRecord r;
    r.key = j.at("key");
    r.matchKey = j.at("match_key");
    r.file = j.at("file");
    r.kernel = j.at("kernel");
    r.target = j.at("target");
    r.device = j.at("device");
    r.bucket = j.at("bucket");
    r.options = j.at("options");
    r.tlcVersion = j.at("tlc_version");
    r.dims = j.at("dims").get<std::map<std::string, int64_t>>();
    r.defines = j.at("defines").get<std::vector<std::string>>();
    r.tunedAt = j.at("tuned_at");
    r.best = configFrom(j.at("best"));
    r.bestMs = j.at("best_ms");
    for (const json& x : j.at("results"))
      r.results.push_back(TuneResult{configFrom(x.at("config")), x.at("status"), x.at("ms"), x.at("note")});
    if (r.best.values.empty()) {
      *why = "the record has no best configuration";
      return std::nullopt;
    }
    return r;
  } catch (const json::exception& e) {
    *why = std::string("malformed record: ") + e.what();
    return std::nullopt;
  }
}

TuneDatabase::TuneDatabase(std::string dir) : cache_(std::move(dir)) {}

TuneDatabase TuneDatabase::locate(const std::string& dbOption) {
  if (!dbOption.empty()) return TuneDatabase(dbOption);
  if (const char* d = std::getenv("TLC_TUNE_DIR"); d && *d) return TuneDatabase(d);
  // The kernel cache's directory, even when TLC_CACHE=0 turns caching off.
  std::string dir = KernelCache::fromEnvironment().dir();
  return TuneDatabase(dir.empty() ? "" : dir + "/tune");
}

std::optional<TuneRecord> TuneDatabase::lookup(const std::string& key) const {
  std::optional<TuneRecord> parsed;
  // A record that does not parse, or is filed under another key, is corrupt:
  // the cache removes it and the next tune stores it again.
  auto path = cache_.lookup(key, [&](const std::string& bytes, std::string* why) {
    parsed = TuneRecord::fromJson(bytes, why);
    if (parsed && parsed->key != key) {
      *why = "the record is filed under another key";
      parsed.reset();
    }
    return parsed.has_value();
  });
  if (!path) return std::nullopt;
  return parsed;
}

bool TuneDatabase::store(const TuneRecord& record, std::string* error) const {
  if (!cache_.enabled()) {
    *error = "no directory for the tuning results: set TLC_TUNE_DIR or pass --db DIR";
    return false;
  }
  return cache_.store(record.key, record.toJson(), error).has_value();
}

std::vector<TuneRecord> TuneDatabase::all() const {
  std::vector<TuneRecord> out;
  for (const std::string& key : cache_.keys())
    if (auto r = lookup(key)) out.push_back(std::move(*r));
  std::stable_sort(out.begin(), out.end(), [](const TuneRecord& a, const TuneRecord& b) { return a.tunedAt > b.tunedAt; });
  return out;
}

std::vector<TuneRecord> TuneDatabase::matching(const std::string& matchKey) const {
  std::vector<TuneRecord> out;
  for (TuneRecord& r : all())
    if (r.matchKey == matchKey) out.push_back(std::move(r));
  return out;
}

std::string formatRecords(const std::vector<TuneRecord>& records, bool verbose) {
  std::string out;
  for (const TuneRecord& r : records) {
    std::string dims;
    for (const auto& [name, size] : r.dims) dims += (dims.empty() ? "" : " ") + name + "=" + std::to_string(size);
    size_t measured = 0, pruned = 0, failed = 0, rejected = 0;
    for (const TuneResult& x : r.results) {
      measured += x.status == "ok";
      pruned += x.status == "pruned";
      failed += x.status == "failed";
      rejected += x.status == "rejected";
    }
    out += fmt::format("{} `{}` on {} ({}), {} [{}]\n", r.file, r.kernel, r.target, r.device,
                       dims.empty() ? std::string("static shapes") : dims, r.bucket);
    if (!r.defines.empty()) {
      std::string d;
      for (const std::string& x : r.defines) d += " -D " + x;
      out += "  defines:" + d + "\n";
    }
    out += fmt::format("  best: {}  {:.4f} ms\n", r.best.label(), r.bestMs);
    out += fmt::format("  {} candidates: {} measured, {} pruned, {} failed, {} rejected; tuned {} by tlc {}\n",
                       r.results.size(), measured, pruned, failed, rejected, r.tunedAt, r.tlcVersion);
    if (verbose) {
      std::vector<const TuneResult*> sorted;
      for (const TuneResult& x : r.results) sorted.push_back(&x);
      std::stable_sort(sorted.begin(), sorted.end(), [](const TuneResult* a, const TuneResult* b) {
        bool am = a->ms >= 0, bm = b->ms >= 0;
        return am != bm ? am : a->ms < b->ms;
      });
      for (const TuneResult* x : sorted)
        out += fmt::format("    {:<9} {:>10}  {}{}\n", x->status, x->ms >= 0 ? fmt::format("{:.4f} ms", x->ms) : "",
                           x->config.label(), x->note.empty() ? "" : "  (" + x->note + ")");
    }
    out += "  key " + r.key + "\n";
  }
  return out;
}

}  // namespace tlc::driver
