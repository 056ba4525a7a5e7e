// Process exit codes of the tlc driver, and its version.
#pragma once

namespace tlc::driver {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUserError = 1;  // diagnostics about the user's program were printed
inline constexpr int kExitUsage = 2;      // bad command line
inline constexpr int kExitInternal = 70;  // internal compiler error (a bug in tlc)

inline constexpr const char* kTlcVersion = "0.1.0";

}  // namespace tlc::driver
