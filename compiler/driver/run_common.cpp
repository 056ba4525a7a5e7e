#include "compiler/driver/run_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "compiler/driver/progress.h"
#include "compiler/ir/functor.h"
#include "compiler/interp/float_convert.h"
#include "compiler/interp/npy_io.h"
#include "compiler/interp/shape_eval.h"
#include "compiler/ir/buffer_writes.h"

namespace tlc::driver {

using namespace tlc::ir;
using interp::ArgValue;
using interp::HostTensor;

namespace {

uint64_t mixSeed(uint64_t seed, uint64_t salt) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + (salt + 1) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
  return z ^ (z >> 29);
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) break;
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

}  // namespace

std::vector<ArgValue> RunArgs::values() {
  std::vector<ArgValue> v;
  for (size_t i = 0; i < tensors.size(); ++i) v.push_back(tensors[i] ? ArgValue::ofTensor(*tensors[i]) : scalars[i]);
  return v;
}

std::optional<std::pair<std::string, int64_t>> parseDimSetting(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  std::string name = text.substr(0, eq);
  const char* first = text.data() + eq + 1;
  const char* last = text.data() + text.size();
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last || first == last || value < 0 || value > INT32_MAX) return std::nullopt;
  return std::make_pair(name, value);
}

std::optional<std::pair<std::string, std::pair<double, double>>> parseFillSetting(const std::string& text) {
  auto eq = text.find('='), colon = text.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || eq == 0 || colon == std::string::npos) return std::nullopt;
  auto number = [](const std::string& s) -> std::optional<double> {
    if (s.empty()) return std::nullopt;
    size_t used = 0;
    double v;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (used != s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  };
  auto lo = number(text.substr(eq + 1, colon - eq - 1)), hi = number(text.substr(colon + 1));
  if (!lo || !hi || !(*lo < *hi)) return std::nullopt;
  return std::make_pair(text.substr(0, eq), std::make_pair(*lo, *hi));
}

bool applyFills(const PrimFunc& func, RunArgs& args, const std::map<std::string, std::pair<double, double>>& fills,
                uint64_t seed, DiagnosticEngine& diags) {
  bool ok = true;
  for (const auto& [name, range] : fills) {
    size_t i = 0;
    while (i < func.params.size() && !(func.params[i].buffer && func.params[i].name == name)) ++i;
    if (i == func.params.size()) {
      std::string tensors;
      for (const Param& p : func.params)
        if (p.buffer) tensors += (tensors.empty() ? "`" : ", `") + p.name + "`";
      diags.report(DiagKind::InterpArgumentMismatch, func.loc,
                   "--fill " + name + "=... names no tensor parameter of `" + func.name + "`" +
                       (tensors.empty() ? std::string(" (it has none)") : " (it has " + tensors + ")"));
      ok = false;
      continue;
    }
    interp::fillUniform(*args.tensors[i], range.first, range.second, mixSeed(seed, i + 1000));
  }
  return ok;
}

const PrimFunc* selectKernel(const Module& module, const std::string& name, DiagnosticEngine& diags) {
  if (module.funcs.empty()) {
    diags.report(DiagKind::RunUnknownKernel, {}, "the program defines no kernel to run");
    return nullptr;
  }
  if (name.empty()) return module.funcs.front().get();
  std::string available;
  for (const Func& f : module.funcs) {
    if (f->name == name) return f.get();
    available += (available.empty() ? "`" : ", `") + f->name + "`";
  }
  diags.report(DiagKind::RunUnknownKernel, module.funcs.front()->loc,
               "there is no kernel named `" + name + "`; the program defines " + available);
  return nullptr;
}

std::optional<RunArgs> makeArguments(const PrimFunc& func, const std::map<std::string, int64_t>& dims, uint64_t seed,
                                     DiagnosticEngine& diags) {
  RunArgs args;
  interp::VarValues values;
  bool ok = true;
  for (const Var& v : func.shapeVars) {
    auto it = dims.find(v->name);
    if (it == dims.end()) {
      diags.report(DiagKind::RunMissingDim, v->loc.known() ? v->loc : func.loc,
                   "dynamic dimension `" + v->name + "` of `" + func.name + "` needs a size: pass --dim " + v->name +
                       "=<size>, or bind it at compile time with -D " + v->name + "=<value>");
      ok = false;
      continue;
    }
    values[v.get()] = it->second;
    args.dims[v->name] = it->second;
  }
  for (const auto& [name, value] : dims) {
    bool known = std::any_of(func.shapeVars.begin(), func.shapeVars.end(), [&](const Var& v) { return v->name == name; });
    if (!known) {
      std::string dyn;
      for (const Var& v : func.shapeVars) dyn += (dyn.empty() ? "`" : ", `") + v->name + "`";
      diags.report(DiagKind::RunUnknownDim, func.loc,
                   "--dim " + name + "=" + std::to_string(value) + " names no dynamic dimension of `" + func.name +
                       "`" + (dyn.empty() ? std::string(" (it has none)") : " (it has " + dyn + ")"));
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  args.tensors.resize(func.params.size());
  args.scalars.resize(func.params.size());
  // Scalars first: a shape may use one.
  for (size_t i = 0; i < func.params.size(); ++i) {
    const Param& p = func.params[i];
    if (!p.scalar) continue;
    uint64_t r = mixSeed(seed, i);
    if (isFloat(p.scalar->dtype)) {
      args.scalars[i] = ArgValue::ofFloat(interp::roundToFloatDType(2.0 * interp::unitInterval(r) - 1.0, p.scalar->dtype));
    } else {
      int64_t v = static_cast<int64_t>(r % 8) + 1;
      args.scalars[i] = ArgValue::ofInt(p.scalar->dtype == DType::Bool ? (v & 1) : v);
      values[p.scalar.get()] = args.scalars[i].intValue;
    }
  }
  for (size_t i = 0; i < func.params.size(); ++i) {
    const Param& p = func.params[i];
    if (!p.buffer) continue;
    std::vector<int64_t> shape;
    for (size_t d = 0; d < p.buffer->shape.size(); ++d) {
      std::string why;
      auto n = interp::evalShapeExpr(p.buffer->shape[d], values, &why);
      if (!n || *n < 0) {
        diags.report(DiagKind::InterpArgumentMismatch, p.loc,
                     "cannot size dimension " + std::to_string(d) + " of `" + p.name + "`: " +
                         (n ? "it evaluates to " + std::to_string(*n) : why));
        ok = false;
        break;
      }
      shape.push_back(*n);
    }
    if (!ok) continue;
    std::string why;
    std::optional<HostTensor> t = HostTensor::tryCreate(p.buffer->dtype, shape, &why);
    if (!t) {
      diags.report(DiagKind::InterpArgumentMismatch, p.loc, "cannot make the argument for `" + p.name + "`: " + why);
      ok = false;
      continue;
    }
    args.tensors[i] = std::move(t);
    interp::fillRandom(*args.tensors[i], mixSeed(seed, i + 1000));
  }
  if (!ok) return std::nullopt;
  return args;
}

RunArgs cloneArguments(const RunArgs& args) { return args; }

bool runOracle(const PrimFunc& func, RunArgs& args, DiagnosticEngine& diags, std::FILE* printTo) {
  std::vector<ArgValue> values = args.values();
  return interp::interpret(func, values, diags, printTo);
}

Tolerance toleranceFor(DType dtype, int64_t reductionLength) {
  Tolerance t;
  switch (dtype) {
    case DType::Float64: t = {1e-9, 1e-9}; break;
    case DType::Float32: t = {1e-5, 1e-4}; break;
    case DType::Float16: t = {1e-2, 1e-2}; break;
    case DType::BFloat16: t = {2e-2, 2e-2}; break;
    case DType::Float8E4M3: t = {0.125, 0.125}; break;
    case DType::Float8E5M2: t = {0.25, 0.25}; break;
    default: return {0, 0};  // integers and bool compare exactly
  }
  // Summation order differences grow with the number of terms.
  double scale = std::max<double>(1.0, static_cast<double>(reductionLength) / 32.0);
  t.atol *= scale;
  return t;
}

std::vector<bool> writtenParams(const PrimFunc& func) {
  ir::BufferWrites writes = ir::collectBufferWrites(func.body);
  std::vector<bool> out;
  for (const Param& p : func.params) out.push_back(p.buffer && writes.buffers.count(p.buffer.get()));
  return out;
}

std::optional<DType> narrowingRound(const PrimFunc& func) {
  struct Finder : ir::IRVisitor {
    std::optional<DType> found;
    void note(DType t) {
      if (!found || t == DType::BFloat16) found = t;  // bfloat16 keeps fewer mantissa bits
    }
    static bool is16(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
    static bool wider(DType t) { return t == DType::Float32 || t == DType::Float64; }
    void visitCopy(const ir::CopyStmt* c) override {
      if (is16(c->dst.buffer->dtype) && wider(c->src.buffer->dtype)) note(c->dst.buffer->dtype);
      ir::IRVisitor::visitCopy(c);
    }
    void visitStore(const ir::StoreStmt* s) override {
      // A value computed into a 16-bit buffer (not a plain copy of a 16-bit element).
      auto* load = ir::as<ir::Load>(s->value);
      if (is16(s->buffer->dtype) && !(load && load->buffer->dtype == s->buffer->dtype)) note(s->buffer->dtype);
      ir::IRVisitor::visitStore(s);
    }
  } f;
  f.visit(func.body);
  return f.found;
}

int64_t reductionLengthHint(const PrimFunc& func, const RunArgs& args) {
  if (!ir::collectBufferWrites(func.body).accumulates) return 1;
  int64_t longest = 1;
  for (const auto& t : args.tensors)
    if (t)
      for (int64_t d : t->shape) longest = std::max(longest, d);
  return longest;
}

bool printSummary(std::ostream& os, const PrimFunc& func, const RunArgs& got, const RunArgs* oracle,
                  const std::string& target, uint64_t seed, bool tf32Gemm) {
  std::string dims;
  for (const auto& [name, value] : got.dims) dims += " " + name + "=" + std::to_string(value);
  os << fmt::format("kernel `{}` on {} (seed {}){}\n", func.name, target, seed, dims.empty() ? "" : ", dims" + dims);
  std::string scalars;
  for (size_t i = 0; i < func.params.size(); ++i) {
    const Param& p = func.params[i];
    if (!p.scalar) continue;
    const ArgValue& a = got.scalars[i];
    scalars += " " + p.name + "=" +
               (a.kind == ArgValue::Kind::Float ? fmt::format("{:.6g}", a.floatValue) : std::to_string(a.intValue));
  }
  if (!scalars.empty()) os << "scalars:" << scalars << "\n";
  std::vector<bool> written = writtenParams(func);
  int64_t reduction = oracle ? reductionLengthHint(func, got) : 1;
  std::optional<DType> narrowed = oracle ? narrowingRound(func) : std::nullopt;
  size_t nameWidth = 5, shapeWidth = 5;
  for (size_t i = 0; i < func.params.size(); ++i) {
    if (!got.tensors[i]) continue;
    nameWidth = std::max(nameWidth, func.params[i].name.size());
    shapeWidth = std::max(shapeWidth, shapeText(got.tensors[i]->shape).size());
  }
  std::string header = fmt::format("  {:<{}}  {:<4}  {:<{}}  {:<11}  {:>13}  {:>11}  {:>11}  {:>11}", "param", nameWidth,
                                   "role", "shape", shapeWidth, "dtype", "checksum", "mean", "min", "max");
  if (oracle) header += fmt::format("  {:>11}  {:>11}  {}", "max_abs_err", "max_rel_err", "result");
  os << header << "\n";
  bool allPass = true;
  std::vector<std::string> failures;
  for (size_t i = 0; i < func.params.size(); ++i) {
    if (!got.tensors[i]) continue;
    const HostTensor& t = *got.tensors[i];
    interp::TensorStats st = interp::tensorStats(t);
    std::string row = fmt::format("  {:<{}}  {:<4}  {:<{}}  {:<11}  {:>13.6e}  {:>11.4e}  {:>11.4e}  {:>11.4e}",
                                  func.params[i].name, nameWidth, written[i] ? "out" : "in", shapeText(t.shape),
                                  shapeWidth, std::string(dtypeName(t.dtype)), st.sum, st.mean, st.min, st.max);
    if (st.nanCount) row += fmt::format("  ({} NaN)", st.nanCount);
    if (oracle && oracle->tensors[i]) {
      const HostTensor& want = *oracle->tensors[i];
      DType tolType = tf32Gemm && t.dtype == DType::Float32 && reduction > 1 ? DType::Float16 : t.dtype;
      // Wider results computed through 16-bit values: a last-bit difference
      // upstream (a libm call against a vector polynomial) can flip a 16-bit
      // rounding, so they are compared at that type's tolerance.
      if (narrowed && (t.dtype == DType::Float32 || t.dtype == DType::Float64)) tolType = *narrowed;
      Tolerance tol = toleranceFor(tolType, reduction);
      interp::CompareResult r = interp::compare(t, want, tol.atol, tol.rtol);
      bool pass = r.ok();
      allPass = allPass && pass;
      row += fmt::format("  {:>11.3e}  {:>11.3e}  {}", r.maxAbsErr, r.maxRelErr, pass ? "PASS" : "FAIL");
      if (r.shapeMismatch) {
        failures.push_back(fmt::format("`{}`: shape {} but the interpreter's is {}", func.params[i].name,
                                       shapeText(t.shape), shapeText(want.shape)));
      } else if (!pass) {
        int64_t k = r.firstMismatchIndex;
        failures.push_back(fmt::format("`{}`: {} of {} elements differ beyond atol={:.1e} rtol={:.1e}; first at {}: "
                                       "got {:.8g}, interpreter {:.8g}",
                                       func.params[i].name, r.mismatches, t.numel(), tol.atol, tol.rtol,
                                       shapeText(unflatten(k, t.shape)), t.get(k), want.get(k)));
      }
    }
    os << row << "\n";
  }
  if (oracle) {
    if (allPass) {
      os << "check: PASS (every tensor agrees with the interpreter)\n";
    } else {
      os << "check: FAIL\n";
      for (const std::string& f : failures) os << "  " << f << "\n";
    }
  }
  return allPass;
}

int runTarget(const Module& module, const RunSettings& settings, DiagnosticEngine& diags, const std::string& targetName,
              const TargetRunner& runner) {
  std::ostream& os = settings.out ? *settings.out : std::cout;
  const PrimFunc* func = selectKernel(module, settings.kernel, diags);
  if (!func) return 1;
  std::optional<RunArgs> args = makeArguments(*func, settings.dims, settings.seed, diags);
  if (!args) return 1;
  if (!applyFills(*func, *args, settings.fills, settings.seed, diags)) return 1;
  if (!settings.loadDir.empty() && !loadTensors(*func, *args, settings.loadDir)) return 1;
  std::optional<RunArgs> oracle;
  if (settings.check) {
    oracle = cloneArguments(*args);
    Progress progress("--check: running the reference interpreter");
    if (!runOracle(*func, *oracle, diags)) return 1;
  }
  if (!runner(*func, *args, settings, diags)) return 1;
  bool pass = printSummary(os, *func, *args, oracle ? &*oracle : nullptr, targetName, settings.seed, settings.tf32Gemm);
  if (!settings.saveDir.empty()) {
    if (!saveTensors(*func, *args, settings.saveDir, "")) return 1;
    if (oracle && !saveTensors(*func, *oracle, settings.saveDir, ".interp")) return 1;
  }
  return pass ? 0 : 1;
}

bool loadTensors(const PrimFunc& func, RunArgs& args, const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    std::cerr << "tlc: error: --load " << dir << ": not a directory\n";
    return false;
  }
  for (size_t i = 0; i < func.params.size(); ++i) {
    std::string path = (std::filesystem::path(dir) / (func.params[i].name + ".npy")).string();
    if (!std::filesystem::exists(path, ec)) continue;
    std::string error;
    std::optional<HostTensor> t = interp::readNpy(path, &error);
    if (!t) {
      std::cerr << "tlc: error: --load: " << error << "\n";
      return false;
    }
    if (const Var& s = func.params[i].scalar) {
      // A scalar parameter: an array of one element of the same kind.
      if (t->numel() != 1 || isFloat(t->dtype) != isFloat(s->dtype)) {
        std::cerr << "tlc: error: --load: " << path << " must hold one " << (isFloat(s->dtype) ? "float" : "integer")
                  << " value for the scalar `" << func.params[i].name << "` (" << dtypeName(s->dtype) << ")\n";
        return false;
      }
      args.scalars[i] = isFloat(s->dtype) ? ArgValue::ofFloat(interp::roundToFloatDType(t->get(0), s->dtype))
                                          : ArgValue::ofInt(t->getInt(0));
      continue;
    }
    if (!args.tensors[i]) continue;
    HostTensor& want = *args.tensors[i];
    auto shapeText = [](const std::vector<int64_t>& s) {
      std::string r = "(";
      for (size_t d = 0; d < s.size(); ++d) r += (d ? ", " : "") + std::to_string(s[d]);
      return r + (s.size() == 1 ? ",)" : ")");
    };
    if (t->shape != want.shape) {
      std::cerr << "tlc: error: --load: " << path << " has shape " << shapeText(t->shape) << " but `"
                << func.params[i].name << "` is " << shapeText(want.shape)
                << " with these --dim sizes: give an array of that shape\n";
      return false;
    }
    bool sameKind = (isFloat(t->dtype) && isFloat(want.dtype)) || (!isFloat(t->dtype) && !isFloat(want.dtype));
    if (!sameKind) {
      std::cerr << "tlc: error: --load: " << path << " holds " << dtypeName(t->dtype) << " values but `"
                << func.params[i].name << "` is " << dtypeName(want.dtype) << ": convert the array first\n";
      return false;
    }
    // Same kind of values: converted to the parameter's dtype (bfloat16 and
    // float8 arrays come as float32, which NumPy can hold).
    for (int64_t k = 0; k < want.numel(); ++k) {
      if (isFloat(want.dtype)) want.set(k, t->get(k));
      else want.setInt(k, t->getInt(k));
    }
  }
  return true;
}

bool saveTensors(const PrimFunc& func, const RunArgs& args, const std::string& dir, const std::string& suffix) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (size_t i = 0; i < func.params.size(); ++i) {
    if (!args.tensors[i]) continue;
    std::string path = (std::filesystem::path(dir) / (func.params[i].name + suffix + ".npy")).string();
    std::string error;
    if (!interp::writeNpy(*args.tensors[i], path, &error)) {
      std::cerr << "tlc: error: " << error << "\n";
      return false;
    }
  }
  return true;
}

int runWithInterpreter(const Module& module, const RunSettings& settings, DiagnosticEngine& diags) {
  return runTarget(module, settings, diags, "interp",
                   [](const PrimFunc& f, RunArgs& args, const RunSettings&, DiagnosticEngine& d) {
                     return runOracle(f, args, d, stdout);
                   });
}

}  // namespace tlc::driver
