// The .tir parser's asynchronous-pipeline statements (ir.h: VersionStmt,
// AsyncCommitStmt, AsyncWaitStmt, BarrierArriveStmt, BarrierWaitStmt,
// WarpSpecializeStmt; docs/tile-ir.md, "Asynchronous pipelines").
// `copy_async` is parsed with `copy` (ir_parser.cpp).
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

// barrier-ref := IDENT '[' expr ']'
BarrierRef IRParser::parseBarrierRef() {
  Buffer b = lookupBuffer(expectName("a barrier buffer"));
  expectPunct("[");
  Expr index = parseExpr();
  expectPunct("]");
  return {std::move(b), std::move(index)};
}

// arrive := 'barrier_arrive' '(' barrier-ref (',' 'expect_bytes' '=' expr)? ')' loc-suffix?
// wait   := 'barrier_wait' '(' barrier-ref ',' expr ')' loc-suffix?
Stmt IRParser::parseBarrierStmt() {
  Token head = take();
  SourceLoc loc = head.loc;
  expectPunct("(");
  BarrierRef barrier = parseBarrierRef();
  Expr operand;
  if (head.text == "barrier_wait") {
    expectPunct(",");
    operand = parseExpr();
  } else if (acceptPunct(",")) {
    expectWord("expect_bytes");
    expectPunct("=");
    operand = parseExpr();
  }
  expectPunct(")");
  parseOptLoc(loc);
  if (head.text == "barrier_wait") return std::make_shared<const BarrierWaitStmt>(std::move(barrier), std::move(operand), loc);
  return std::make_shared<const BarrierArriveStmt>(std::move(barrier), std::move(operand), loc);
}

// warp-specialize := 'warp_specialize' '(' 'producer_threads' '=' NUMBER ')' loc-suffix? block
//                    'consumer' block
Stmt IRParser::parseWarpSpecialize() {
  SourceLoc loc = take().loc;
  expectPunct("(");
  expectWord("producer_threads");
  expectPunct("=");
  int64_t threads = parseSmallInt("the number of producer threads");
  expectPunct(")");
  parseOptLoc(loc);
  Stmt producer = parseBlock();
  expectWord("consumer");
  Stmt consumer = parseBlock();
  return std::make_shared<const WarpSpecializeStmt>(threads, std::move(producer), std::move(consumer), loc);
}

}  // namespace tlc::ir::parser_detail
