// Reads kernel metadata (format of compiler/backends/metadata.h) into the
// runtime's KernelInfo, and evaluates its RPN expressions.
#include <nlohmann/json.hpp>
#include <sstream>

#include "runtime_internal.h"
#include "compiler/support/base64.h"

namespace tlc::rt {

using nlohmann::json;

namespace {
const char* const kDtypeNames[] = {"bool",    "int8",    "int16",    "int32",   "int64",
                                   "uint8",   "uint16",  "uint32",   "uint64",  "float16",
                                   "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2"};
const int kDtypeCount = (int)(sizeof(kDtypeNames) / sizeof(kDtypeNames[0]));
}  // namespace

const char* dtypeNameOf(tlc_dtype t) { return (int)t >= 0 && (int)t < kDtypeCount ? kDtypeNames[(int)t] : "?"; }

bool parseDtype(const std::string& name, tlc_dtype* out) {
  for (int i = 0; i < kDtypeCount; ++i)
    if (name == kDtypeNames[i]) {
      *out = (tlc_dtype)i;
      return true;
    }
  return false;
}

Rpn parseRpn(const std::string& s) {
  Rpn r;
  std::istringstream in(s);
  std::string tok;
  while (in >> tok) r.tokens.push_back(tok);
  r.text = s;
  return r;
}

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

bool isNumber(const std::string& t) {
  size_t i = (t[0] == '-' && t.size() > 1) ? 1 : 0;
  for (; i < t.size(); ++i)
    if (t[i] < '0' || t[i] > '9') return false;
  return true;
}

}  // namespace

std::optional<int64_t> evalRpn(const Rpn& e, const std::map<std::string, int64_t>& env, std::string* error) {
  std::vector<int64_t> st;
  auto pop = [&](int64_t* v) {
    if (st.empty()) return false;
    *v = st.back();
    st.pop_back();
    return true;
  };
  for (const std::string& t : e.tokens) {
    if (isNumber(t)) {
      st.push_back(std::stoll(t));
      continue;
    }
    int64_t a, b, c;
    if (t == "neg" || t == "not") {
      if (!pop(&a)) goto malformed;
      st.push_back(t == "neg" ? -a : !a);
      continue;
    }
    if (t == "select") {
      if (!pop(&c) || !pop(&b) || !pop(&a)) goto malformed;
      st.push_back(a ? b : c);
      continue;
    }
    static const char* binops[] = {"+", "-", "*", "//", "%", "min", "max", "==", "!=", "<", "<=", ">", ">=", "and", "or"};
    bool isBin = false;
    for (const char* op : binops) isBin |= (t == op);
    if (isBin) {
      if (!pop(&b) || !pop(&a)) goto malformed;
      int64_t r = 0;
      if (t == "+") r = a + b;
      else if (t == "-") r = a - b;
      else if (t == "*") r = a * b;
      else if (t == "//" || t == "%") {
        if (b == 0) {
          *error = "division by zero in `" + e.text + "`";
          return std::nullopt;
        }
        r = t == "//" ? floorDiv(a, b) : a - floorDiv(a, b) * b;
      } else if (t == "min") r = a < b ? a : b;
      else if (t == "max") r = a > b ? a : b;
      else if (t == "==") r = a == b;
      else if (t == "!=") r = a != b;
      else if (t == "<") r = a < b;
      else if (t == "<=") r = a <= b;
      else if (t == ">") r = a > b;
      else if (t == ">=") r = a >= b;
      else if (t == "and") r = a && b;
      else r = a || b;
      st.push_back(r);
      continue;
    }
    auto it = env.find(t);
    if (it == env.end()) {
      *error = "`" + t + "` is not bound when evaluating `" + e.text + "`";
      return std::nullopt;
    }
    st.push_back(it->second);
  }
  if (st.size() == 1) return st[0];
malformed:
  *error = "malformed expression `" + e.text + "` in the kernel metadata";
  return std::nullopt;
}

namespace {

tlc_dtype dtypeOf(const json& j, const std::string& what) {
  tlc_dtype d;
  std::string name = j.get<std::string>();
  if (!parseDtype(name, &d)) throw std::runtime_error("unknown dtype `" + name + "` for " + what);
  return d;
}

Rpn rpnOf(const json& j) {
  if (j.is_string()) return parseRpn(j.get<std::string>());
  if (j.is_number_integer()) return parseRpn(std::to_string(j.get<int64_t>()));
  return Rpn{};
}

// A tensor map's "im2col" object: the convolution's "kernel", "stride",
// "pad" and "dilation", each [h, w]; marks the map an im2col map.
void readIm2col(const json& j, TensorMapInfo* tm) {
  struct Field {
    const char* name;
    int* value;
    int least;
  };
  cuda::Im2colGeometry& g = tm->geometry;
  const Field fields[] = {
      {"kernel", g.kernel, 1}, {"stride", g.stride, 1}, {"pad", g.pad, 0}, {"dilation", g.dilation, 1}};
  for (const Field& f : fields) {
    const json& v = j.at(f.name);
    if (!v.is_array() || v.size() != 2)
      throw std::runtime_error(std::string("an im2col tensor map's \"") + f.name + "\" is not a pair [h, w]");
    for (int a = 0; a < 2; ++a) {
      if (!v[a].is_number_integer() || v[a].get<int64_t>() < f.least || v[a].get<int64_t>() > (1 << 20))
        throw std::runtime_error(std::string("an im2col tensor map's \"") + f.name + "\" has " + v[a].dump() +
                                 " where an integer in " + std::to_string(f.least) + "..1048576 is expected");
      f.value[a] = (int)v[a].get<int64_t>();
    }
  }
  tm->im2col = true;
}

}  // namespace

bool parseMetadata(const std::string& text, std::string* target, std::vector<KernelInfo>* kernels, std::string* error,
                   std::string* fallbackImage) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "its kernel metadata is not valid JSON";
    return false;
  }
  if (j.value("format", "") != "tlc-module-metadata") {
    *error = "its metadata is not tlc kernel metadata";
    return false;
  }
  if (j.value("format_version", 0) != 1) {
    *error = "its metadata has format version " + std::to_string(j.value("format_version", 0)) +
             "; this runtime reads version 1 (rebuild the module with a matching tlc)";
    return false;
  }
  try {
    *target = j.at("target").get<std::string>();
    if (fallbackImage) fallbackImage->clear();
    if (j.contains("fallback_image")) {
      auto image = base64Decode(j.at("fallback_image").get<std::string>());
      if (!image) {
        *error = "its metadata's fallback_image is not base64";
        return false;
      }
      if (fallbackImage) *fallbackImage = std::move(*image);
    }
    for (const json& k : j.at("kernels")) {
      KernelInfo ki;
      ki.name = k.at("name").get<std::string>();
      ki.symbol = k.value("symbol", "");
      for (const json& p : k.at("params")) {
        ParamInfo pi;
        pi.name = p.at("name").get<std::string>();
        pi.isTensor = p.at("kind").get<std::string>() == "tensor";
        pi.dtype = dtypeOf(p.at("dtype"), "parameter " + pi.name);
        if (pi.isTensor) {
          const json& shape = p.at("shape");
          for (size_t i = 0; i < shape.size(); ++i) {
            Dim d;
            if (shape[i].is_number_integer()) {
              d.value = shape[i].get<int64_t>();
            } else if (shape[i].is_string()) {
              d.kind = Dim::Kind::Symbol;
              d.symbol = shape[i].get<std::string>();
            } else {
              d.kind = Dim::Kind::Expr;
              d.expr = rpnOf(shape[i].at("expr"));
              d.expr.text = shape[i].value("text", d.expr.text);
            }
            if (p.contains("shape_names") && i < p["shape_names"].size() && p["shape_names"][i].is_string())
              d.boundName = p["shape_names"][i].get<std::string>();
            pi.shape.push_back(d);
          }
          if (pi.shape.size() > TLC_MAX_RANK) throw std::runtime_error("parameter " + pi.name + " has too many dimensions");
        }
        ki.params.push_back(pi);
      }
      for (const json& s : k.at("shape_symbols")) {
        ki.shapeSymbols.push_back(s.at("name").get<std::string>());
        ki.shapeSymbolDtypes.push_back(s.contains("dtype") ? dtypeOf(s["dtype"], "a shape symbol") : TLC_INT64);
      }
      if (k.contains("device_args")) {
        for (const json& a : k["device_args"]) {
          DeviceArgInfo da;
          std::string kind = a.at("kind").get<std::string>();
          da.kind = kind == "param" ? DeviceArgInfo::Kind::Param
                    : kind == "symbol" ? DeviceArgInfo::Kind::Symbol
                                       : DeviceArgInfo::Kind::Let;
          da.index = a.value("index", -1);
          da.name = a.value("name", "");
          da.dtype = dtypeOf(a.at("dtype"), "a device argument");
          if (da.kind == DeviceArgInfo::Kind::Param && (da.index < 0 || da.index >= (int)ki.params.size()))
            throw std::runtime_error("device argument refers to parameter " + std::to_string(da.index));
          ki.deviceArgs.push_back(da);
        }
        for (const json& l : k.at("host_lets")) ki.hostLets.emplace_back(l.at("name").get<std::string>(), rpnOf(l.at("expr")));
        for (const json& l : k.at("launches")) {
          LaunchInfo li;
          li.entry = l.at("entry").get<std::string>();
          for (int i = 0; i < 3; ++i) li.grid[i] = rpnOf(l.at("grid").at(i));
          for (int i = 0; i < 3; ++i) li.block[i] = l.at("block").at(i).get<int64_t>();
          li.sharedBytes = l.value("shared_bytes", int64_t{0});
          li.persistentBlocksPerSM = l.value("persistent_blocks_per_sm", int64_t{0});
          if (li.persistentBlocksPerSM < 0) throw std::runtime_error("persistent_blocks_per_sm is negative");
          if (l.contains("tensor_maps"))
            for (const json& t : l.at("tensor_maps")) {
              TensorMapInfo tm;
              tm.paramIndex = t.at("param").get<int>();
              tm.box = t.at("box").get<std::vector<int64_t>>();
              tm.swizzle = t.at("swizzle").get<int>();
              tm.stage = t.value("stage", false);
              tm.store = t.value("store", false);
              if (t.contains("im2col")) readIm2col(t.at("im2col"), &tm);
              // An im2col map's box is {pixels, channels} over a rank-4
              // (N, H, W, C) tensor; a tiled map's box has the tensor's rank.
              const size_t rank = tm.im2col ? 4 : tm.box.size();
              if (tm.paramIndex < 0 || tm.paramIndex >= (int)ki.params.size() || !ki.params[tm.paramIndex].isTensor ||
                  rank != ki.params[tm.paramIndex].shape.size())
                throw std::runtime_error("a tensor map refers to parameter " + std::to_string(tm.paramIndex) +
                                         ", which is not a tensor of rank " + std::to_string(rank));
              if (tm.im2col && tm.box.size() != 2)
                throw std::runtime_error("an im2col tensor map's box has " + std::to_string(tm.box.size()) +
                                         " values, not 2 (pixels, channels)");
              li.tensorMaps.push_back(tm);
            }
          if (l.contains("fallback") && !l.at("fallback").is_null()) {
            const json& fb = l.at("fallback");
            li.fallbackEntry = fb.at("entry").get<std::string>();
            li.fallbackBlock = fb.at("block").at(0).get<int64_t>();
            li.fallbackSharedBytes = fb.value("shared_bytes", int64_t{0});
          }
          ki.launches.push_back(li);
        }
      }
      kernels->push_back(std::move(ki));
    }
  } catch (const std::exception& e) {
    *error = std::string("its kernel metadata is malformed: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace tlc::rt
