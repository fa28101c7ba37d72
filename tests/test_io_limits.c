/* test_io_limits.c - issue #10's reproducers at the library level: a small malformed input is
 * rejected with small memory (an 18-byte DIMACS header for 10^8 nodes, a grid header for
 * 8000x8000 piped with no data), a tiny sigma makes no NaN capacities, and cuda-grid checks a
 * grid's sides in 64 bits before narrowing them (a 1 x (2^32+5) grid is not a 5-node grid).
 * Memory is the peak resident size (VmHWM of /proc/self/status, Linux; skipped elsewhere). */
#define _DEFAULT_SOURCE
#include "internal.h"
#include "util_common.h"
#include "util_oracle.h"

#include <string.h>
#include <unistd.h>

/* Peak resident set in MiB, -1 where /proc is missing. */
static long peak_mib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

/* The readers sized arrays from the header and zeroed them before any data: 1.5 GB and more
 * for these inputs. Now the peak may rise by a few buffers, not by the header's size. */
#define PEAK_RISE_MIB 256

static void check_peak(const char *what, long before) {
    long after = peak_mib();
    if (before < 0 || after < 0)
        return;
    printf("%s: peak resident %ld -> %ld MiB\n", what, before, after);
    if (after - before > PEAK_RISE_MIB) {
        fprintf(stderr, "%s: peak rose by %ld MiB (limit %d)\n", what, after - before,
                PEAK_RISE_MIB);
        test_failures++;
    }
}

static void dimacs_header_only(void) {
    char path[] = "/tmp/gcut-test-limits-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    static const char text[] = "p max 100000000 0\n"; /* 18 bytes */
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    long before = peak_mib();
    gcut_graph *g = NULL;
    gcut_status st = gcut_dimacs_read(path, &g, NULL);
    CHECK_EQ_I64(st, GCUT_ERR_PARSE);
    CHECK(strstr(gcut_last_error(), "source") != NULL);
    CHECK(g == NULL);
    check_peak("18-byte DIMACS header of 10^8 nodes", before);
    /* The same header with its source and sink is a valid problem of isolated nodes: flow 0
     * (the graph is made at the end of a file without arcs). */
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs("p max 5 2\nn 1 s\nn 5 t\na 1 2 7\na 2 5 4\n", f);
        fclose(f);
        CHECK_OK(gcut_dimacs_read(path, &g, NULL));
        if (g != NULL) {
            CHECK_EQ_I64(gcut_graph_num_nodes(g), 3);
            CHECK_EQ_I64(oracle_brute_force(g), 4);
            gcut_graph_free(g);
            g = NULL;
        }
        f = fopen(path, "w");
        fputs("p max 4 0\nn 1 s\nn 4 t\n", f);
        fclose(f);
        CHECK_OK(gcut_dimacs_read(path, &g, NULL));
        if (g != NULL) {
            CHECK_EQ_I64(gcut_graph_num_nodes(g), 2);
            CHECK_EQ_I64(oracle_brute_force(g), 0);
            gcut_graph_free(g);
        }
    }
    unlink(path);
}

/* A grid header on standard input (a pipe: no file size to check) and a few bytes. */
static void grid_header_on_stdin(void) {
    int fds[2];
    CHECK(pipe(fds) == 0);
    static const char header[] = "gcut-grid 1 ndim 2 shape 8000 8000 conn 4\n0123456789";
    CHECK(write(fds[1], header, strlen(header)) == (ssize_t)strlen(header));
    close(fds[1]);
    int saved = dup(STDIN_FILENO);
    CHECK(dup2(fds[0], STDIN_FILENO) == STDIN_FILENO);
    close(fds[0]);
    clearerr(stdin);
    long before = peak_mib();
    gcut_grid *grid = NULL;
    gcut_status st = gcut_grid_read("-", &grid);
    CHECK_EQ_I64(st, GCUT_ERR_PARSE);
    CHECK(strstr(gcut_last_error(), "truncated") != NULL);
    CHECK(grid == NULL);
    check_peak("grid header of 8000x8000 on a pipe", before);
    dup2(saved, STDIN_FILENO);
    close(saved);
    clearerr(stdin);
}

/* sigma 1e-300 made 1/(2 sigma^2) infinite and 0 * inf = NaN capacities (undefined when
 * converted; UBSan reported it). Every colour difference d2 >= 1 has weight 0 both at 1e-300
 * and at 0.01 (exp(-5000) underflows), so the two masks must be equal. */
static void tiny_sigma(void) {
    enum { W = 12, H = 10 };
    uint8_t pixels[W * H * 3], seeds[W * H];
    test_rng rng;
    test_rng_init(&rng, test_seed());
    for (int i = 0; i < W * H; i++) {
        int fg = (i % W) >= W / 2;
        for (int c = 0; c < 3; c++)
            pixels[3 * i + c] = (uint8_t)(fg ? 200 : 40) + (uint8_t)test_rng_range(&rng, 0, 3);
        seeds[i] = GCUT_SEED_UNKNOWN;
    }
    seeds[W + W - 2] = GCUT_SEED_FOREGROUND;
    seeds[W + 1] = GCUT_SEED_BACKGROUND;
    gcut_image image = {W, H, 1, 3, 8, pixels};
    uint8_t mask_tiny[W * H], mask_ref[W * H];
    gcut_seg_params params;
    gcut_seg_params_init(&params);
    params.sigma = 1e-300;
    CHECK_OK(gcut_segment(&image, seeds, &params, NULL, mask_tiny, NULL));
    params.sigma = 0.01;
    CHECK_OK(gcut_segment(&image, seeds, &params, NULL, mask_ref, NULL));
    CHECK(memcmp(mask_tiny, mask_ref, sizeof mask_ref) == 0);
    CHECK_EQ_I64(mask_tiny[W + W - 2], 1);
    CHECK_EQ_I64(mask_tiny[W + 1], 0);
}

#ifdef GCUT_HAVE_CUDA
/* A grid struct claiming 1 x (2^32+5) nodes (no arrays: the solver must refuse it before it
 * reads any). The int narrowing made it 1 x 5. Checked before any device is needed. */
static void cuda_grid_wide(void) {
    gcut_grid fake;
    memset(&fake, 0, sizeof fake);
    fake.ndim = 2;
    fake.depth = 1;
    fake.height = 1;
    fake.width = ((int64_t)1 << 32) + 5;
    fake.num_nodes = fake.width;
    fake.connectivity = 4;
    fake.num_dirs = 4;
    int64_t flow = -1;
    gcut_stats stats;
    memset(&stats, 0, sizeof stats);
    gcut_status st = gcut__cudagrid_solve_grid(&fake, NULL, &flow, NULL, &stats);
    CHECK_EQ_I64(st, GCUT_ERR_UNSUPPORTED);
    CHECK(strstr(gcut_last_error(), "4294967301") != NULL);
    CHECK_EQ_I64(flow, -1);
}
#endif

/* Runs one case and counts it as passed when it added no failure. */
static void run_case(void (*fn)(void), int *passed) {
    const int before = test_failures;
    fn();
    *passed += test_failures == before;
}

int main(void) {
    int passed = 0;
    run_case(dimacs_header_only, &passed);
    run_case(grid_header_on_stdin, &passed);
    run_case(tiny_sigma, &passed);
#ifdef GCUT_HAVE_CUDA
    run_case(cuda_grid_wide, &passed);
#endif
    return test_finish("test_io_limits", passed);
}
