// C header and embed-source generation for `tlc build --header/--embed`;
// see header_gen.h for the interface the generated code offers.
#include "compiler/driver/header_gen.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "compiler/backends/c_names.h"
#include "compiler/backends/metadata.h"
#include "compiler/support/file_io.h"
#include "compiler/ir/buffer_writes.h"

namespace tlc::driver {
namespace {

const char* enumName(DType t) {
  switch (t) {
    case DType::Bool: return "TLC_BOOL";
    case DType::Int8: return "TLC_INT8";
    case DType::Int16: return "TLC_INT16";
    case DType::Int32: return "TLC_INT32";
    case DType::Int64: return "TLC_INT64";
    case DType::UInt8: return "TLC_UINT8";
    case DType::UInt16: return "TLC_UINT16";
    case DType::UInt32: return "TLC_UINT32";
    case DType::UInt64: return "TLC_UINT64";
    case DType::Float16: return "TLC_FLOAT16";
    case DType::BFloat16: return "TLC_BFLOAT16";
    case DType::Float32: return "TLC_FLOAT32";
    case DType::Float64: return "TLC_FLOAT64";
    case DType::Float8E4M3: return "TLC_FLOAT8_E4M3";
    case DType::Float8E5M2: return "TLC_FLOAT8_E5M2";
  }
  return "TLC_FLOAT32";
}

// The C type of a tensor element.
const char* elementType(DType t) {
  switch (t) {
    case DType::Bool: return "uint8_t";
    case DType::Int8: return "int8_t";
    case DType::Int16: return "int16_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt8: return "uint8_t";
    case DType::UInt16: return "uint16_t";
    case DType::UInt32: return "uint32_t";
    case DType::UInt64: return "uint64_t";
    case DType::Float16: return "tlc_float16";
    case DType::BFloat16: return "tlc_bfloat16";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float8E4M3: return "tlc_float8_e4m3";
    case DType::Float8E5M2: return "tlc_float8_e5m2";
  }
  return "void";
}

// The C type a scalar parameter is passed as (narrow floats as float).
const char* scalarType(DType t) {
  switch (t) {
    case DType::Bool: return "int";
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float8E4M3:
    case DType::Float8E5M2: return "float";
    default: return elementType(t);
  }
}

// A dimension as a C expression over the int64_t shape-symbol parameters.
std::string cExpr(const ir::Expr& e, bool* ok) {
  if (auto* i = ir::as<ir::IntImm>(e)) return "INT64_C(" + std::to_string(i->value) + ")";
  if (auto* v = ir::as<ir::VarRef>(e)) return backend::cName(v->var->name);
  if (auto* c = ir::as<ir::Cast>(e)) return cExpr(c->value, ok);
  if (auto* b = ir::as<ir::Binary>(e)) {
    std::string a = cExpr(b->a, ok), c = cExpr(b->b, ok);
    switch (b->op) {
      case ir::BinaryOp::Add: return "(" + a + " + " + c + ")";
      case ir::BinaryOp::Sub: return "(" + a + " - " + c + ")";
      case ir::BinaryOp::Mul: return "(" + a + " * " + c + ")";
      case ir::BinaryOp::FloorDiv: return "tlc_floordiv_(" + a + ", " + c + ")";
      case ir::BinaryOp::FloorMod: return "(" + a + " - tlc_floordiv_(" + a + ", " + c + ") * " + c + ")";
      case ir::BinaryOp::Min: return "(" + a + " < " + c + " ? " + a + " : " + c + ")";
      case ir::BinaryOp::Max: return "(" + a + " > " + c + " ? " + a + " : " + c + ")";
      default: break;
    }
  }
  *ok = false;
  return "INT64_C(-1)";
}

std::string upper(std::string s) {
  for (char& c : s) c = (char)std::toupper((unsigned char)c);
  return s;
}

// Whether `#include "name"` names the file `name`: printable ASCII without
// the characters and sequences a header name cannot hold.
bool includableName(const std::string& name) {
  if (name.empty() || name.find("//") != std::string::npos || name.find("/*") != std::string::npos) return false;
  for (char c : name)
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f || c == '"' || c == '\\' || c == '\'') return false;
  return true;
}

// A user's name in a comment, with its C spelling when that differs.
std::string commentName(const std::string& name) {
  std::string c = backend::cName(name);
  return "`" + backend::cCommentText(name) + "`" + (c == name ? "" : " (`" + c + "` here)");
}

// How the launch functions are defined: static inline by default; as
// exported functions in the one file that defines TLC_LAUNCH_EXPORT (for a
// shared library or a foreign-function interface); declared only where
// TLC_LAUNCH_EXTERN is defined.
const char* const kLaunchLinkage =
    "/* Launch functions are static inline. Define TLC_LAUNCH_EXPORT before including this header in one\n"
    " * file to define them there as exported functions instead, and TLC_LAUNCH_EXTERN in the files that\n"
    " * only call them. */\n"
    "#ifndef TLC_LAUNCH_LINKAGE_\n"
    "#if defined(TLC_LAUNCH_EXPORT) && defined(__GNUC__)\n"
    "#define TLC_LAUNCH_LINKAGE_ __attribute__((visibility(\"default\")))\n"
    "#elif defined(TLC_LAUNCH_EXPORT)\n"
    "#define TLC_LAUNCH_LINKAGE_\n"
    "#else\n"
    "#define TLC_LAUNCH_LINKAGE_ static inline\n"
    "#endif\n"
    "#endif\n\n";

// Conversions between float and the 16-bit float storage types, rounding to
// nearest even (NaN stays NaN, overflow becomes infinity).
const char* const kNarrowFloatHelpers =
    "#ifndef TLC_NARROW_FLOAT_HELPERS_DEFINED_\n#define TLC_NARROW_FLOAT_HELPERS_DEFINED_\n"
    "/* float <-> float16 / bfloat16 bits, rounding to nearest even. */\n"
    "static inline tlc_float16 tlc_float_to_float16(float f) {\n"
    "  uint32_t x, sign, mant, half, rem, shift, mid;\n"
    "  int32_t exp;\n"
    "  memcpy(&x, &f, 4);\n"
    "  sign = (x >> 16) & 0x8000u;\n"
    "  exp = (int32_t)((x >> 23) & 0xffu) - 127 + 15;\n"
    "  mant = x & 0x7fffffu;\n"
    "  if (((x >> 23) & 0xffu) == 0xffu) return (tlc_float16)(sign | 0x7c00u | (mant ? 0x200u : 0u));\n"
    "  if (exp >= 31) return (tlc_float16)(sign | 0x7c00u);\n"
    "  if (exp <= 0) {\n"
    "    if (exp < -10) return (tlc_float16)sign;\n"
    "    mant |= 0x800000u;\n"
    "    shift = (uint32_t)(14 - exp);\n"
    "    half = mant >> shift;\n"
    "    rem = mant & ((1u << shift) - 1u);\n"
    "    mid = 1u << (shift - 1u);\n"
    "    if (rem > mid || (rem == mid && (half & 1u))) ++half;\n"
    "    return (tlc_float16)(sign | half);\n"
    "  }\n"
    "  half = sign | ((uint32_t)exp << 10) | (mant >> 13);\n"
    "  rem = mant & 0x1fffu;\n"
    "  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;\n"
    "  return (tlc_float16)half;\n"
    "}\n"
    "static inline float tlc_float16_to_float(tlc_float16 h) {\n"
    "  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (uint32_t)(h >> 10) & 0x1fu, mant = h & 0x3ffu, x;\n"
    "  float f;\n"
    "  if (exp == 0x1fu) {\n"
    "    x = sign | 0x7f800000u | (mant << 13);\n"
    "  } else if (exp != 0) {\n"
    "    x = sign | ((exp + 112u) << 23) | (mant << 13);\n"
    "  } else if (mant == 0) {\n"
    "    x = sign;\n"
    "  } else {\n"
    "    exp = 113u;\n"
    "    while (!(mant & 0x400u)) {\n"
    "      mant <<= 1;\n"
    "      --exp;\n"
    "    }\n"
    "    x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);\n"
    "  }\n"
    "  memcpy(&f, &x, 4);\n"
    "  return f;\n"
    "}\n"
    "static inline tlc_bfloat16 tlc_float_to_bfloat16(float f) {\n"
    "  uint32_t x;\n"
    "  memcpy(&x, &f, 4);\n"
    "  if ((x & 0x7fffffffu) > 0x7f800000u) return (tlc_bfloat16)((x >> 16) | 0x40u);\n"
    "  x += 0x7fffu + ((x >> 16) & 1u);\n"
    "  return (tlc_bfloat16)(x >> 16);\n"
    "}\n"
    "static inline float tlc_bfloat16_to_float(tlc_bfloat16 b) {\n"
    "  uint32_t x = (uint32_t)b << 16;\n"
    "  float f;\n"
    "  memcpy(&f, &x, 4);\n"
    "  return f;\n"
    "}\n"
    "#endif\n\n";

// What `stream` is for a module built for `target`.
std::string targetNote(const std::string& target) {
  std::string t = "Built for " + backend::cCommentText(target) + ": ";
  if (target.rfind("cuda:", 0) == 0) return t + "`stream` is a CUstream / cudaStream_t (NULL: the default stream).";
  if (target.rfind("hip:", 0) == 0)
    return t + "`stream` is a hipStream_t (NULL: the null stream of the\n * calling thread's current device, where the module was loaded).";
  return t + "`stream` is ignored; a launch returns when its kernel is done.";
}

}  // namespace

std::string generateHeader(const ir::Module& module, const HeaderOptions& options) {
  std::string mod = backend::cIdentifierFromFileName(options.moduleName);
  std::string guard = "TLC_GENERATED_" + upper(mod) + "_H";
  std::ostringstream os;
  os << "/* Generated by tlc; do not edit.";
  if (!options.sourceName.empty()) os << " Source: " << backend::cCommentText(options.sourceName) << ".";
  os << "\n * Launch functions for the kernels of module `" << mod
     << "`; see <tlc/runtime.h> for the status codes and tlcGetLastError().";
  if (!options.target.empty()) os << "\n * " << targetNote(options.target);
  os << " */\n";
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <stdint.h>\n#include <string.h>\n#include <tlc/runtime.h>\n\n";
  os << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  if (options.embedded) {
    os << "/* The module embedded in this program: loaded on first use and shared.\n"
       << " * NULL when it cannot be loaded (the reason is in tlcGetLastError()). */\n"
       << "tlc_module* " << mod << "_module(void);\n\n";
  }
  os << "#ifndef TLC_FLOORDIV_DEFINED_\n#define TLC_FLOORDIV_DEFINED_\n"
     << "static inline int64_t tlc_floordiv_(int64_t a, int64_t b) {\n"
     << "  int64_t q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n#endif\n\n";
  os << kLaunchLinkage << kNarrowFloatHelpers;

  for (const ir::Func& f : module.funcs) {
    ir::BufferWrites writes = ir::collectBufferWrites(f->body);
    std::string prefix = options.functionPrefix;
    if (!prefix.empty()) prefix = backend::cIdentifierFromFileName(prefix) + "_";
    std::string fn = prefix + backend::cName(f->name) + "_launch";
    // Signature.
    std::vector<std::string> params = {"tlc_module* module"};
    for (const ir::Param& p : f->params) {
      std::string name = backend::cName(p.name);
      if (p.buffer) {
        bool isConst = !writes.buffers.count(p.buffer.get());
        params.push_back(std::string(isConst ? "const " : "") + elementType(p.buffer->dtype) + "* " + name);
      } else {
        params.push_back(std::string(scalarType(p.scalar->dtype)) + " " + name);
      }
    }
    for (const ir::Var& v : f->shapeVars) params.push_back("int64_t " + backend::cName(v->name));
    params.push_back("void* stream");

    os << "/* Kernel " << commentName(f->name);
    if (!f->bindings.empty()) {
      os << ", built with";
      for (size_t i = 0; i < f->bindings.size(); ++i)
        os << (i ? ", " : " ") << backend::cCommentText(f->bindings[i].name) << "="
           << backend::cCommentText(f->bindings[i].value);
    }
    os << ".\n";
    for (const ir::Param& p : f->params) {
      os << " *   " << commentName(p.name) << ": ";
      if (p.buffer) {
        os << dtypeName(p.buffer->dtype) << " tensor (";
        for (size_t i = 0; i < p.buffer->shape.size(); ++i) {
          bool ok = true;
          int64_t c;
          if (i) os << ", ";
          if (ir::constInt(p.buffer->shape[i], &c)) os << c;
          else if (auto* v = ir::as<ir::VarRef>(p.buffer->shape[i])) os << backend::cCommentText(v->var->name);
          else os << cExpr(p.buffer->shape[i], &ok);
        }
        os << (p.buffer->shape.size() == 1 ? ",)" : ")") << ", dense row-major\n";
      } else {
        os << dtypeName(p.scalar->dtype) << " scalar\n";
      }
    }
    for (const ir::Var& v : f->shapeVars)
      if (backend::cName(v->name) != v->name) os << " *   shape symbol " << commentName(v->name) << "\n";
    os << " * Device kernels launch asynchronously on `stream`; CPU kernels return when done. */\n";
    // Headers of one source built for several targets define the same launch
    // functions (they take the module): a guard keyed by the signature lets
    // them be included together.
    std::string signature;
    for (const std::string& p : params) signature += p + ";";
    uint64_t hash = 1469598103934665603ull;
    for (char c : f->name + ":" + signature) hash = (hash ^ (unsigned char)c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hash);
    std::string fnGuard = "TLC_LAUNCH_" + upper(fn) + "_" + hex;
    os << "#ifndef " << fnGuard << "\n#define " << fnGuard << "\n";
    std::string declarator = "tlc_status " + fn + "(";
    for (size_t i = 0; i < params.size(); ++i) declarator += (i ? ",\n    " : "") + params[i];
    declarator += ")";
    os << "#ifdef TLC_LAUNCH_EXTERN\n" << declarator << ";\n#else\n";
    os << "TLC_LAUNCH_LINKAGE_ " << declarator << " {\n";
    os << "  tlc_kernel* kernel_;\n  tlc_status status_;\n";
    size_t n = f->params.size();
    os << "  tlc_arg args_[" << std::max<size_t>(n, 1) << "];\n";
    for (size_t i = 0; i < n; ++i) {
      const ir::Param& p = f->params[i];
      std::string name = backend::cName(p.name);
      if (p.buffer) {
        os << "  int64_t " << name << "_shape_[" << p.buffer->shape.size() << "];\n";
      }
    }
    os << "  if (!module) return TLC_ERROR_INVALID_MODULE;\n";
    os << "  status_ = tlcGetKernel(module, " << backend::cStringLiteral(f->name) << ", &kernel_);\n";
    os << "  if (status_ != TLC_SUCCESS) return status_;\n";
    for (size_t i = 0; i < n; ++i) {
      const ir::Param& p = f->params[i];
      std::string name = backend::cName(p.name);
      if (p.buffer) {
        for (size_t d = 0; d < p.buffer->shape.size(); ++d) {
          bool ok = true;
          os << "  " << name << "_shape_[" << d << "] = " << cExpr(p.buffer->shape[d], &ok) << ";\n";
        }
        os << "  args_[" << i << "] = tlcTensorArg((void*)" << name << ", " << enumName(p.buffer->dtype) << ", "
           << p.buffer->shape.size() << ", " << name << "_shape_);\n";
      } else {
        DType t = p.scalar->dtype;
        if (isFloat(t))
          os << "  args_[" << i << "] = tlcFloatArg(TLC_FLOAT64, (double)" << name << ");\n";
        else if (isInteger(t) && !isSigned(t))
          os << "  args_[" << i << "] = tlcIntArg(TLC_UINT64, 0);\n  args_[" << i << "].scalar.value.u = (uint64_t)"
             << name << ";\n";
        else
          os << "  args_[" << i << "] = tlcIntArg(TLC_INT64, (int64_t)" << name << ");\n";
      }
    }
    os << "  return tlcLaunch(kernel_, args_, " << n << ", stream);\n}\n#endif\n#endif\n\n";
  }
  os << "#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif /* " << guard << " */\n";
  return os.str();
}

std::string generateEmbedSource(const std::string& binary, const std::string& metadataJson,
                                const EmbedOptions& options) {
  std::string mod = backend::cIdentifierFromFileName(options.moduleName);
  std::ostringstream os;
  os << "/* Generated by tlc; do not edit. The built kernels of module `" << mod << "` (" << binary.size()
     << " bytes), embedded. */\n";
  os << "#include <stddef.h>\n#include <tlc/runtime.h>\n";
  // `#include "..."` takes no escapes: a header whose name it cannot spell is
  // replaced by the one declaration this file needs from it.
  if (includableName(options.headerName)) os << "#include \"" << options.headerName << "\"\n";
  else if (!options.headerName.empty()) os << "tlc_module* " << mod << "_module(void);\n";
  os << "\n";
  os << "#if defined(__GNUC__)\n__attribute__((aligned(64)))\n#endif\n";
  os << "static const unsigned char " << mod << "_image_[" << std::max<size_t>(binary.size(), 1) << "] = {";
  char buf[8];
  for (size_t i = 0; i < binary.size(); ++i) {
    if (i % 20 == 0) os << "\n ";
    std::snprintf(buf, sizeof buf, " %u,", (unsigned)(unsigned char)binary[i]);
    os << buf;
  }
  os << "\n};\n\n";
  if (!metadataJson.empty()) {
    // Split into lines so compilers' string-length limits are not reached.
    os << "static const char " << mod << "_metadata_[] =";
    for (size_t i = 0; i < metadataJson.size(); i += 200)
      os << "\n    " << backend::cStringLiteral(std::string_view(metadataJson).substr(i, 200));
    os << ";\n\n";
  }
  os << "static const tlc_embedded_module " << mod << "_embedded_ = {" << mod << "_image_, sizeof(" << mod
     << "_image_), " << (metadataJson.empty() ? "NULL" : mod + "_metadata_") << ", " << backend::cStringLiteral(mod)
     << "};\n\n";
  os << "tlc_module* " << mod << "_module(void) {\n  tlc_module* module = NULL;\n"
     << "  if (tlcLoadEmbeddedModule(&" << mod << "_embedded_, &module) != TLC_SUCCESS) return NULL;\n"
     << "  return module;\n}\n";
  return os.str();
}

namespace {

bool readAll(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

std::string stemOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

}  // namespace

bool writeHostFiles(const ir::Module& module, const std::string& binaryPath, const std::string& headerPath,
                    const std::string& embedPath, std::string* error) {
  std::string name = stemOf(headerPath.empty() ? binaryPath : headerPath);
  if (!headerPath.empty()) {
    HeaderOptions h;
    h.moduleName = name;
    h.embedded = !embedPath.empty();
    h.sourceName = stemOf(binaryPath);
    std::string metadata;
    h.target = "cpu";
    meta::ParsedModule parsed;
    std::string ignored;  // a malformed description is the runtime's to report
    if (readAll(binaryPath + ".json", &metadata) && meta::parseModuleMetadata(metadata, &parsed, &ignored))
      h.target = parsed.target;
    if (!replaceNamedFile(headerPath, generateHeader(module, h), error)) return false;
  }
  if (!embedPath.empty()) {
    std::string binary, metadata;
    if (!readAll(binaryPath, &binary)) {
      *error = "cannot read the built module " + binaryPath;
      return false;
    }
    readAll(binaryPath + ".json", &metadata);  // device targets; a CPU .so carries its own
    EmbedOptions e;
    e.moduleName = name;
    if (!headerPath.empty()) e.headerName = headerPath.substr(headerPath.find_last_of('/') + 1);
    if (!replaceNamedFile(embedPath, generateEmbedSource(binary, metadata, e), error)) return false;
  }
  return true;
}

}  // namespace tlc::driver
