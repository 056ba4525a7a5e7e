// The float4 e2m1 format of packed 4-bit weights (T.unpack_fp4): a sign bit,
// 2 exponent bits of bias 1 and 1 mantissa bit, no infinity or NaN. Its
// values are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
#pragma once

namespace tlc {

// The value of the float4 e2m1 code in the low 4 bits of `code`.
double float4E2M1Value(unsigned code);

}  // namespace tlc
