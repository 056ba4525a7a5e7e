// What a .cubin says about its kernels, read from its ELF sections: the
// registers each kernel uses per thread (the EIATTR_REGCOUNT attributes of
// the `.nv.info` section, which name the kernel by its symbol). Used to
// prune tuning candidates that cannot launch with their thread count.
#pragma once

#include <map>
#include <string>

namespace tlc::cuda {

// Kernel name -> registers per thread; empty when the bytes are not a
// 64-bit ELF cubin or carry no register counts.
std::map<std::string, int> cubinRegisterCounts(const std::string& cubin);

}  // namespace tlc::cuda
