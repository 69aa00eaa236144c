// Error types shared by every folder. Only main() turns them into exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace fabricmap::core {

// Process exit codes; a contract with scripts (shared/DESIGN.md).
enum class ExitCode : int {
  kOk = 0,
  kMeasuredFailure = 1,  // wrong results, verification failed
  kUsage = 2,            // bad option, bad input file, unwritable output
  kRuntimeFault = 3,     // timeout, lost rank, library failure
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : Error(code, message, message) {}
  ExitCode code() const { return code_; }
  // The message without where in the source it was raised: what a reader of a damaged file is
  // told (its own fault, not fabricmap's), where what() would name a source file.
  const std::string& reason() const { return reason_; }

 protected:
  Error(ExitCode code, const std::string& message, const std::string& reason)
      : std::runtime_error(message), code_(code), reason_(reason) {}

 private:
  ExitCode code_;
  std::string reason_;
};

// The user asked for something that cannot be done; the message names the problem.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ExitCode::kUsage, message) {}
};

// Something failed at run time (a library call, an invariant); carries where it happened.
class RuntimeFault : public Error {
 public:
  RuntimeFault(const std::string& message, const char* file, int line)
      : Error(ExitCode::kRuntimeFault, message + " (" + file + ":" + std::to_string(line) + ")", message) {}
};

}  // namespace fabricmap::core

#define FM_FAULT(message) ::fabricmap::core::RuntimeFault((message), __FILE__, __LINE__)

// Checks an invariant or a C API result; on failure throws with the expression and file:line.
#define FM_CHECK(cond, message)                                                   \
  do {                                                                            \
    if (!(cond)) throw FM_FAULT(std::string(message) + " [" #cond "]");           \
  } while (0)
