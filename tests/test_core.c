/* test_core.c - the core's own contract: status table, memory cap and allocator, graph and
 * grid builders (argument checks, 32/64-bit ids, conversion), the cut certificate and the
 * solver table. No solver is needed: certificates are checked against hand-computed cuts. */
#include "internal.h"
#include "util_common.h"
#include "util_oracle.h"

#include <string.h>

static int passed = 0;

#define PASS_IF(cond)                                                                              \
    do {                                                                                           \
        int before_ = test_failures;                                                               \
        CHECK(cond);                                                                               \
        if (test_failures == before_)                                                              \
            passed++;                                                                              \
    } while (0)

static void test_status_table(void) {
    PASS_IF(strcmp(gcut_status_name(GCUT_OK), "OK") == 0);
    PASS_IF(strcmp(gcut_status_name(GCUT_ERR_NOMEM), "ERR_NOMEM") == 0);
    PASS_IF(strcmp(gcut_status_name((gcut_status)12345), "UNKNOWN") == 0);
    PASS_IF(strcmp(gcut_strerror(GCUT_ERR_VERIFY), "cut certificate failed: cut capacity "
                                                   "differs from flow value") == 0);
    PASS_IF(gcut_version() == GCUT_VERSION_NUMBER);
    PASS_IF(strcmp(gcut_version_string(), GCUT_VERSION_STRING) == 0);
    /* Every status has a distinct name. */
#define NAME_CHECK(name, value, msg) PASS_IF(strcmp(gcut_status_name(GCUT_##name), #name) == 0);
    GCUT_STATUS_MAP(NAME_CHECK)
#undef NAME_CHECK
}

static void test_memory_cap(void) {
    uint64_t old_cap = gcut_memory_limit();
    PASS_IF(old_cap > 0);
    gcut_set_memory_limit(1u << 20); /* 1 MiB */
    gcut_graph *g = NULL;
    /* 1M nodes need 16 MB of terminal capacities: refused cleanly, with a message. */
    gcut_status st = gcut_graph_create(1000000, 0, &g);
    PASS_IF(st == GCUT_ERR_NOMEM);
    PASS_IF(g == NULL);
    PASS_IF(strstr(gcut_last_error(), "out of memory") != NULL);
    int64_t shape[3] = {512, 512, 512};
    gcut_grid *grid = NULL;
    PASS_IF(gcut_grid_create(3, shape, 6, &grid) == GCUT_ERR_NOMEM && grid == NULL);
    PASS_IF(strstr(gcut_last_error(), "grid") != NULL);
    gcut_set_memory_limit(0);
    PASS_IF(gcut_memory_limit() > (1u << 20));
    uint64_t before = gcut_memory_in_use();
    PASS_IF(gcut_graph_create(1000, 10, &g) == GCUT_OK);
    PASS_IF(gcut_memory_in_use() > before);
    gcut_graph_free(g);
    PASS_IF(gcut_memory_in_use() == before);
    gcut_graph_free(NULL);
    gcut_grid_free(NULL);
}

typedef struct counting_allocator {
    int64_t allocs, frees;
} counting_allocator;

static void *counting_alloc(void *ctx, size_t bytes) {
    ((counting_allocator *)ctx)->allocs++;
    return malloc(bytes);
}

static void counting_free(void *ctx, void *ptr) {
    if (ptr != NULL)
        ((counting_allocator *)ctx)->frees++;
    free(ptr);
}

static void test_allocator(void) {
    counting_allocator counts = {0, 0};
    gcut_allocator a = {counting_alloc, counting_free, &counts};
    gcut_set_allocator(&a);
    gcut_graph *g = NULL;
    PASS_IF(gcut_graph_create(10, 0, &g) == GCUT_OK);
    for (int i = 0; i < 100; i++) /* grows the edge arrays through realloc-by-copy */
        CHECK_OK(gcut_graph_add_edge(g, i % 10, (i + 3) % 10, i, 100 - i));
    PASS_IF(gcut_graph_num_edges(g) == 100);
    int32_t cap = -1, rev = -1;
    int64_t u = -1, v = -1;
    CHECK_OK(gcut_graph_get_edge(g, 57, &u, &v, &cap, &rev));
    PASS_IF(u == 7 && v == 0 && cap == 57 && rev == 43);
    gcut_graph_free(g);
    gcut_set_allocator(NULL);
    PASS_IF(counts.allocs > 0 && counts.allocs == counts.frees);
}

static void test_graph_arguments(void) {
    gcut_graph *g = NULL;
    PASS_IF(gcut_graph_create(-1, 0, &g) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_graph_create(3, -5, &g) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_graph_create(3, 0, NULL) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_graph_create(3, 0, &g) == GCUT_OK);
    PASS_IF(gcut_graph_add_edge(g, 0, 3, 1, 1) == GCUT_ERR_INVALID_ARG);
    PASS_IF(strstr(gcut_last_error(), "out of range") != NULL);
    PASS_IF(gcut_graph_add_edge(g, -1, 0, 1, 1) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_graph_add_edge(g, 0, 1, -1, 1) == GCUT_ERR_INVALID_ARG);
    PASS_IF(strstr(gcut_last_error(), "negative") != NULL);
    PASS_IF(gcut_graph_add_tweights(g, 0, -2, 0) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_graph_add_tweights(g, 7, 1, 1) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_graph_set_edge(g, 0, 1, 1) == GCUT_ERR_INVALID_ARG); /* no edges yet */
    PASS_IF(gcut_graph_set_tweights(g, 0, -1, 0) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_graph_add_edge(g, 1, 1, 5, 5) == GCUT_OK); /* self-loop accepted */
    PASS_IF(gcut_graph_num_nodes(g) == 3 && gcut_graph_num_edges(g) == 1);
    /* Terminal capacities accumulate past int32. */
    for (int i = 0; i < 4; i++)
        CHECK_OK(gcut_graph_add_tweights(g, 2, INT32_MAX, 1));
    int64_t cs = 0, ct = 0;
    CHECK_OK(gcut_graph_get_tweights(g, 2, &cs, &ct));
    PASS_IF(cs == 4 * (int64_t)INT32_MAX && ct == 4);
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "no-such-solver";
    PASS_IF(gcut_graph_solve(g, &opt, NULL, NULL, NULL) == GCUT_ERR_NOT_FOUND);
    PASS_IF(strstr(gcut_last_error(), "no-such-solver") != NULL);
    opt.solver = "cpu-pr";
    PASS_IF(gcut_graph_solve(g, &opt, NULL, NULL, NULL) == GCUT_ERR_UNSUPPORTED);
    PASS_IF(gcut_graph_solve(NULL, NULL, NULL, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    gcut_graph_free(g);
}

/* Hand-computed certificate on s->0 (5), s->1 (2), 0->t (1), 1->t (4), 0->1 (3, rev 1).
 * The four cuts: {s}|.. 5+2 = 7; {s,0}|.. 1+3+2 = 6; {s,1}|.. 5+4+1 = 10; {s,0,1}|{t} 1+4 = 5,
 * the minimum, so the max flow is 5. */
static void test_certificate(void) {
    gcut_graph *g = NULL;
    CHECK_OK(gcut_graph_create(2, 0, &g));
    CHECK_OK(gcut_graph_add_tweights(g, 0, 5, 1));
    CHECK_OK(gcut_graph_add_tweights(g, 1, 2, 4));
    CHECK_OK(gcut_graph_add_edge(g, 0, 1, 3, 1));
    uint8_t all_source[2] = {GCUT_SOURCE, GCUT_SOURCE};
    uint8_t split[2] = {GCUT_SOURCE, GCUT_SINK};
    uint8_t all_sink[2] = {GCUT_SINK, GCUT_SINK};
    uint8_t reversed[2] = {GCUT_SINK, GCUT_SOURCE};
    int64_t cut = -1;
    PASS_IF(gcut_graph_verify(g, all_source, 5, &cut) == GCUT_OK && cut == 5);
    PASS_IF(gcut_graph_verify(g, split, 6, &cut) == GCUT_OK && cut == 6);
    PASS_IF(gcut_graph_verify(g, all_sink, 7, &cut) == GCUT_OK && cut == 7);
    /* {1} source side: s->0 5 + 1->t 4 + 1->0 rev cap 1 = 10 */
    PASS_IF(gcut_graph_verify(g, reversed, 10, &cut) == GCUT_OK && cut == 10);
    PASS_IF(gcut_graph_verify(g, all_source, 4, &cut) == GCUT_ERR_VERIFY);
    PASS_IF(strstr(gcut_last_error(), "5") != NULL);
    uint8_t bad[2] = {0, 7};
    PASS_IF(gcut_graph_verify(g, bad, 5, NULL) == GCUT_ERR_INVALID_ARG);
    /* The DIMACS flow offset enters every cut. */
    gcut__graph_add_flow_offset(g, 100);
    PASS_IF(gcut_graph_verify(g, all_source, 105, &cut) == GCUT_OK);
    gcut_graph_free(g);
}

static void test_large_ids(void) {
    /* A graph whose ids do not fit 32 bits stores 64-bit endpoints; the terminal arrays of
     * 2^32+ nodes are too large to allocate here, so check the storage choice on the struct
     * and the id path on a small graph. */
    gcut_graph *g = NULL;
    CHECK_OK(gcut_graph_create(5, 0, &g));
    PASS_IF(g->ids32);
    g->ids32 = false; /* exercise the 64-bit endpoint path on a small graph */
    CHECK_OK(gcut_graph_add_edge(g, 4, 0, 9, 8));
    int64_t u = 0, v = 0;
    CHECK_OK(gcut_graph_get_edge(g, 0, &u, &v, NULL, NULL));
    PASS_IF(u == 4 && v == 0);
    gcut_graph_free(g);
}

static void test_grid_basics(void) {
    gcut_grid *grid = NULL;
    int64_t bad_shape[2] = {0, 5};
    PASS_IF(gcut_grid_create(2, bad_shape, 4, &grid) == GCUT_ERR_INVALID_ARG);
    int64_t shape2[2] = {3, 5};
    PASS_IF(gcut_grid_create(2, shape2, 6, &grid) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_grid_create(4, shape2, 4, &grid) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_grid_create(2, shape2, 8, &grid) == GCUT_OK);
    PASS_IF(gcut_grid_num_nodes(grid) == 15 && gcut_grid_num_dirs(grid) == 8);
    int off[3];
    for (int d = 0; d < 8; d++) {
        int rev[3];
        CHECK_OK(gcut_grid_offset(grid, d, off));
        CHECK_OK(gcut_grid_offset(grid, d ^ 1, rev));
        PASS_IF(off[0] == -rev[0] && off[1] == -rev[1]);
    }
    CHECK_OK(gcut_grid_offset(grid, 0, off));
    PASS_IF(off[0] == 0 && off[1] == 1);
    PASS_IF(gcut_grid_offset(grid, 8, off) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_grid_dir_data(grid, 8) == NULL && gcut_grid_terminal_data(grid, 2) == NULL);
    /* Pairs of the 8-connected 3x5 grid: horizontal 3*4, vertical 2*5, two diagonals 2*4. */
    gcut_graph *g = NULL;
    CHECK_OK(gcut_grid_to_graph(grid, &g));
    PASS_IF(gcut_graph_num_edges(g) == 12 + 10 + 8 + 8);
    gcut_graph_free(g);
    gcut_grid_dir_data(grid, 3)[7] = -4;
    PASS_IF(gcut_grid_validate(grid) == GCUT_ERR_INVALID_ARG);
    PASS_IF(strstr(gcut_last_error(), "index 7") != NULL);
    PASS_IF(gcut_grid_to_graph(grid, &g) == GCUT_ERR_INVALID_ARG && g == NULL);
    gcut_grid_free(grid);

    int64_t shape3[3] = {3, 4, 5};
    CHECK_OK(gcut_grid_create(3, shape3, 26, &grid));
    PASS_IF(gcut_grid_num_dirs(grid) == 26);
    int seen[27] = {0};
    for (int d = 0; d < 26; d++) {
        CHECK_OK(gcut_grid_offset(grid, d, off));
        seen[(off[0] + 1) * 9 + (off[1] + 1) * 3 + (off[2] + 1)]++;
    }
    int all_once = seen[13] == 0;
    for (int k = 0; k < 27; k++)
        if (k != 13 && seen[k] != 1)
            all_once = 0;
    PASS_IF(all_once);
    gcut_grid_free(grid);
}

/* The grid certificate and the converted graph's certificate agree on random labelings of a
 * random grid, for every connectivity: both compute the same cut capacity independently. */
static void test_grid_certificate(test_rng *rng) {
    static const int conns[4][2] = {{2, 4}, {2, 8}, {3, 6}, {3, 26}};
    for (int round = 0; round < 40; round++) {
        int ndim = conns[round % 4][0], conn = conns[round % 4][1];
        int64_t shape[3];
        for (int i = 0; i < ndim; i++)
            shape[i] = test_rng_range(rng, 1, ndim == 2 ? 9 : 4);
        gcut_grid *grid = NULL;
        CHECK_OK(gcut_grid_create(ndim, shape, conn, &grid));
        if (grid == NULL)
            return;
        int64_t n = gcut_grid_num_nodes(grid);
        for (int t = 0; t < 2; t++)
            for (int64_t i = 0; i < n; i++)
                gcut_grid_terminal_data(grid, t)[i] = (int32_t)test_rng_range(rng, 0, 50);
        for (int d = 0; d < gcut_grid_num_dirs(grid); d++)
            for (int64_t i = 0; i < n; i++)
                gcut_grid_dir_data(grid, d)[i] = (int32_t)test_rng_range(rng, 0, 20);
        gcut_graph *g = NULL;
        CHECK_OK(gcut_grid_to_graph(grid, &g));
        uint8_t *labels = malloc((size_t)n);
        for (int k = 0; k < 5 && g != NULL; k++) {
            for (int64_t i = 0; i < n; i++)
                labels[i] = (uint8_t)test_rng_range(rng, 0, 1);
            int64_t cut_grid = -1, cut_graph = -2;
            gcut_grid_verify(grid, labels, 0, &cut_grid);
            gcut_graph_verify(g, labels, 0, &cut_graph);
            PASS_IF(cut_grid == cut_graph);
            PASS_IF(gcut_grid_verify(grid, labels, cut_grid, NULL) == GCUT_OK);
        }
        free(labels);
        gcut_graph_free(g);
        gcut_grid_free(grid);
    }
}

static void test_solver_table(void) {
    int count = gcut_solver_count();
    PASS_IF(count >= 2);
    gcut_solver_info info;
    PASS_IF(gcut_solver_find("bk", &info) == GCUT_OK && (info.flags & GCUT_TAKES_GRAPH));
    PASS_IF(gcut_solver_find("cpu-pr", &info) == GCUT_OK && (info.flags & GCUT_TAKES_GRID));
    PASS_IF(gcut_solver_find("auto", &info) == GCUT_ERR_NOT_FOUND);
    PASS_IF(gcut_solver_get(count, &info) == GCUT_ERR_INVALID_ARG);
    for (int i = 0; i < count; i++) {
        CHECK_OK(gcut_solver_get(i, &info));
        PASS_IF(info.name != NULL && info.description != NULL);
        PASS_IF(!(info.flags & GCUT_NEEDS_GPU) ||
                info.flags & (GCUT_TAKES_GRID | GCUT_TAKES_GRAPH));
    }
    gcut_options opt;
    gcut_options_init(&opt);
    PASS_IF(strcmp(opt.solver, "auto") == 0 && opt.warm == 1 && opt.threads == 0);
}

/* gcut_grid_wrap: a grid over the caller's arrays solves to the oracle's flow (Dinic on the
 * copied grid) with a cut that passes the certificate, for every connectivity and for bk and
 * cpu-pr; its arrays are the caller's (no copy), gcut_grid_free leaves them alone, and bad
 * arguments are refused. */
static void test_grid_wrap(test_rng *rng) {
    static const int conns[4][2] = {{2, 4}, {2, 8}, {3, 6}, {3, 26}};
    oracle_caps caps = oracle_caps_default();
    for (int round = 0; round < 16; round++) {
        int ndim = conns[round % 4][0], conn = conns[round % 4][1];
        int64_t shape[3];
        for (int i = 0; i < ndim; i++)
            shape[i] = test_rng_range(rng, 1, ndim == 2 ? 12 : 5);
        gcut_grid *owned = NULL;
        CHECK_OK(oracle_make_grid(rng, ndim, shape, conn, &caps, &owned));
        if (owned == NULL)
            return;
        int64_t n = gcut_grid_num_nodes(owned);
        /* The caller's arrays: one block, directions after the terminals. */
        int32_t *block = malloc((size_t)(2 + conn) * (size_t)n * sizeof(int32_t));
        const int32_t *dirs[26];
        memcpy(block, gcut_grid_terminal_cdata(owned, GCUT_SOURCE), (size_t)n * sizeof(int32_t));
        memcpy(block + n, gcut_grid_terminal_cdata(owned, GCUT_SINK), (size_t)n * sizeof(int32_t));
        for (int d = 0; d < conn; d++) {
            dirs[d] = block + (2 + d) * n;
            memcpy(block + (2 + d) * n, gcut_grid_dir_cdata(owned, d), (size_t)n * sizeof(int32_t));
        }
        gcut_grid *wrapped = NULL;
        CHECK_OK(gcut_grid_wrap(ndim, shape, conn, block, block + n, dirs, &wrapped));
        if (wrapped == NULL) {
            free(block);
            gcut_grid_free(owned);
            return;
        }
        PASS_IF(gcut_grid_num_nodes(wrapped) == n && gcut_grid_num_dirs(wrapped) == conn);
        PASS_IF(gcut_grid_terminal_cdata(wrapped, GCUT_SINK) == block + n);
        PASS_IF(gcut_grid_dir_cdata(wrapped, conn - 1) == dirs[conn - 1]);
        int64_t expected = oracle_dinic_grid(owned);
        PASS_IF(oracle_check_grid(wrapped, "bk", expected, "gcut_grid_wrap bk"));
        PASS_IF(oracle_check_grid(wrapped, "cpu-pr", expected, "gcut_grid_wrap cpu-pr"));
        gcut_grid_free(wrapped);
        /* The arrays are still the caller's and intact. */
        PASS_IF(memcmp(block, gcut_grid_terminal_cdata(owned, GCUT_SOURCE),
                       (size_t)n * sizeof(int32_t)) == 0);
        free(block);
        gcut_grid_free(owned);
    }
    int32_t cell[8] = {0};
    const int32_t *four[4] = {cell, cell, cell, NULL};
    int64_t shape[2] = {1, 1}, bad[2] = {1, 0};
    gcut_grid *g = NULL;
    PASS_IF(gcut_grid_wrap(2, shape, 4, cell, cell, four, &g) == GCUT_ERR_INVALID_ARG && !g);
    four[3] = cell;
    PASS_IF(gcut_grid_wrap(2, bad, 4, cell, cell, four, &g) == GCUT_ERR_INVALID_ARG && !g);
    PASS_IF(gcut_grid_wrap(2, shape, 6, cell, cell, four, &g) == GCUT_ERR_INVALID_ARG && !g);
    PASS_IF(gcut_grid_wrap(2, shape, 4, NULL, cell, four, &g) == GCUT_ERR_INVALID_ARG && !g);
    PASS_IF(gcut_grid_wrap(2, shape, 4, cell, cell, four, &g) == GCUT_OK && g != NULL);
    PASS_IF(gcut_grid_solve(g, NULL, NULL, NULL, NULL) == GCUT_OK);
    gcut_grid_free(g);
    cell[0] = -1; /* a negative capacity in the caller's array: the solve refuses it */
    PASS_IF(gcut_grid_wrap(2, shape, 4, cell, cell, four, &g) == GCUT_OK && g != NULL);
    PASS_IF(gcut_grid_solve(g, NULL, NULL, NULL, NULL) == GCUT_ERR_INVALID_ARG);
    gcut_grid_free(g);
}

int main(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed());
    test_status_table();
    test_memory_cap();
    test_allocator();
    test_graph_arguments();
    test_certificate();
    test_large_ids();
    test_grid_basics();
    test_grid_certificate(&rng);
    test_grid_wrap(&rng);
    test_solver_table();
    return test_finish("test_core", passed);
}
