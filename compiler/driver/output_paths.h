// Checks of the files `tlc build` writes, before anything is written: every
// output goes to an existing, writable directory, is not a directory itself,
// and is none of the program's sources nor another output (compared by
// filesystem identity, so `./k.tl`, `k.tl` and a link to it are one file).
// Also the Makefile-syntax depfile of `tlc build --depfile`.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tlc::driver {

struct OutputFile {
  std::string option;  // "-o", "--header", ...
  std::string path;
};

// True when `a` and `b` name the same file: the same inode when both exist,
// else the same normalized absolute path.
bool sameFile(const std::string& a, const std::string& b);

// Checks every output (see above); prints "tlc: error: ..." to stderr and
// returns false on the first problem.
bool checkOutputs(const std::vector<OutputFile>& outputs, const std::vector<std::string>& sources);

// `target: dep dep ...` with spaces, `#` and `$` escaped as Make and Ninja
// read them; the dependencies as absolute paths.
std::string depfileText(const std::string& target, const std::vector<std::string>& deps);

}  // namespace tlc::driver
