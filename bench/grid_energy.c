/* grid_energy.c - what makes a grid's max-flow hard for block-parallel BK (Liu & Sun, CVPR 2010,
 * section 3: blocks solved apart, then merged): terminal and neighbour capacity ranges, the flow
 * that each tile can carry alone (what Phase A finds) against the maximum flow, the share of a
 * greedy one-arc pre-pass, and the cut's sides. Issue #17; docs/CPU-PARALLEL.md, seventh pass. */
#include "gcut.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* p10 / p50 / p90 / max of v[0..n) (sorted in place). */
static void quantiles(const char *what, int64_t *v, int64_t n) {
    if (n == 0) {
        printf("%-34s none\n", what);
        return;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    printf("%-34s n %" PRId64 "  p10 %" PRId64 "  p50 %" PRId64 "  p90 %" PRId64 "  max %" PRId64
           "\n",
           what, n, v[n / 10], v[n / 2], v[(n * 9) / 10], v[n - 1]);
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: grid_energy FILE.grid [TILES_Y TILES_X]   (2D grids; default 8 8)\n"
                        "prints capacity ranges, the greedy pre-pass's share, the flow each of\n"
                        "TILES_Y x TILES_X tiles carries alone (bk) against the maximum flow\n");
        return 2;
    }
    gcut_grid *grid = NULL;
    gcut_status st = gcut_grid_read(argv[1], &grid);
    if (st != GCUT_OK) {
        fprintf(stderr, "grid_energy: %s\n", gcut_last_error());
        return 1;
    }
    if (gcut_grid_ndim(grid) != 2) {
        fprintf(stderr, "grid_energy: 2D grids only\n");
        gcut_grid_free(grid);
        return 1;
    }
    const int ty = argc == 4 ? atoi(argv[2]) : 8, tx = argc == 4 ? atoi(argv[3]) : 8;
    int64_t shape[2];
    gcut_grid_shape(grid, shape);
    const int64_t H = shape[0], W = shape[1], n = H * W;
    const int conn = gcut_grid_connectivity(grid), nd = gcut_grid_num_dirs(grid);
    if (ty < 1 || tx < 1 || ty > H || tx > W) {
        fprintf(stderr, "grid_energy: tile counts 1..%" PRId64 " x 1..%" PRId64 "\n", H, W);
        gcut_grid_free(grid);
        return 2;
    }
    const int32_t *src = gcut_grid_terminal_cdata(grid, 0),
                  *snk = gcut_grid_terminal_cdata(grid, 1);
    int off[32][2];
    for (int d = 0; d < nd; d++)
        gcut_grid_offset(grid, d, off[d]);
    printf("grid %s: %" PRId64 "x%" PRId64 ", %d-connected, tiles %dx%d\n", argv[1], H, W, conn, ty,
           tx);

    /* Terminals: the common part min(s, t) is flow for free; the rest is an excess. */
    int64_t *e = malloc((size_t)n * sizeof *e), *tmp = malloc((size_t)n * sizeof *tmp);
    int64_t common = 0, sexc = 0, texc = 0, npos = 0, nneg = 0, nmax = 0, tmax = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t s = src[i], t = snk[i];
        common += s < t ? s : t;
        e[i] = s - t;
        if (e[i] > 0)
            sexc += e[i], npos++;
        else if (e[i] < 0)
            texc -= e[i], nneg++;
        if (s > tmax)
            tmax = s;
        if (t > tmax)
            tmax = t;
    }
    for (int64_t i = 0; i < n; i++)
        nmax += src[i] == tmax || snk[i] == tmax;
    printf("terminals: common part %" PRId64 " (flow without a path); %" PRId64
           " nodes with a source excess (sum %" PRId64 "), %" PRId64
           " with a sink excess (sum %" PRId64 "), %" PRId64 " neither\n",
           common, npos, sexc, nneg, texc, n - npos - nneg);
    printf("terminals: largest capacity %" PRId64 " on %" PRId64 " nodes (the seeds' hard "
           "constraints)\n",
           tmax, nmax);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (e[i] != 0 && src[i] != tmax && snk[i] != tmax)
            tmp[k++] = e[i] > 0 ? e[i] : -e[i];
    quantiles("|excess| (unseeded nodes)", tmp, k);
    k = 0;
    for (int d = 0; d < nd; d++) {
        const int32_t *c = gcut_grid_dir_cdata(grid, d);
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
                const int64_t yy = y + off[d][0], xx = x + off[d][1];
                if (yy >= 0 && yy < H && xx >= 0 && xx < W && c[y * W + x] > 0 && k < n)
                    tmp[k++] = c[y * W + x];
            }
    }
    quantiles("neighbour capacity (first n arcs)", tmp, k);

    /* The maximum flow and the cut (bk), the certificate checked. */
    gcut_options opt;
    gcut_options_init(&opt);
    opt.solver = "bk";
    uint8_t *lab = malloc((size_t)n);
    int64_t flow = 0;
    gcut_stats stats;
    double t0 = now_ms();
    st = gcut_grid_solve(grid, &opt, &flow, lab, &stats);
    if (st == GCUT_OK)
        st = gcut_grid_verify(grid, lab, flow, NULL);
    if (st != GCUT_OK) {
        fprintf(stderr, "grid_energy: %s\n", gcut_last_error());
        return 1;
    }
    int64_t fg = 0, cut_pairs = 0;
    for (int64_t i = 0; i < n; i++)
        fg += lab[i] == GCUT_SOURCE;
    for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x + 1 < W; x++)
            cut_pairs += lab[y * W + x] != lab[y * W + x + 1];
    for (int64_t y = 0; y + 1 < H; y++)
        for (int64_t x = 0; x < W; x++)
            cut_pairs += lab[y * W + x] != lab[(y + 1) * W + x];
    printf("max flow %" PRId64 " (bk %.1f ms, %" PRId64 " augmentations, certificate ok); "
           "through neighbour arcs %" PRId64 " = %.1f%% of the source excess\n",
           flow, now_ms() - t0, stats.augmentations, flow - common,
           100.0 * (double)(flow - common) / (double)(sexc > 0 ? sexc : 1));
    printf("cut: source side %" PRId64 " nodes (%.2f%%), %" PRId64 " 4-neighbour pairs cut\n", fg,
           100.0 * (double)fg / (double)n, cut_pairs);

    /* Greedy one-arc pushes source -> i -> j -> sink, one sweep in node order. */
    int64_t greedy = 0;
    /* GCUT_ENERGY_GREEDY=1: the tiles below are cut from the residual grid after the pushes. */
    gcut_grid *residual = NULL;
    const char *ge = getenv("GCUT_ENERGY_GREEDY");
    if (ge != NULL && strcmp(ge, "1") == 0) {
        if (gcut_grid_create(2, shape, conn, &residual) != GCUT_OK) {
            fprintf(stderr, "grid_energy: %s\n", gcut_last_error());
            return 1;
        }
        gcut_grid_set_terminals(residual, src, snk);
        for (int d = 0; d < nd; d++)
            gcut_grid_set_dir(residual, d, gcut_grid_dir_cdata(grid, d));
    }
    {
        int64_t *r = malloc((size_t)n * sizeof *r);
        memcpy(r, e, (size_t)n * sizeof *r);
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) {
                const int64_t i = y * W + x;
                for (int d = 0; d < nd && r[i] > 0; d++) {
                    const int64_t yy = y + off[d][0], xx = x + off[d][1];
                    if (yy < 0 || yy >= H || xx < 0 || xx >= W)
                        continue;
                    const int64_t j = yy * W + xx, c = gcut_grid_dir_cdata(grid, d)[i];
                    if (r[j] >= 0 || c <= 0)
                        continue;
                    int64_t p = r[i] < c ? r[i] : c;
                    if (p > -r[j])
                        p = -r[j];
                    r[i] -= p, r[j] += p, greedy += p;
                    if (residual != NULL) { /* the pushes applied: s_i, t_j and the arc pair */
                        gcut_grid_terminal_data(residual, 0)[i] -= (int32_t)p;
                        gcut_grid_terminal_data(residual, 1)[j] -= (int32_t)p;
                        gcut_grid_dir_data(residual, d)[i] -= (int32_t)p;
                        gcut_grid_dir_data(residual, d ^ 1)[j] += (int32_t)p;
                    }
                }
            }
        free(r);
    }
    printf("greedy one-arc pushes: %" PRId64 " = %.1f%% of the flow through neighbour arcs\n",
           greedy, 100.0 * (double)greedy / (double)(flow - common > 0 ? flow - common : 1));

    if (residual != NULL) {
        int64_t rf = 0;
        t0 = now_ms();
        st = gcut_grid_solve(residual, &opt, &rf, lab, &stats);
        printf("after the pushes: bk %.1f ms, %" PRId64 " augmentations, flow %" PRId64
               " + %" PRId64 " = %" PRId64 " (%s)\n",
               now_ms() - t0, stats.augmentations, rf, greedy, rf + greedy,
               st == GCUT_OK && rf + greedy == flow ? "equal" : "DIFFERENT");
        gcut_grid_free(grid);
        grid = residual;
        src = gcut_grid_terminal_cdata(grid, 0);
        snk = gcut_grid_terminal_cdata(grid, 1);
        flow -= greedy;
    }
    /* Each tile alone (its arcs to other tiles dropped): Phase A's flow. */
    int64_t alone = 0, worst = 0;
    double tile_ms_sum = 0, tile_ms_max = 0;
    int64_t worst_aug = 0;
    for (int a = 0; a < ty; a++)
        for (int b = 0; b < tx; b++) {
            const int64_t y0 = a * H / ty, y1 = (a + 1) * H / ty, x0 = b * W / tx,
                          x1 = (b + 1) * W / tx, h = y1 - y0, w = x1 - x0;
            const int64_t sh[2] = {h, w};
            gcut_grid *g = NULL;
            if (gcut_grid_create(2, sh, conn, &g) != GCUT_OK) {
                fprintf(stderr, "grid_energy: %s\n", gcut_last_error());
                return 1;
            }
            int32_t *gs = gcut_grid_terminal_data(g, 0), *gt = gcut_grid_terminal_data(g, 1);
            for (int64_t y = 0; y < h; y++)
                for (int64_t x = 0; x < w; x++) {
                    gs[y * w + x] = src[(y0 + y) * W + x0 + x];
                    gt[y * w + x] = snk[(y0 + y) * W + x0 + x];
                }
            for (int d = 0; d < nd; d++) {
                int32_t *gc = gcut_grid_dir_data(g, d);
                const int32_t *c = gcut_grid_dir_cdata(grid, d);
                for (int64_t y = 0; y < h; y++)
                    for (int64_t x = 0; x < w; x++)
                        gc[y * w + x] = c[(y0 + y) * W + x0 + x];
            }
            uint8_t *l = malloc((size_t)(h * w));
            int64_t f = 0;
            gcut_stats s2;
            t0 = now_ms();
            st = gcut_grid_solve(g, &opt, &f, l, &s2);
            const double ms = now_ms() - t0;
            if (st != GCUT_OK) {
                fprintf(stderr, "grid_energy: %s\n", gcut_last_error());
                return 1;
            }
            tile_ms_sum += ms;
            printf("%s%7.1f%s", b == 0 ? "tile ms " : "", ms, b == tx - 1 ? "\n" : "");
            if (ms > tile_ms_max)
                tile_ms_max = ms, worst = a * tx + b, worst_aug = s2.augmentations;
            alone += f;
            free(l);
            gcut_grid_free(g);
        }
    printf("tiles alone: flow %" PRId64 " = %.1f%% of the maximum flow (%.1f%% of the flow "
           "through neighbour arcs); left for the merges %" PRId64 "\n",
           alone, 100.0 * (double)alone / (double)flow,
           100.0 * (double)(alone - common) / (double)(flow - common > 0 ? flow - common : 1),
           flow - alone);
    printf("tiles alone: bk %.1f ms in all, slowest tile %" PRId64 " %.1f ms (%" PRId64
           " augmentations), mean %.1f ms (single thread)\n",
           tile_ms_sum, worst, tile_ms_max, worst_aug, tile_ms_sum / (ty * tx));
    free(e);
    free(tmp);
    free(lab);
    gcut_grid_free(grid);
    return 0;
}
