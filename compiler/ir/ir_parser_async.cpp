// The .tir parser's asynchronous-pipeline statements (ir.h: VersionStmt,
// AsyncCommitStmt, AsyncWaitStmt; docs/tile-ir.md, "Asynchronous
// pipelines"). `copy_async` is parsed with `copy` (ir_parser.cpp).
#include "compiler/ir/ir_parser_internal.h"

namespace tlc::ir::parser_detail {

// version := 'version' '(' IDENT (',' IDENT)* ')' '=' expr loc-suffix? block
Stmt IRParser::parseVersion() {
  SourceLoc loc = take().loc;
  expectPunct("(");
  std::vector<Buffer> buffers;
  do buffers.push_back(lookupBuffer(expectName("a buffer name")));
  while (acceptPunct(","));
  expectPunct(")");
  expectPunct("=");
  Expr version = parseExpr();
  parseOptLoc(loc);
  Stmt body = parseBlock();
  return std::make_shared<const VersionStmt>(std::move(buffers), std::move(version), std::move(body), loc);
}

// commit := 'commit_group' loc-suffix?
// wait   := 'wait_group' '(' NUMBER ')' loc-suffix?
Stmt IRParser::parseAsyncGroup() {
  Token head = take();
  SourceLoc loc = head.loc;
  if (head.text == "commit_group") {
    parseOptLoc(loc);
    return std::make_shared<const AsyncCommitStmt>(loc);
  }
  expectPunct("(");
  int64_t pending = parseSmallInt("the number of groups left pending");
  expectPunct(")");
  parseOptLoc(loc);
  return std::make_shared<const AsyncWaitStmt>(pending, loc);
}

}  // namespace tlc::ir::parser_detail
