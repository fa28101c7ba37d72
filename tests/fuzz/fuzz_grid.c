/* fuzz_grid.c - libFuzzer harness of the gcut grid file reader (docs/FORMATS.md): a grid that
 * parses is solved with bk and with cpu-pr (one thread); both flows must be equal and bk's cut
 * certificate must hold. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_input_path(data, size);
    if (path == NULL)
        return 0;
    gcut_grid *grid = NULL;
    if (gcut_grid_read(path, &grid) != GCUT_OK)
        return 0;
    if (fuzz_verbose())
        fprintf(stderr, "grid: %lld nodes\n", (long long)gcut_grid_num_nodes(grid));
    int64_t n = gcut_grid_num_nodes(grid);
    uint8_t *labels = fuzz_alloc((size_t)n, "fuzz labels");
    if (labels != NULL) {
        gcut_options opt;
        gcut_options_init(&opt);
        opt.solver = "bk";
        int64_t flow = -1, flow_pr = -1;
        gcut_status st = gcut_grid_solve(grid, &opt, &flow, labels, NULL);
        fuzz_require(st == GCUT_OK || st == GCUT_ERR_NOMEM,
                     "bk failed on a grid the reader accepted");
        if (st == GCUT_OK) {
            fuzz_require(gcut_grid_verify(grid, labels, flow, NULL) == GCUT_OK, "cut certificate");
            opt.solver = "cpu-pr";
            opt.threads = 1;
            st = gcut_grid_solve(grid, &opt, &flow_pr, labels, NULL);
            fuzz_require(st != GCUT_OK || flow_pr == flow, "cpu-pr and bk flows differ");
            fuzz_require(st != GCUT_OK || gcut_grid_verify(grid, labels, flow_pr, NULL) == GCUT_OK,
                         "cpu-pr cut certificate");
        }
    }
    gcut_free(labels);
    gcut_grid_free(grid);
    return 0;
}
