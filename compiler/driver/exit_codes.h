// Process exit codes of the tlc driver.
#pragma once

namespace tlc::driver {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUserError = 1;  // diagnostics about the user's program were printed
inline constexpr int kExitUsage = 2;      // bad command line
inline constexpr int kExitInternal = 70;  // internal compiler error (a bug in tlc)

}  // namespace tlc::driver
