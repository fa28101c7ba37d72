/* cuda_grid.cu - placeholder until the cuda-grid solver lands: device detection only. */
#include "internal.h"

#include <cuda_runtime.h>

extern "C" int gcut__cuda_available(void) {
    static int cached = -1;
    if (cached < 0) {
        int count = 0;
        cached = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    }
    return cached;
}

extern "C" gcut_status gcut__cudagrid_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                                 int64_t *flow, uint8_t *labels,
                                                 gcut_stats *stats) {
    (void)grid, (void)options, (void)flow, (void)labels, (void)stats;
    return gcut__fail(GCUT_ERR_UNSUPPORTED, "cuda-grid: not built yet");
}
