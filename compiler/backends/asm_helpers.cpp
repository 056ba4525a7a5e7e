#include "compiler/backends/asm_helpers.h"

#include <cctype>
#include <regex>
#include <vector>

namespace tlc::backend {

std::string replaceAsmHelpers(const std::string& hdr, const std::function<std::string(const std::string&)>& bodyFor) {
  // Find every function body containing `asm` and replace it.
  struct Repl {
    size_t open, close;  // positions of '{' and matching '}'
    std::string name;
  };
  std::vector<Repl> repls;
  static const std::regex asmTok(R"(\basm\b)");
  for (auto it = std::sregex_iterator(hdr.begin(), hdr.end(), asmTok); it != std::sregex_iterator(); ++it) {
    size_t pos = it->position(0);
    // Skip asm inside comments (line comments only appear in the header).
    size_t lineStart = hdr.rfind('\n', pos);
    lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
    if (hdr.substr(lineStart, pos - lineStart).find("//") != std::string::npos) continue;
    if (!repls.empty() && pos > repls.back().open && pos < repls.back().close) continue;
    // The function body: walk back to the outermost '{' whose header ends in ')'.
    int depth = 0;
    size_t open = std::string::npos;
    for (size_t p = pos; p-- > 0;) {
      if (hdr[p] == '}') depth++;
      else if (hdr[p] == '{') {
        if (depth > 0) {
          depth--;
          continue;
        }
        size_t q = p;
        while (q > 0 && isspace((unsigned char)hdr[q - 1])) q--;
        if (q > 0 && hdr[q - 1] == ')') open = p;  // candidate; keep looking outward
        else if (open != std::string::npos) break;  // reached namespace / struct scope
      }
    }
    if (open == std::string::npos) continue;
    depth = 0;
    size_t close = std::string::npos;
    for (size_t p = open; p < hdr.size(); ++p) {
      if (hdr[p] == '{') depth++;
      else if (hdr[p] == '}' && --depth == 0) {
        close = p;
        break;
      }
    }
    if (close == std::string::npos) continue;
    // The header: from the previous ';', '}' or '{' (or start) to `open`.
    size_t hb = hdr.find_last_of(";{}", open - 1);
    hb = hb == std::string::npos ? 0 : hb + 1;
    std::string header = hdr.substr(hb, open - hb);
    header = std::regex_replace(header, std::regex(R"(//[^\n]*)"), " ");  // comments before the helper
    header = std::regex_replace(header, std::regex(R"((^|\n)[ \t]*#[^\n]*)"), " ");  // and preprocessor lines
    header = std::regex_replace(header, std::regex(R"(template\s*<[^>]*>)"), " ");
    std::smatch m;
    std::string name;
    if (std::regex_search(header, m, std::regex(R"(([A-Za-z_]\w*)\s*\()"))) name = m[1].str();
    bool dup = false;
    for (auto& r : repls) dup |= r.open == open;
    if (!dup) repls.push_back({open, close, name});
  }
  std::string out = hdr;
  for (auto it = repls.rbegin(); it != repls.rend(); ++it)
    out.replace(it->open, it->close - it->open + 1, "{ " + bodyFor(it->name) + " }");
  return out;
}

}  // namespace tlc::backend
