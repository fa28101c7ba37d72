/* fuzz_dimacs.c - libFuzzer harness of the DIMACS max-flow reader (docs/FORMATS.md): parse the
 * bytes; a problem that parses is solved with bk and its cut certificate checked, then written
 * with gcut_dimacs_write, read back and solved again to the same flow. */
#include "fuzz_common.h"

static int64_t solve(gcut_graph *g, uint8_t *labels) {
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "bk";
    int64_t flow = -1;
    gcut_status st = gcut_graph_solve(g, &opt, &flow, labels, NULL);
    if (st == GCUT_ERR_NOMEM)
        return -1; /* over the fuzzing memory cap: not a bug */
    fuzz_require(st == GCUT_OK, "bk failed on a graph the reader accepted");
    fuzz_require(gcut_graph_verify(g, labels, flow, NULL) == GCUT_OK, "cut certificate");
    return flow;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_input_path(data, size);
    if (path == NULL)
        return 0;
    gcut_graph *g = NULL;
    int64_t *ids = NULL;
    if (gcut_dimacs_read(path, &g, &ids) != GCUT_OK)
        return 0;
    if (fuzz_verbose())
        fprintf(stderr, "dimacs: %lld nodes\n", (long long)gcut_graph_num_nodes(g));
    int64_t n = gcut_graph_num_nodes(g);
    uint8_t *labels = fuzz_alloc(n > 0 ? (size_t)n : 1, "fuzz labels");
    int64_t flow = labels != NULL ? solve(g, labels) : -1;
    if (flow >= 0) {
        /* Round trip through the writer: the same problem, so the same flow. */
        const char *out = fuzz_file(1, NULL, 0);
        if (out != NULL) {
            gcut_graph *again = NULL;
            if (gcut_dimacs_write(g, out) == GCUT_OK &&
                gcut_dimacs_read(out, &again, NULL) == GCUT_OK) {
                fuzz_require(gcut_graph_num_nodes(again) == n, "round trip node count");
                int64_t flow2 = solve(again, labels);
                fuzz_require(flow2 < 0 || flow2 == flow, "round trip flow");
            }
            gcut_graph_free(again);
        }
    }
    gcut_free(labels);
    gcut_free(ids);
    gcut_graph_free(g);
    return 0;
}
