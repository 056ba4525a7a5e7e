// Source files and locations.
//
// Every token, AST node and IR node carries a SourceLoc so that an error found
// in any phase, including late passes, points at the user's line. A location
// is four integers: the file id given by the SourceManager, a 1-based line and
// column, and the length of the span to underline. Line 0 means "unknown".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tlc {

struct SourceLoc {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t len = 0;

  bool known() const { return line != 0; }
  // The span from the start of `a` to the end of `b` (same line only; otherwise `a`).
  static SourceLoc span(SourceLoc a, SourceLoc b);
};

// Owns the text of every file read during a compilation. File id 0 is reserved
// for "no file" so a default SourceLoc is unknown.
class SourceManager {
 public:
  SourceManager();
  // Registers a buffer under a display name; returns its id.
  uint32_t addBuffer(std::string name, std::string text);
  // Reads a regular file (readRegularFile); returns 0 and sets `error` when it cannot.
  uint32_t addFile(const std::string& path, std::string& error);

  bool hasFile(uint32_t file) const { return file != 0 && file < files_.size(); }
  const std::string& name(uint32_t file) const { return files_[file].name; }
  const std::string& text(uint32_t file) const { return files_[file].text; }
  // The text of 1-based line `line` without its newline ("" when out of range).
  std::string_view lineText(uint32_t file, uint32_t line) const;
  std::string describe(SourceLoc loc) const;  // "file:line:col"

 private:
  struct File {
    std::string name;
    std::string text;
    std::vector<uint32_t> lineStarts;
  };
  std::vector<File> files_;
};

}  // namespace tlc
