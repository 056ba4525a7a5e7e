#include "compiler/interp/npy_io.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace tlc::interp {
namespace {

// The NumPy type string of a dtype as written (bfloat16 and float8 widen to float32).
const char* npyDescr(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::Int8: return "|i1";
    case DType::Int16: return "<i2";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::UInt8: return "|u1";
    case DType::UInt16: return "<u2";
    case DType::UInt32: return "<u4";
    case DType::UInt64: return "<u8";
    case DType::Float16: return "<f2";
    case DType::Float64: return "<f8";
    default: return "<f4";  // float32, bfloat16, float8_*
  }
}

std::optional<DType> dtypeOfDescr(const std::string& d) {
  static const std::pair<const char*, DType> table[] = {
      {"|b1", DType::Bool},    {"|i1", DType::Int8},    {"<i2", DType::Int16},   {"<i4", DType::Int32},
      {"<i8", DType::Int64},   {"|u1", DType::UInt8},   {"<u2", DType::UInt16},  {"<u4", DType::UInt32},
      {"<u8", DType::UInt64},  {"<f2", DType::Float16}, {"<f4", DType::Float32}, {"<f8", DType::Float64},
      {"<b1", DType::Bool},    {"<i1", DType::Int8},    {"<u1", DType::UInt8},
  };
  for (const auto& [name, t] : table)
    if (d == name) return t;
  return std::nullopt;
}

bool littleEndianHost() {
  uint16_t x = 1;
  unsigned char b;
  std::memcpy(&b, &x, 1);
  return b == 1;
}

}  // namespace

bool writeNpy(const HostTensor& t, const std::string& path, std::string* error) {
  if (!littleEndianHost()) {
    if (error) *error = "writing .npy files needs a little-endian host";
    return false;
  }
  const bool widen = t.dtype == DType::BFloat16 || t.dtype == DType::Float8E4M3 || t.dtype == DType::Float8E5M2;
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 || i + 1 < t.shape.size() ? "," : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + npyDescr(t.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    if (error) *error = "cannot open `" + path + "` for writing";
    return false;
  }
  const char magic[] = "\x93NUMPY\x01\x00";
  out.write(magic, 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char lenBytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(lenBytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (widen) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      float f = static_cast<float>(t.get(i));
      out.write(reinterpret_cast<const char*>(&f), 4);
    }
  } else {
    out.write(static_cast<const char*>(t.data()), static_cast<std::streamsize>(t.sizeBytes()));
  }
  if (!out) {
    if (error) *error = "error while writing `" + path + "`";
    return false;
  }
  return true;
}

std::optional<HostTensor> readNpy(const std::string& path, std::string* error) {
  auto fail = [&](std::string msg) -> std::optional<HostTensor> {
    if (error) *error = "`" + path + "`: " + msg;
    return std::nullopt;
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot be opened");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return fail("not a .npy file");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("truncated header");
    headerLen = 0;
    for (int k = 0; k < 4; ++k) headerLen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + k])) << (8 * k);
    headerStart = 12;
  } else {
    return fail("unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < headerStart + headerLen) return fail("truncated header");
  std::string header = bytes.substr(headerStart, headerLen);
  auto valueOf = [&](const std::string& key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t colon = header.find(':', k);
    if (colon == std::string::npos) return "";
    size_t start = header.find_first_not_of(' ', colon + 1);
    if (start == std::string::npos) return "";
    if (header[start] == '\'') {
      size_t end = header.find('\'', start + 1);
      return end == std::string::npos ? "" : header.substr(start + 1, end - start - 1);
    }
    if (header[start] == '(') {
      size_t end = header.find(')', start);
      return end == std::string::npos ? "" : header.substr(start, end - start + 1);
    }
    size_t end = header.find_first_of(",}", start);
    return header.substr(start, end == std::string::npos ? std::string::npos : end - start);
  };
  std::optional<DType> dtype = dtypeOfDescr(valueOf("descr"));
  if (!dtype) return fail("unsupported element type `" + valueOf("descr") + "`");
  if (valueOf("fortran_order") != "False") return fail("only C-order arrays are supported");
  std::string shapeText = valueOf("shape");
  if (shapeText.size() < 2) return fail("missing shape");
  std::vector<int64_t> shape;
  std::stringstream ss(shapeText.substr(1, shapeText.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t a = item.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    try {
      size_t used = 0;
      long long v = std::stoll(item.substr(a), &used);
      if (v < 0) return fail("negative dimension in the shape");
      shape.push_back(v);
    } catch (...) {
      return fail("malformed shape " + shapeText);
    }
  }
  std::string why;
  std::optional<HostTensor> t = HostTensor::tryCreate(*dtype, shape, &why);
  if (!t) return fail(why);
  size_t dataStart = headerStart + headerLen;
  if (bytes.size() - dataStart < t->sizeBytes()) return fail("the data is shorter than the shape says");
  std::memcpy(t->data(), bytes.data() + dataStart, t->sizeBytes());
  return t;
}

}  // namespace tlc::interp
