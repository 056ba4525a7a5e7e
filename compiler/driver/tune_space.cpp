#include "compiler/driver/tune_space.h"

#include <algorithm>
#include <charconv>

#include "compiler/support/suggest.h"

namespace tlc::driver {

std::string Candidate::label() const {
  std::string out;
  for (const auto& [name, value] : values) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

std::vector<std::string> Candidate::defines() const {
  std::vector<std::string> out;
  for (const auto& [name, value] : values) out.push_back(name + "=" + value);
  return out;
}

std::optional<TuneParam> parseSpaceOverride(const std::string& text, std::string* error) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    *error = "malformed `--space " + text + "`: write `--space NAME=V1,V2,...`, e.g. `--space block_M=64,128`";
    return std::nullopt;
  }
  TuneParam p;
  p.name = text.substr(0, eq);
  size_t start = eq + 1;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string v = text.substr(start, comma - start);
    if (v.empty()) {
      *error = "`--space " + text + "` has an empty value: separate the values with single commas";
      return std::nullopt;
    }
    if (std::find(p.values.begin(), p.values.end(), v) != p.values.end()) {
      *error = "`--space " + text + "` lists " + v + " twice";
      return std::nullopt;
    }
    p.values.push_back(v);
    start = comma + 1;
  }
  return p;
}

namespace {

bool isInteger(const std::string& s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool isBoolText(const std::string& s) { return s == "True" || s == "False"; }

}  // namespace

std::optional<std::vector<TuneParam>> effectiveSpace(const TuneSpace& declared, const std::vector<TuneParam>& overrides,
                                                     const std::vector<std::string>& userDefines, std::string* error) {
  std::vector<std::string> tunableNames;
  for (const auto& [name, value] : declared.tunable) tunableNames.push_back(name);
  auto currentValue = [&](const std::string& name) -> const std::string* {
    for (const auto& [n, v] : declared.tunable)
      if (n == name) return &v;
    return nullptr;
  };
  std::vector<TuneParam> out = declared.params;
  for (const TuneParam& o : overrides) {
    const std::string* current = currentValue(o.name);
    if (!current) {
      *error = "`--space " + o.name + "=...`: `" + declared.kernel + "` has no integer or bool compile-time parameter `" +
               o.name + "`" + didYouMean(o.name, tunableNames);
      return std::nullopt;
    }
    bool boolean = isBoolText(*current);
    for (const std::string& v : o.values)
      if (boolean ? !isBoolText(v) : !isInteger(v)) {
        *error = "`--space " + o.name + "=...`: `" + v + "` is not " + (boolean ? "True or False" : "an integer") +
                 ", as `" + o.name + "` (" + *current + ") is";
        return std::nullopt;
      }
    auto same = std::find_if(out.begin(), out.end(), [&](const TuneParam& p) { return p.name == o.name; });
    if (same != out.end()) same->values = o.values;
    else out.push_back(o);
  }
  for (const TuneParam& p : out)
    for (const std::string& d : userDefines)
      if (d.rfind(p.name + "=", 0) == 0) {
        *error = "`" + p.name + "` is both tuned and bound by `-D " + d + "`: drop the -D, or pass `--space " + d +
                 "` to tune with that value only";
        return std::nullopt;
      }
  if (out.empty()) {
    *error = "`" + declared.kernel + "` has no tuning space: declare one with `@T.tune(name=[values...])` on the " +
             "kernel, or pass `--space NAME=V1,V2,...`";
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<Candidate>> enumerateCandidates(const std::vector<TuneParam>& params, size_t limit,
                                                          std::string* error) {
  size_t total = 1;
  for (const TuneParam& p : params) {
    if (p.values.empty() || total > limit / p.values.size()) {
      if (p.values.empty()) *error = "`" + p.name + "` has no candidate values";
      else *error = "the space has more than " + std::to_string(limit) +
                    " candidates: narrow it with `--space NAME=...` or `where=` conditions on fewer values";
      return std::nullopt;
    }
    total *= p.values.size();
  }
  std::vector<Candidate> out;
  out.reserve(total);
  std::vector<size_t> index(params.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    Candidate c;
    for (size_t i = 0; i < params.size(); ++i) c.values.emplace_back(params[i].name, params[i].values[index[i]]);
    out.push_back(std::move(c));
    for (size_t i = params.size(); i-- > 0;) {  // the last parameter varies fastest
      if (++index[i] < params[i].values.size()) break;
      index[i] = 0;
    }
  }
  return out;
}

std::string shapeBucket(const std::map<std::string, int64_t>& dims) {
  if (dims.empty()) return "static";
  std::string out;
  for (const auto& [name, size] : dims) {
    int64_t bound = 1;
    while (bound < size) bound *= 2;
    out += (out.empty() ? "" : ",") + name + "<=" + std::to_string(bound);
  }
  return out;
}

int64_t checkSize(int64_t size) { return size <= 256 ? size : 256 + size % 256; }

}  // namespace tlc::driver
