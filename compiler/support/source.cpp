#include "compiler/support/source.h"

#include "compiler/support/file_io.h"

namespace tlc {

SourceLoc SourceLoc::span(SourceLoc a, SourceLoc b) {
  if (a.file != b.file || a.line != b.line || b.col < a.col) return a;
  SourceLoc r = a;
  r.len = b.col + b.len - a.col;
  return r;
}

SourceManager::SourceManager() { files_.push_back(File{"<unknown>", "", {0}}); }

uint32_t SourceManager::addBuffer(std::string name, std::string text) {
  File f{std::move(name), std::move(text), {0}};
  for (uint32_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.lineStarts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size() - 1);
}

uint32_t SourceManager::addFile(const std::string& path, std::string& error) {
  std::string text;
  if (readRegularFile(path, &text, &error) != ReadStatus::Ok) return 0;
  return addBuffer(path, std::move(text));
}

std::string_view SourceManager::lineText(uint32_t file, uint32_t line) const {
  if (file >= files_.size()) return {};
  const File& f = files_[file];
  if (line == 0 || line > f.lineStarts.size()) return {};
  uint32_t begin = f.lineStarts[line - 1];
  if (begin > f.text.size()) return {};
  uint32_t end = begin;
  while (end < f.text.size() && f.text[end] != '\n' && f.text[end] != '\r') ++end;
  return std::string_view(f.text).substr(begin, end - begin);
}

std::string SourceManager::describe(SourceLoc loc) const {
  // Diagnostics about the command line itself have no file: they print as "tlc: error: ...".
  if (loc.file == 0 || loc.file >= files_.size()) return "tlc";
  std::string s = files_[loc.file].name;
  if (loc.known()) s += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  return s;
}

}  // namespace tlc
