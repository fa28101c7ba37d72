/* cpu_pr.c - placeholder until the grid push-relabel solver lands. */
#include "internal.h"

gcut_status gcut__cpupr_solve_grid(const gcut_grid *grid, const gcut_options *options,
                                   int64_t *flow, uint8_t *labels, gcut_stats *stats) {
    (void)grid, (void)options, (void)flow, (void)labels, (void)stats;
    return gcut__fail(GCUT_ERR_UNSUPPORTED, "cpu-pr: not built yet");
}
