// Errors, in three places only: WEFT_CUDA_CHECK around runtime calls, the launch()
// helper (launch.h), and debug asserts. Library code throws weft::Error (or CudaError, which adds
// the failing call and file:line); only apps/ turns errors into exit codes.
// Error and CudaError are header-only so that the data layer (tuning/) can throw them without
// linking the runtime.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace weft {

/// Any error Weft reports to its caller. what() is a sentence for the user: what was wrong and,
/// where possible, what to do.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A failed CUDA runtime call or kernel launch.
class CudaError : public Error {
 public:
  CudaError(const std::string& message, int code) : Error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// Throws CudaError("<what> failed: <cuda error string> (<file>:<line>)") if code is not success.
void throwIfCudaFailed(int code, const char* what, const std::source_location& where);

}  // namespace weft

/// Wraps a CUDA runtime call; throws weft::CudaError with the call text and file:line.
#define WEFT_CUDA_CHECK(expr) \
  ::weft::throwIfCudaFailed(static_cast<int>(expr), #expr, std::source_location::current())

#if defined(NDEBUG)
#define WEFT_ASSERT(cond) ((void)0)
#else
#define WEFT_ASSERT(cond)                                                                      \
  ((cond) ? (void)0                                                                            \
          : throw ::weft::Error(std::string("internal error: assertion '") + #cond +           \
                                "' failed at " + std::source_location::current().file_name() + \
                                ":" + std::to_string(std::source_location::current().line())))
#endif
