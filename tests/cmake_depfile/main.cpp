// Runs the kernel built from scale.tl (B = A * factor(), factor from the
// imported module) and prints B[0], which run.cmake compares after an edit of
// the module.
#include <cstdio>
#include <vector>

#include "scale.h"

int main() {
  std::vector<float> A(64, 1.0f), B(64, 0.0f);
  tlc_module* module = scale_module();
  if (!module || scale_launch(module, A.data(), B.data(), nullptr) != TLC_SUCCESS) {
    std::fprintf(stderr, "%s\n", tlcGetLastError());
    return 1;
  }
  std::printf("B[0] = %g\n", B[0]);
  return 0;
}
