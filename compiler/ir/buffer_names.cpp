#include "compiler/ir/buffer_names.h"

#include "compiler/ir/buffer_access.h"

namespace tlc::ir {

namespace {

class Names : public BufferAccessVisitor {
 public:
  std::unordered_set<std::string> names;
  void visitAlloc(const AllocStmt* a) override {
    names.insert(a->buffer->name);
    BufferAccessVisitor::visitAlloc(a);
  }

 protected:
  void read(const Buffer& b) override { names.insert(b->name); }
  void write(const Buffer& b) override { names.insert(b->name); }
};

}  // namespace

std::unordered_set<std::string> bufferNames(const Stmt& s) {
  Names scan;
  scan.visit(s);
  return std::move(scan.names);
}

std::string freshBufferName(const std::string& base, const std::string& suffix,
                            std::unordered_set<std::string>* taken) {
  std::string name = base + suffix;
  for (int n = 1; taken->count(name); ++n) name = base + suffix + std::to_string(n);
  taken->insert(name);
  return name;
}

}  // namespace tlc::ir
