// Kernel metadata writer and reader; see metadata.h for the format.
#include "compiler/backends/metadata.h"

#include <cctype>
#include <set>
#include <nlohmann/json.hpp>

#include "compiler/ir/buffer_access.h"
#include "compiler/support/base64.h"

#ifndef TLC_VERSION_STRING
#define TLC_VERSION_STRING "0.0.0"
#endif

namespace tlc::meta {
namespace {

using nlohmann::json;

const char* rpnOp(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::Add: return "+";
    case ir::BinaryOp::Sub: return "-";
    case ir::BinaryOp::Mul: return "*";
    case ir::BinaryOp::FloorDiv: return "//";
    case ir::BinaryOp::FloorMod: return "%";
    case ir::BinaryOp::Min: return "min";
    case ir::BinaryOp::Max: return "max";
    case ir::BinaryOp::Eq: return "==";
    case ir::BinaryOp::Ne: return "!=";
    case ir::BinaryOp::Lt: return "<";
    case ir::BinaryOp::Le: return "<=";
    case ir::BinaryOp::Gt: return ">";
    case ir::BinaryOp::Ge: return ">=";
    case ir::BinaryOp::And: return "and";
    case ir::BinaryOp::Or: return "or";
    default: return nullptr;  // true division and bit operations: not index arithmetic
  }
}

bool toRpn(const ir::Expr& e, std::string& out) {
  auto emit = [&](const std::string& tok) {
    if (!out.empty()) out += ' ';
    out += tok;
  };
  if (!e) return false;
  if (auto* i = ir::as<ir::IntImm>(e)) {
    emit(std::to_string(i->value));
    return true;
  }
  if (auto* v = ir::as<ir::VarRef>(e)) {
    if (!isInteger(v->dtype) && !isBool(v->dtype)) return false;
    emit(v->var->name);
    return true;
  }
  if (auto* c = ir::as<ir::Cast>(e)) {
    if (!isInteger(c->dtype) && !isBool(c->dtype)) return false;
    return toRpn(c->value, out);
  }
  if (auto* b = ir::as<ir::Binary>(e)) {
    const char* op = rpnOp(b->op);
    if (!op || !toRpn(b->a, out) || !toRpn(b->b, out)) return false;
    emit(op);
    return true;
  }
  if (auto* u = ir::as<ir::Unary>(e)) {
    if (u->op == ir::UnaryOp::BitNot || !toRpn(u->a, out)) return false;
    emit(u->op == ir::UnaryOp::Neg ? "neg" : "not");
    return true;
  }
  if (auto* s = ir::as<ir::Select>(e)) {
    if (!toRpn(s->cond, out) || !toRpn(s->t, out) || !toRpn(s->f, out)) return false;
    emit("select");
    return true;
  }
  return false;
}

std::string text(const ir::Expr& e) {
  if (!e) return "?";
  if (auto* i = ir::as<ir::IntImm>(e)) return std::to_string(i->value);
  if (auto* v = ir::as<ir::VarRef>(e)) return v->var->name;
  if (auto* c = ir::as<ir::Cast>(e)) return text(c->value);
  if (auto* b = ir::as<ir::Binary>(e)) {
    std::string op = ir::binaryOpSpelling(b->op);
    if (b->op == ir::BinaryOp::Min || b->op == ir::BinaryOp::Max) return op + "(" + text(b->a) + ", " + text(b->b) + ")";
    auto wrap = [](const ir::Expr& x) {
      std::string t = text(x);
      return ir::as<ir::Binary>(x) && ir::as<ir::Binary>(x)->op != ir::BinaryOp::Min &&
                     ir::as<ir::Binary>(x)->op != ir::BinaryOp::Max
                 ? "(" + t + ")"
                 : t;
    };
    return wrap(b->a) + " " + op + " " + wrap(b->b);
  }
  if (auto* u = ir::as<ir::Unary>(e)) return std::string(ir::unaryOpSpelling(u->op)) + text(u->a);
  if (auto* s = ir::as<ir::Select>(e)) return "select(" + text(s->cond) + ", " + text(s->t) + ", " + text(s->f) + ")";
  return "<" + std::string(ir::exprKindName(e->kind)) + ">";
}

// The first Kernel statement of a body (functions launch one grid; device
// backends describe further launches in their launch plan).
const ir::KernelStmt* findKernel(const ir::Stmt& s) {
  if (!s) return nullptr;
  if (auto* k = ir::as<ir::KernelStmt>(s)) return k;
  if (auto* q = ir::as<ir::SeqStmt>(s)) {
    for (const auto& x : q->stmts)
      if (auto* k = findKernel(x)) return k;
    return nullptr;
  }
  if (auto* l = ir::as<ir::LetStmt>(s)) return findKernel(l->body);
  if (auto* f = ir::as<ir::ForStmt>(s)) return findKernel(f->body);
  if (auto* i = ir::as<ir::IfStmt>(s)) {
    if (auto* k = findKernel(i->thenBody)) return k;
    return findKernel(i->elseBody);
  }
  return nullptr;
}

json exprJson(const ir::Expr& e) {
  auto rpn = exprToRpn(e);
  if (!rpn) return nullptr;
  return *rpn;
}

// The identifier a constant dimension was written as, when the source says
// so and it names a compile-time binding.
std::string boundNameOf(const ir::Expr& dim, const ir::PrimFunc& f, const SourceManager* sources) {
  if (!sources || !dim->loc.known() || dim->loc.file == 0 || dim->loc.len == 0) return "";
  std::string_view line = sources->lineText(dim->loc.file, dim->loc.line);
  if (dim->loc.col == 0 || dim->loc.col - 1 + dim->loc.len > line.size()) return "";
  std::string word(line.substr(dim->loc.col - 1, dim->loc.len));
  for (const auto& b : f.bindings)
    if (b.name == word) return word;
  return "";
}

// The tensors a function's body reads and writes.
class AccessScan : public ir::BufferAccessVisitor {
 public:
  std::set<const ir::BufferNode*> reads, writes;

 protected:
  void read(const ir::Buffer& b) override { reads.insert(b.get()); }
  void write(const ir::Buffer& b) override { writes.insert(b.get()); }
};

const char* accessName(const ir::BufferNode* b, const AccessScan& scan) {
  bool r = scan.reads.count(b), w = scan.writes.count(b);
  return r && w ? "readwrite" : w ? "write" : r ? "read" : "none";
}

json paramJson(const ir::Param& p, const ir::PrimFunc& f, const MetadataOptions& o, const AccessScan& access) {
  json j;
  j["name"] = p.name;
  if (p.buffer) {
    j["kind"] = "tensor";
    j["dtype"] = std::string(dtypeName(p.buffer->dtype));
    j["access"] = accessName(p.buffer.get(), access);
    json shape = json::array(), names = json::array();
    bool anyName = false;
    for (const ir::Expr& d : p.buffer->shape) {
      int64_t c;
      const ir::Expr* inner = &d;
      while (auto* cast = ir::as<ir::Cast>(*inner)) inner = &cast->value;
      if (ir::constInt(*inner, &c)) {
        shape.push_back(c);
        std::string n = boundNameOf(*inner, f, o.sources);
        if (n.empty()) n = boundNameOf(d, f, o.sources);
        if (!n.empty()) anyName = true;
        names.push_back(n.empty() ? json(nullptr) : json(n));
      } else if (auto* v = ir::as<ir::VarRef>(*inner)) {
        shape.push_back(v->var->name);
        names.push_back(nullptr);
      } else {
        json x;
        x["expr"] = exprJson(d);
        x["text"] = exprToText(d);
        shape.push_back(x);
        names.push_back(nullptr);
      }
    }
    j["shape"] = shape;
    if (anyName) j["shape_names"] = names;
  } else {
    j["kind"] = "scalar";
    j["dtype"] = std::string(dtypeName(p.scalar->dtype));
  }
  return j;
}

json launchPlanJson(const DeviceLaunchPlan& plan) {
  json args = json::array();
  for (const DeviceArg& a : plan.args) {
    json x;
    switch (a.kind) {
      case DeviceArg::Kind::Param: x["kind"] = "param"; x["index"] = a.paramIndex; break;
      case DeviceArg::Kind::Symbol: x["kind"] = "symbol"; x["name"] = a.name; break;
      case DeviceArg::Kind::Let: x["kind"] = "let"; x["name"] = a.name; break;
    }
    x["dtype"] = std::string(dtypeName(a.dtype));
    args.push_back(x);
  }
  json lets = json::array();
  for (const auto& [var, value] : plan.hostLets)
    lets.push_back({{"name", var->name}, {"expr", exprJson(value)}, {"dtype", std::string(dtypeName(var->dtype))}});
  json launches = json::array();
  for (const DeviceLaunch& l : plan.launches) {
    json grid = json::array();
    for (size_t i = 0; i < 3; ++i) grid.push_back(i < l.grid.size() ? exprJson(l.grid[i]) : json("1"));
    json maps = json::array();
    for (const cuda::TensorMapArg& t : l.tensorMaps) {
      maps.push_back({{"param", t.paramIndex}, {"box", t.box}, {"swizzle", t.swizzle}, {"stage", t.stage}});
      if (t.store) maps.back()["store"] = true;
      // Im2col maps only: the convolution the launcher's corners and
      // element strides come from, each (h, w); the box is {pixels, channels}.
      if (t.im2col) {
        const cuda::Im2colGeometry& g = t.geometry;
        auto pair = [](const int* v) { return json::array({v[0], v[1]}); };
        maps.back()["im2col"] = {{"kernel", pair(g.kernel)},
                                 {"stride", pair(g.stride)},
                                 {"pad", pair(g.pad)},
                                 {"dilation", pair(g.dilation)}};
      }
    }
    launches.push_back({{"entry", l.entry},
                        {"grid", grid},
                        {"block", json::array({l.threads, 1, 1})},
                        {"shared_bytes", l.sharedBytes},
                        {"tensor_maps", maps},
                        {"persistent_blocks_per_sm", l.persistentBlocksPerSM},
                        {"fallback", l.fallbackEntry.empty()
                                         ? json(nullptr)
                                         : json({{"entry", l.fallbackEntry},
                                                 {"block", json::array({l.fallbackThreads, 1, 1})},
                                                 {"shared_bytes", l.fallbackSharedBytes}})}});
  }
  return {{"device_args", args}, {"host_lets", lets}, {"launches", launches}};
}

json kernelJson(const ir::PrimFunc& f, const MetadataOptions& o) {
  json k;
  k["name"] = f.name;
  k["symbol"] = o.symbolFor ? o.symbolFor(f.name) : "";
  AccessScan access;
  if (f.body) access.visit(f.body);
  json params = json::array();
  for (const ir::Param& p : f.params) params.push_back(paramJson(p, f, o, access));
  k["params"] = params;
  json syms = json::array();
  for (const ir::Var& v : f.shapeVars) syms.push_back({{"name", v->name}, {"dtype", std::string(dtypeName(v->dtype))}});
  k["shape_symbols"] = syms;
  json binds = json::array();
  for (const ir::Binding& b : f.bindings) binds.push_back({{"name", b.name}, {"value", b.value}});
  k["bindings"] = binds;
  json grid = json::array(), gridText = json::array();
  int64_t threads = 0;
  if (const ir::KernelStmt* ks = findKernel(f.body)) {
    for (const ir::Expr& g : ks->grid) {
      grid.push_back(exprJson(g));
      gridText.push_back(exprToText(g));
    }
    threads = ks->threads;
  }
  k["grid"] = grid;
  k["grid_text"] = gridText;
  k["threads"] = threads;
  k["block"] = json::array({threads, 1, 1});
  k["shared_bytes"] = nullptr;
  if (o.launchPlanFor) {
    if (auto plan = o.launchPlanFor(f.name)) {
      json p = launchPlanJson(*plan);
      for (auto it = p.begin(); it != p.end(); ++it) k[it.key()] = it.value();
      int64_t shared = 0;
      for (const DeviceLaunch& l : plan->launches) shared = std::max(shared, l.sharedBytes);
      k["shared_bytes"] = shared;
    }
  }
  return k;
}

}  // namespace

const char* tlcVersion() { return TLC_VERSION_STRING; }

std::optional<std::string> exprToRpn(const ir::Expr& e) {
  std::string out;
  if (!toRpn(e, out)) return std::nullopt;
  return out;
}

std::string exprToText(const ir::Expr& e) { return text(e); }

std::string moduleMetadataJson(const ir::Module& module, const MetadataOptions& options, int indent) {
  json j;
  j["format"] = "tlc-module-metadata";
  j["format_version"] = 1;
  j["tlc_version"] = tlcVersion();
  j["target"] = options.target;
  j["binary"] = options.binary;
  json kernels = json::array();
  for (const ir::Func& f : module.funcs) kernels.push_back(kernelJson(*f, options));
  j["kernels"] = kernels;
  if (!options.fallbackImage.empty()) j["fallback_image"] = base64Encode(options.fallbackImage);
  return j.dump(indent);
}

bool parseModuleMetadata(const std::string& text, ParsedModule* out, std::string* error) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "kernel metadata is not valid JSON";
    return false;
  }
  if (j.value("format", "") != "tlc-module-metadata" || j.value("format_version", 0) != 1) {
    *error = "not tlc kernel metadata of format version 1";
    return false;
  }
  try {
    out->tlcVersion = j.at("tlc_version").get<std::string>();
    out->target = j.at("target").get<std::string>();
    out->binary = j.at("binary").get<std::string>();
    out->fallbackImage.clear();
    if (j.contains("fallback_image")) {
      auto image = base64Decode(j.at("fallback_image").get<std::string>());
      if (!image) {
        *error = "the metadata's fallback_image is not base64";
        return false;
      }
      out->fallbackImage = std::move(*image);
    }
    out->kernels.clear();
    for (const json& k : j.at("kernels")) {
      ParsedKernel pk;
      pk.name = k.at("name").get<std::string>();
      pk.symbol = k.value("symbol", "");
      for (const json& p : k.at("params")) {
        ParsedParam pp;
        pp.name = p.at("name").get<std::string>();
        pp.isTensor = p.at("kind").get<std::string>() == "tensor";
        pp.dtype = p.at("dtype").get<std::string>();
        if (pp.isTensor) {
          pp.access = p.value("access", "");
          const json& shape = p.at("shape");
          for (size_t i = 0; i < shape.size(); ++i) {
            ParsedDim d;
            const json& x = shape[i];
            if (x.is_number_integer()) {
              d.kind = ParsedDim::Kind::Const;
              d.value = x.get<int64_t>();
            } else if (x.is_string()) {
              d.kind = ParsedDim::Kind::Symbol;
              d.symbol = x.get<std::string>();
            } else {
              d.kind = ParsedDim::Kind::Expr;
              d.symbol = x.at("expr").is_string() ? x.at("expr").get<std::string>() : "";
            }
            if (p.contains("shape_names") && p["shape_names"][i].is_string())
              d.boundName = p["shape_names"][i].get<std::string>();
            pp.shape.push_back(d);
          }
        }
        pk.params.push_back(pp);
      }
      for (const json& s : k.at("shape_symbols")) pk.shapeSymbols.push_back(s.at("name").get<std::string>());
      for (const json& b : k.at("bindings"))
        pk.bindings.emplace_back(b.at("name").get<std::string>(), b.at("value").get<std::string>());
      for (const json& g : k.at("grid")) pk.grid.push_back(g.is_string() ? g.get<std::string>() : "");
      pk.threads = k.value("threads", int64_t{0});
      out->kernels.push_back(pk);
    }
  } catch (const json::exception& e) {
    *error = std::string("malformed kernel metadata: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace tlc::meta
