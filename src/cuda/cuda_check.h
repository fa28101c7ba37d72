/* cuda_check.h - the one CUDA error path of gcut's kernels (cuda-grid, cuda-general, the video's
 * GPU path): a failed runtime call becomes GCUT_ERR_NOMEM (an allocation) or GCUT_ERR_DEVICE,
 * naming the solver and the call. Include after internal.h, in CUDA sources only. */
#pragma once

#include <cuda_runtime.h>

/** Clear a non-sticky error (so later calls in the process can work) and report err as the
 *  failure of `what` in solver `who`. */
static inline gcut_status gcut__cuda_fail(const char *who, cudaError_t err, const char *what) {
    cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
        return gcut__fail(GCUT_ERR_NOMEM, "%s: %s: %s", who, what, cudaGetErrorString(err));
    return gcut__fail(GCUT_ERR_DEVICE, "%s: %s: %s (%s)", who, what, cudaGetErrorString(err),
                      cudaGetErrorName(err));
}

/* Return from the calling function through its file's cuda_fail() when call fails. */
#define GCUT__CUDA_TRY(call, what)                                                                 \
    do {                                                                                           \
        cudaError_t cuda_err_ = (call);                                                            \
        if (cuda_err_ != cudaSuccess)                                                              \
            return cuda_fail(cuda_err_, what);                                                     \
    } while (0)
