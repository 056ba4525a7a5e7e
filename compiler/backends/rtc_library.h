// The runtime-compilation C API that NVRTC (nvrtc*) and hiprtc (hiprtc*)
// share, loaded with dlopen: tlc links neither, so it builds and runs on
// machines without them (nvrtc.h, hip/hip_compile.h).
#pragma once

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

namespace tlc::backend {

struct RtcLibrary {
  using Program = void*;
  using CreateFn = int (*)(Program*, const char*, const char*, int, const char* const*, const char* const*);
  using CompileFn = int (*)(Program, int, const char* const*);
  using SizeFn = int (*)(Program, size_t*);
  using GetFn = int (*)(Program, char*);
  using DestroyFn = int (*)(Program*);
  using ErrorStringFn = const char* (*)(int);

  void* handle = nullptr;
  std::string error;
  CreateFn create = nullptr;
  CompileFn compile = nullptr;
  SizeFn logSize = nullptr;
  GetFn log = nullptr;
  DestroyFn destroy = nullptr;
  ErrorStringFn errorString = nullptr;

  // Opens the first of `candidates` that exports `<prefix>CreateProgram` and
  // binds the entry points every such library has; false when none does or
  // one is missing (handle stays null; the caller sets `error`).
  bool load(const std::vector<std::string>& candidates, const std::string& prefix) {
    for (const std::string& c : candidates) {
      void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h && dlsym(h, (prefix + "CreateProgram").c_str())) {
        handle = h;
        break;
      }
    }
    if (!handle) return false;
    create = (CreateFn)symbol(prefix + "CreateProgram");
    compile = (CompileFn)symbol(prefix + "CompileProgram");
    logSize = (SizeFn)symbol(prefix + "GetProgramLogSize");
    log = (GetFn)symbol(prefix + "GetProgramLog");
    destroy = (DestroyFn)symbol(prefix + "DestroyProgram");
    errorString = (ErrorStringFn)symbol(prefix + "GetErrorString");
    if (!create || !compile || !logSize || !log || !destroy || !errorString) handle = nullptr;
    return handle != nullptr;
  }
  void* symbol(const std::string& name) const { return dlsym(handle, name.c_str()); }
  // The compiler's log of `program` (warnings, or the errors of a failed compile).
  std::string programLog(Program program) const {
    size_t size = 0;
    logSize(program, &size);
    std::string text(size, '\0');
    if (size > 1) log(program, text.data());
    text.resize(std::strlen(text.c_str()));
    return text;
  }
};

}  // namespace tlc::backend
