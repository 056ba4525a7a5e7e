// Calls of the bit-level builtins: T.reinterpret (the same bits as another
// dtype of the same width) and the nibble readers of packed 4-bit data,
// T.unpack_int4 / T.unpack_uint4 / T.unpack_fp4 (docs/builtins.md, Bits and
// packed data). Packed 4-bit values are stored in integer words (usually
// uint8, two per byte, the low nibble first); the readers extract one nibble
// and convert it, so the backends can use their fastest conversion for the
// result dtype (on CUDA, the float16 exponent-bias tricks).
#include <cmath>
#include <string>

#include "compiler/ir/float4.h"
#include "compiler/ir/int_arith.h"
#include "compiler/sema/const_eval.h"
#include "compiler/sema/sema.h"

namespace tlc::sema {

namespace {

// The integer dtype of `bits` bits with the signedness of `like`.
DType intOfWidth(int bits, bool isSignedLike) {
  switch (bits) {
    case 8: return isSignedLike ? DType::Int8 : DType::UInt8;
    case 16: return isSignedLike ? DType::Int16 : DType::UInt16;
    case 32: return isSignedLike ? DType::Int32 : DType::UInt32;
    default: return isSignedLike ? DType::Int64 : DType::UInt64;
  }
}

}  // namespace

Value Sema::callPackedBuiltin(const BuiltinInfo& b, const ast::Expr& call, CallArgs& args) {
  std::string name = std::string("T.") + b.name;
  SourceLoc loc = call.loc;
  if (b.id == BuiltinId::Reinterpret) {
    // TileLang (TVM) writes the dtype first: `T.reinterpret("float32", x)`.
    Value first = eval(*args.slots[0]);
    bool dtypeFirst = first.kind == ValueKind::DType || (first.kind == ValueKind::String && parseDTypeSpelling(first.str));
    Value v = dtypeFirst ? eval(*args.slots[1]) : first;
    const ast::Expr& dtypeArg = *args.slots[dtypeFirst ? 0 : 1];
    ir::Expr x = expectScalar(v, "the value of `T.reinterpret`");
    auto t = evalDType(dtypeArg, "the dtype of `T.reinterpret`");
    if (!x || !t) return Value::error(loc);
    if (*t == DType::Bool) {
      report(DiagKind::BadDType, dtypeArg.loc, "`T.reinterpret` cannot make a bool: compare with 0 instead");
      return Value::error(loc);
    }
    if (x->dtype == DType::Bool) {
      report(DiagKind::TypeMismatch, v.loc, "`T.reinterpret` needs a number, but this is bool");
      return Value::error(loc);
    }
    int bits = dtypeBits(*t);
    // An integer literal takes the integer type of the target's width
    // (`T.reinterpret(0x3c00, float16)` is 1.0).
    if (v.weak && isInteger(x->dtype) && dtypeBits(x->dtype) != bits) {
      auto c = constIntValue(x);
      DType s = intOfWidth(bits, true), u = intOfWidth(bits, false);
      if (c && !ir::fitsDType(*c, s) && !ir::fitsDType(*c, u)) {
        report(DiagKind::TypeMismatch, v.loc,
               "`T.reinterpret` keeps the bits, but " + std::to_string(*c) + " does not fit in the " +
                   std::to_string(bits) + " bits of " + std::string(dtypeName(*t)));
        return Value::error(loc);
      }
      if (c) x = foldCast(ir::fitsDType(*c, s) ? s : u, x, v.loc);
    }
    if (dtypeBits(x->dtype) != bits) {
      report(DiagKind::TypeMismatch, v.loc,
             "`T.reinterpret` keeps the bits, so the dtypes must have the same width, but " +
                 std::string(dtypeName(x->dtype)) + " has " + std::to_string(dtypeBits(x->dtype)) + " bits and " +
                 std::string(dtypeName(*t)) + " has " + std::to_string(bits) +
                 "; use `T.cast` to convert the value instead");
      return Value::error(loc);
    }
    if (x->dtype == *t) return Value::ofExpr(x, loc);
    if (isInteger(x->dtype) && isInteger(*t)) return Value::ofExpr(foldCast(*t, x, loc), loc);
    return Value::ofExpr(ir::makeCall("reinterpret", {x}, *t, loc), loc);
  }

  // unpack_int4 / unpack_uint4 / unpack_fp4(packed, index, dtype)
  Value pv = eval(*args.slots[0]), iv = eval(*args.slots[1]);
  ir::Expr packed = expectInt(pv, "the packed word of `" + name + "`");
  ir::Expr index = expectInt(iv, "the nibble index of `" + name + "`");
  bool fp4 = b.id == BuiltinId::UnpackFp4;
  DType defaultType = fp4 ? DType::Float32 : b.id == BuiltinId::UnpackInt4 ? DType::Int8 : DType::UInt8;
  std::optional<DType> t = defaultType;
  if (args.slots[2]) t = evalDType(*args.slots[2], "the dtype of `" + name + "`");
  if (!packed || !index || !t) return Value::error(loc);
  if (*t == DType::Bool || (fp4 && !isFloat(*t))) {
    report(DiagKind::BadDType, args.slots[2]->loc,
           "`" + name + "` yields " + (fp4 ? "a float dtype" : "a number") + ", not " + std::string(dtypeName(*t)) +
               (fp4 ? ": a float4 e2m1 value needs a float (float16, bfloat16, float32, ...)" : ""));
    return Value::error(loc);
  }
  int nibbles = dtypeBits(packed->dtype) / 4;
  auto ci = constIntValue(index);
  if (ci && (*ci < 0 || *ci >= nibbles)) {
    report(DiagKind::OutOfRange, iv.loc,
           "nibble index " + std::to_string(*ci) + " is outside the " + std::to_string(nibbles) + " nibbles of a " +
               std::string(dtypeName(packed->dtype)) + " word (0 .. " + std::to_string(nibbles - 1) + ")");
    return Value::error(loc);
  }
  if (auto cp = constIntValue(packed); cp && ci) {
    int64_t nib = static_cast<int64_t>((static_cast<uint64_t>(*cp) >> (4 * *ci)) & 0xF);
    if (fp4) return Value::ofExpr(ir::makeFloat(float4E2M1Value(static_cast<unsigned>(nib)), *t, loc), loc);
    if (b.id == BuiltinId::UnpackInt4 && nib >= 8) nib -= 16;
    return Value::ofExpr(foldCast(*t, ir::makeInt(nib, DType::Int32, loc), loc), loc);
  }
  const char* callee = fp4 ? "unpack_fp4" : b.id == BuiltinId::UnpackInt4 ? "unpack_int4" : "unpack_uint4";
  return Value::ofExpr(ir::makeCall(callee, {packed, index}, *t, loc), loc);
}

}  // namespace tlc::sema
