#include "kernels/runtime/errors.h"

#if defined(WEFT_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace weft {

void throwIfCudaFailed(int code, const char* what, const std::source_location& where) {
  if (code == 0) return;
#if defined(WEFT_WITH_CUDA)
  const std::string reason = cudaGetErrorString(static_cast<cudaError_t>(code));
#else
  const std::string reason = "CUDA error " + std::to_string(code);
#endif
  throw CudaError(std::string(what) + " failed: " + reason + " (" + where.file_name() + ":" +
                      std::to_string(where.line()) + ")",
                  code);
}

}  // namespace weft
