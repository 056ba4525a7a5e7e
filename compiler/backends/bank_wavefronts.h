// Shared-memory (LDS) bank wavefronts of one warp-wide access, counted the
// same way by the compiler's layout choices (cuda_mma.cpp, cuda_mfma.cpp)
// and by the emulator's bank-conflict counters (cuda_emu).
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>

namespace tlc::backend {

struct Wavefronts {
  int actual = 0;
  int ideal = 0;
};

// Lanes 0 .. n - 1 each access `bytes` bytes from byte offset addr(l), those
// with active(l). Shared memory serves them in phases of 128 bytes: 32 lanes
// of up to 4 bytes, 16 of 8, 8 of 16. A phase with an active lane takes as
// many wavefronts as the most distinct 4-byte words of one of the 32 banks
// (lanes reading one word share it), ideally one.
template <class Addr, class Active>
Wavefronts bankWavefronts(int n, int64_t bytes, Addr addr, Active active) {
  const int lanes = bytes <= 4 ? 32 : bytes <= 8 ? 16 : 8;
  Wavefronts w;
  for (int p = 0; p < n; p += lanes) {
    std::set<uint64_t> words[32];
    bool any = false;
    for (int l = p; l < std::min(n, p + lanes); ++l) {
      if (!active(l)) continue;
      any = true;
      const uint64_t a = (uint64_t)addr(l);
      for (uint64_t wd = a / 4; wd <= (a + (uint64_t)std::max<int64_t>(bytes, 1) - 1) / 4; ++wd)
        words[wd % 32].insert(wd);
    }
    if (!any) continue;
    size_t worst = 1;
    for (const auto& s : words) worst = std::max(worst, s.size());
    w.actual += (int)worst;
    w.ideal += 1;
  }
  return w;
}

}  // namespace tlc::backend
