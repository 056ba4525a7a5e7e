// Pass drop-layout-annotations: removes every `annotate_layout` statement.
//
// A layout annotation (T.annotate_layout) constrains where a GPU target
// places a buffer's elements; it changes no value. Targets that keep every
// buffer in plain row-major memory (the CPU backend) run this pass first, so
// that their lowering never sees one.
// Assumes: nothing. Guarantees: no AnnotateLayout statement remains; every
// other statement is unchanged.
#pragma once

#include "compiler/ir/ir.h"

namespace tlc::passes {

ir::Module dropLayoutAnnotations(const ir::Module& m);

}  // namespace tlc::passes
