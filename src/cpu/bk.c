/* bk.c - placeholder until the Boykov-Kolmogorov solver lands. */
#include "internal.h"

gcut_status gcut__bk_solve_graph(gcut_graph *graph, const gcut_options *options, int64_t *flow,
                                 uint8_t *labels, gcut_stats *stats) {
    (void)graph, (void)options, (void)flow, (void)labels, (void)stats;
    return gcut__fail(GCUT_ERR_UNSUPPORTED, "bk: not built yet");
}
