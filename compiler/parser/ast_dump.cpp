// The AST dump: one node per line, two spaces of indentation per level,
// `line:col` then the node kind and its own data; children follow, indented.
// Statement bodies are introduced by `body:` / `else:` labels (labels are not
// nodes and carry no location). An absent optional child prints `<none>`.
#include "compiler/parser/ast_dump.h"

#include <charconv>
#include <cstdio>

namespace tlc {
namespace {

using namespace ast;

class AstDumper {
 public:
  std::string out;

  void line(int depth, SourceLoc loc, const std::string& text) {
    out.append(static_cast<size_t>(depth) * 2, ' ');
    out += std::to_string(loc.line) + ":" + std::to_string(loc.col) + " " + text + "\n";
  }
  void label(int depth, const char* text) {
    out.append(static_cast<size_t>(depth) * 2, ' ');
    out += text;
    out += '\n';
  }

  static std::string quoted(const std::string& s) {
    std::string r = "\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        r += '\\';
        r += static_cast<char>(c);
      } else if (c == '\n') {
        r += "\\n";
      } else if (c == '\t') {
        r += "\\t";
      } else if (c < 0x20 || c >= 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        r += buf;
      } else {
        r += static_cast<char>(c);
      }
    }
    return r + "\"";
  }

  static std::string number(double v) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    std::string text(buf, res.ptr);
    // Keep floats recognizable: 0.0 prints as "0.0", not "0".
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text;
  }

  void expr(const Expr* e, int depth) {
    if (!e) {
      out.append(static_cast<size_t>(depth) * 2, ' ');
      out += "<none>\n";
      return;
    }
    switch (e->kind) {
      case ExprKind::Name: line(depth, e->loc, "Name " + e->name); return;
      case ExprKind::Int: line(depth, e->loc, "Int " + std::to_string(e->intValue)); return;
      case ExprKind::Float: line(depth, e->loc, "Float " + number(e->floatValue)); return;
      case ExprKind::Bool: line(depth, e->loc, e->boolValue ? "Bool True" : "Bool False"); return;
      case ExprKind::String: line(depth, e->loc, "String " + quoted(e->name)); return;
      case ExprKind::None: line(depth, e->loc, "None"); return;
      case ExprKind::Attribute: line(depth, e->loc, "Attribute ." + e->name); break;
      case ExprKind::Call: line(depth, e->loc, "Call"); break;
      case ExprKind::Subscript: line(depth, e->loc, "Subscript"); break;
      case ExprKind::Slice: line(depth, e->loc, "Slice"); break;
      case ExprKind::Tuple: line(depth, e->loc, "Tuple"); break;
      case ExprKind::Binary: line(depth, e->loc, std::string("Binary ") + binaryOpSpelling(e->binaryOp)); break;
      case ExprKind::Unary: line(depth, e->loc, std::string("Unary ") + unaryOpSpelling(e->unaryOp)); break;
      case ExprKind::IfElse: line(depth, e->loc, "IfElse"); break;
      case ExprKind::Dict: line(depth, e->loc, "Dict"); break;
      case ExprKind::Lambda: line(depth, e->loc, "Lambda"); break;
    }
    for (const ExprPtr& op : e->operands) expr(op.get(), depth + 1);
    for (const Keyword& k : e->keywords) {
      line(depth + 1, k.loc, "Keyword " + k.name);
      expr(k.value.get(), depth + 2);
    }
  }

  static std::string names(const Stmt& s) {
    std::string r;
    for (size_t i = 0; i < s.names.size(); ++i) r += (i ? ", " : "") + s.names[i];
    return r;
  }

  void block(const Block& b, int depth) {
    for (const StmtPtr& s : b) stmt(*s, depth);
  }

  void stmt(const Stmt& s, int depth) {
    switch (s.kind) {
      case StmtKind::Expr:
        line(depth, s.loc, "ExprStmt");
        expr(s.value.get(), depth + 1);
        return;
      case StmtKind::Assign:
        line(depth, s.loc, "Assign");
        expr(s.target.get(), depth + 1);
        expr(s.value.get(), depth + 1);
        return;
      case StmtKind::AugAssign:
        line(depth, s.loc, std::string("AugAssign ") + binaryOpSpelling(s.augOp) + "=");
        expr(s.target.get(), depth + 1);
        expr(s.value.get(), depth + 1);
        return;
      case StmtKind::For:
        line(depth, s.loc, "For " + names(s));
        expr(s.value.get(), depth + 1);
        label(depth + 1, "body:");
        block(s.body, depth + 2);
        return;
      case StmtKind::While:
        line(depth, s.loc, "While");
        expr(s.value.get(), depth + 1);
        label(depth + 1, "body:");
        block(s.body, depth + 2);
        return;
      case StmtKind::With:
        line(depth, s.loc, s.names.empty() ? std::string("With") : "With as (" + names(s) + ")");
        expr(s.value.get(), depth + 1);
        label(depth + 1, "body:");
        block(s.body, depth + 2);
        return;
      case StmtKind::If:
        line(depth, s.loc, "If");
        expr(s.value.get(), depth + 1);
        label(depth + 1, "body:");
        block(s.body, depth + 2);
        if (!s.orelse.empty()) {
          label(depth + 1, "else:");
          block(s.orelse, depth + 2);
        }
        return;
      case StmtKind::Pass: line(depth, s.loc, "Pass"); return;
      case StmtKind::Break: line(depth, s.loc, "Break"); return;
      case StmtKind::Continue: line(depth, s.loc, "Continue"); return;
      case StmtKind::Return:
        line(depth, s.loc, "Return");
        if (s.value) expr(s.value.get(), depth + 1);
        return;
      case StmtKind::Def:
        if (s.def) funcDef(*s.def, depth);
        return;
      case StmtKind::Assert:
        line(depth, s.loc, "Assert");
        expr(s.value.get(), depth + 1);
        if (s.target) expr(s.target.get(), depth + 1);
        return;
    }
  }

  void funcDef(const FuncDef& fn, int depth) {
    for (const ExprPtr& d : fn.decorators) {
      line(depth, d->loc, "Decorator");
      expr(d.get(), depth + 1);
    }
    line(depth, fn.loc, std::string(fn.isMacro ? "Macro " : "Def ") + fn.name);
    for (const CompileParam& p : fn.compileParams) {
      line(depth + 1, p.loc, "CompileParam " + p.name);
      if (p.defaultValue) expr(p.defaultValue.get(), depth + 2);
    }
    for (const Param& p : fn.params) {
      line(depth + 1, p.loc, "Param " + p.name);
      if (p.annotation) expr(p.annotation.get(), depth + 2);
      if (p.defaultValue) {
        label(depth + 2, "default:");
        expr(p.defaultValue.get(), depth + 3);
      }
    }
    label(depth + 1, "body:");
    block(fn.body, depth + 2);
  }

  void module(const Module& m) {
    out += "Module\n";
    for (const Import& imp : m.imports) {
      std::string text = "Import " + imp.module;
      if (!imp.names.empty()) {
        text += " names (";
        for (size_t i = 0; i < imp.names.size(); ++i) text += (i ? ", " : "") + imp.names[i];
        text += ")";
      }
      if (!imp.alias.empty()) text += " as " + imp.alias;
      line(1, imp.loc, text);
    }
    for (const auto& fn : m.funcs) funcDef(*fn, 1);
  }
};

}  // namespace

std::string dumpAst(const ast::Module& module) {
  AstDumper d;
  d.module(module);
  return std::move(d.out);
}

std::string dumpExpr(const ast::Expr& expr) {
  AstDumper d;
  d.expr(&expr, 0);
  return std::move(d.out);
}

}  // namespace tlc
