// The names of a statement's buffers, and fresh names beside them: what a
// pass that adds buffers of its own (a staging tile) needs so that its
// buffers' names stay distinct in the printed tile IR and the generated code.
#pragma once

#include <string>
#include <unordered_set>

#include "compiler/ir/ir.h"

namespace tlc::ir {

// The names of every buffer `s` allocates, reads or writes.
std::unordered_set<std::string> bufferNames(const Stmt& s);

// `base` + `suffix`, or that with a number after it (1, 2, ...): the first
// such name not in `taken`, which it joins.
std::string freshBufferName(const std::string& base, const std::string& suffix,
                            std::unordered_set<std::string>* taken);

}  // namespace tlc::ir
