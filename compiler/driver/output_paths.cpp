#include "compiler/driver/output_paths.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

namespace tlc::driver {
namespace fs = std::filesystem;

namespace {

bool fail(const std::string& message) {
  std::cerr << "tlc: error: " << message << "\n";
  return false;
}

bool checkWritable(const OutputFile& out) {
  std::error_code ec;
  fs::path p(out.path);
  if (out.path.empty()) return fail(out.option + " needs a file name");
  if (fs::is_directory(p, ec)) return fail(out.option + " " + out.path + " is a directory; name a file in it");
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::exists(dir, ec))
    return fail("cannot write " + out.path + " (" + out.option + "): the directory " + dir.string() +
                " does not exist");
  if (!fs::is_directory(dir, ec))
    return fail("cannot write " + out.path + " (" + out.option + "): " + dir.string() + " is not a directory");
  if (::access(dir.c_str(), W_OK) != 0)
    return fail("cannot write " + out.path + " (" + out.option + "): the directory " + dir.string() +
                " is not writable");
  if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0)
    return fail("cannot write " + out.path + " (" + out.option + "): the file exists and is not writable");
  return true;
}

std::string escapeForMake(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#' || c == '\\') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

}  // namespace

bool sameFile(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  if (fs::exists(a, ea) && fs::exists(b, eb)) {
    std::error_code ec;
    return fs::equivalent(a, b, ec);
  }
  fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea);
  fs::path cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

bool checkOutputs(const std::vector<OutputFile>& outputs, const std::vector<std::string>& sources) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputFile& out = outputs[i];
    if (!checkWritable(out)) return false;
    for (const std::string& src : sources)
      if (sameFile(out.path, src))
        return fail(out.option + " " + out.path + " is a source of the program (" + src +
                    "): writing it would destroy the source");
    for (size_t j = 0; j < i; ++j)
      if (sameFile(out.path, outputs[j].path))
        return fail(out.option + " " + out.path + " and " + outputs[j].option + " " + outputs[j].path +
                    " are the same file: give each output its own name");
  }
  return true;
}

std::string depfileText(const std::string& target, const std::vector<std::string>& deps) {
  std::string text = escapeForMake(target) + ":";
  for (const std::string& d : deps) {
    std::error_code ec;
    fs::path abs = fs::absolute(d, ec);
    text += " \\\n  " + escapeForMake((ec ? fs::path(d) : abs.lexically_normal()).string());
  }
  return text + "\n";
}

}  // namespace tlc::driver
