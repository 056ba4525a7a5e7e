// How names and strings are spelled in generated C, C++ and CUDA: the one
// layer that every user name and every piece of user text goes through on
// its way into emitted kernels, generated headers and embed sources, `#line`
// directives and symbol names.
//
// A user's name is kept as it is when it is a *plain* C name: an ASCII
// identifier that starts with a letter, has no `__`, does not end with `_`,
// and is not reserved (a C, C++ or CUDA keyword or alternative token, a
// standard macro or type of the headers generated code includes, a CUDA
// built-in, a name of the tlc runtime or of the generated header; the exact
// rules are in c_names.cpp). Every other name is mangled:
//   - an identifier without a leading, trailing or doubled `_` becomes
//     `tlc_<name>` (`int` -> `tlc_int`, `NULL` -> `tlc_NULL`);
//   - any other text becomes `tlcx` followed by its bytes, letters and digits
//     as they are and every other byte as `_` and two upper-case hex digits
//     (`__LINE__` -> `tlcx_5F_5FLINE_5F_5F`, `a b` -> `tlcxa_20b`).
// Plain names never start with `tlc`, so the three forms never meet: the
// mapping is one-to-one, and a mangled name is a plain C identifier that no
// header or compiler reserves (no `__`, no leading `_`, not ending in `_`).
// Kernel symbols, header functions and per-tensor header locals append
// suffixes to this spelling (`<name>_kernel0`, `<name>_launch`,
// `<name>_shape_`); metadata and the runtime API keep the user's own name.
#pragma once

#include <string>
#include <string_view>

namespace tlc::backend {

// True when `name` is spelled as itself in generated C.
bool isPlainCName(std::string_view name);

// The C spelling of a user's name (see above). Deterministic and one-to-one.
std::string cName(std::string_view name);

// A C string literal, quotes included, that reads back as exactly `text`:
// `"` and `\` escaped, every byte outside printable ASCII and every `?` (no
// trigraphs) as a three-digit octal escape. Valid in C99, C++ and CUDA.
std::string cStringLiteral(std::string_view text);

// `text` made safe inside a /* */ or // comment on one line: printable
// ASCII stays, except that `*/` becomes `* /`; `\`, `?` and every other byte
// are shown as `\ooo` (no line splices, no trigraphs).
std::string cCommentText(std::string_view text);

// A readable C identifier for a file name (module names of generated
// headers): runs of characters other than letters and digits become one `_`,
// leading and trailing ones are dropped, an empty result is `kernels`, and
// the result is spelled by cName (`tlc.h` gives `tlc_tlc`: `tlc_module` is
// the runtime's type). Not one-to-one (`a-b`, `a_b` and `a.b` give `a_b`).
std::string cIdentifierFromFileName(std::string_view fileName);

// `#line N "file"`: the file name with `%`, `"`, control characters and DEL
// written as `%` and two hex digits (NVRTC copies the name into the PTX
// `.file` directive, which cannot hold them), as a C string literal.
std::string lineDirective(int line, std::string_view fileName);

}  // namespace tlc::backend
