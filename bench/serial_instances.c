/* serial_instances.c - instances for bench/serial_peers.sh as DIMACS files that outside
 * max-flow codes read: a gcut grid file as DIMACS (gcut_grid_to_graph, gcut_dimacs_write), and
 * the GENRMF family of Goldfarb & Grigoriadis (1988; the DIMACS challenge generator's rules:
 * b frames of a x a grids, in-frame arcs of capacity c2*a*a, one arc per node to a random
 * permutation of the next frame with capacity uniform in [c1, c2]). */
#include "gcut.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static uint64_t next_u64(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t uniform(int64_t lo, int64_t hi) {
    return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1));
}

static int fail(const char *what) {
    fprintf(stderr, "serial_instances: %s: %s\n", what, gcut_last_error());
    return 1;
}

static int grid_to_dimacs(const char *in, const char *out) {
    gcut_grid *grid = NULL;
    gcut_graph *g = NULL;
    if (gcut_grid_read(in, &grid) != GCUT_OK)
        return fail(in);
    if (gcut_grid_to_graph(grid, &g) != GCUT_OK)
        return fail("gcut_grid_to_graph");
    gcut_grid_free(grid);
    if (gcut_dimacs_write(g, out) != GCUT_OK)
        return fail(out);
    gcut_graph_free(g);
    return 0;
}

/* The source is node 0 of the first frame, the sink the last node of the last frame; as gcut
 * has no arcs out of the terminals, they are nodes of their own joined to the terminals by
 * their total out (in) capacity, which never limits the flow. */
static int genrmf(int64_t a, int64_t b, int64_t c1, int64_t c2, const char *out) {
    const int64_t frame = a * a, n = frame * b;
    if (a < 2 || b < 2 || c1 < 1 || c2 < c1 || 4 * c2 * frame + c2 > INT32_MAX) {
        fprintf(stderr, "serial_instances: genrmf: need a, b >= 2, 1 <= c1 <= c2 and "
                        "4 * c2 * a * a + c2 <= INT32_MAX\n");
        return 2;
    }
    gcut_graph *g = NULL;
    if (gcut_graph_create(n, 3 * n, &g) != GCUT_OK)
        return fail("gcut_graph_create");
    const int32_t in_frame = (int32_t)(c2 * frame);
    int64_t *perm = malloc((size_t)frame * sizeof *perm);
    if (perm == NULL)
        return 1;
    for (int64_t f = 0; f < b; f++) {
        const int64_t base = f * frame;
        for (int64_t y = 0; y < a; y++)
            for (int64_t x = 0; x < a; x++) {
                const int64_t v = base + y * a + x;
                if (x + 1 < a && gcut_graph_add_edge(g, v, v + 1, in_frame, in_frame) != GCUT_OK)
                    return fail("add_edge");
                if (y + 1 < a && gcut_graph_add_edge(g, v, v + a, in_frame, in_frame) != GCUT_OK)
                    return fail("add_edge");
            }
        if (f + 1 == b)
            break;
        for (int64_t k = 0; k < frame; k++)
            perm[k] = k;
        for (int64_t k = frame - 1; k > 0; k--) {
            int64_t j = uniform(0, k), t = perm[k];
            perm[k] = perm[j];
            perm[j] = t;
        }
        for (int64_t k = 0; k < frame; k++)
            if (gcut_graph_add_edge(g, base + k, base + frame + perm[k], (int32_t)uniform(c1, c2),
                                    0) != GCUT_OK)
                return fail("add_edge");
    }
    free(perm);
    const int32_t big = (int32_t)(4 * c2 * frame + c2);
    if (gcut_graph_add_tweights(g, 0, big, 0) != GCUT_OK ||
        gcut_graph_add_tweights(g, n - 1, 0, big) != GCUT_OK)
        return fail("add_tweights");
    if (gcut_dimacs_write(g, out) != GCUT_OK)
        return fail(out);
    gcut_graph_free(g);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "grid") == 0)
        return grid_to_dimacs(argv[2], argv[3]);
    if (argc == 8 && strcmp(argv[1], "genrmf") == 0) {
        rng_state = strtoull(argv[6], NULL, 10);
        return genrmf(strtoll(argv[2], NULL, 10), strtoll(argv[3], NULL, 10),
                      strtoll(argv[4], NULL, 10), strtoll(argv[5], NULL, 10), argv[7]);
    }
    fprintf(stderr, "usage: serial_instances grid IN.grid OUT.max\n"
                    "       serial_instances genrmf A B C1 C2 SEED OUT.max\n");
    return 2;
}
