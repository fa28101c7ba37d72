/* band_volgen.c - a large synthetic 8-bit gray volume and its seeds as raw files, generated on
 * every core (docs/BAND.md, "Volumes larger than the GPU"): `gcut gen synth` draws its noise
 * from one sequential generator, which takes minutes at 1536^3; here each voxel's noise is a hash
 * of its index, so slabs are made in parallel. Ellipsoids (one central, 6 more at random places)
 * on a background: foreground mean 150, background 90, noise the sum of four uniform draws
 * (standard deviation about 17 for "easy", 30 for "hard"). Seeds as `gcut gen synth` places
 * them: foreground in a central cube of side/16, background in the corner cube of side/8.
 * Usage: band_volgen SIDE VOLUME.raw SEEDS.raw [easy|hard] [seed] */
#define _POSIX_C_SOURCE 200809L

#include "gcut.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    double c[3], r[3];
} ellipsoid;

typedef struct {
    int64_t n;
    int noise;
    uint64_t seed;
    ellipsoid e[7];
    uint8_t *vol, *seeds;
    int64_t next;
    pthread_mutex_t lock;
} job;

static uint64_t mix(uint64_t x) { /* splitmix64's finaliser */
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void slab(job *j, int64_t z) {
    const int64_t n = j->n, fs = n / 32 > 0 ? n / 32 : 1, bs = n / 8 > 0 ? n / 8 : 1;
    for (int64_t y = 0; y < n; y++) {
        uint8_t *row = j->vol + (z * n + y) * n, *srow = j->seeds + (z * n + y) * n;
        memset(row, 0, (size_t)n);
        for (int k = 0; k < 7; k++) { /* mark the ellipsoid's span of this row */
            const ellipsoid *e = &j->e[k];
            const double dz = (z - e->c[0]) / e->r[0], dy = (y - e->c[1]) / e->r[1];
            const double q = 1.0 - dz * dz - dy * dy;
            if (q <= 0)
                continue;
            double half = e->r[2], x0, x1;
            for (int it = 0; it < 40; it++) /* half = r2 * sqrt(q) without libm */
                half = 0.5 * (half + e->r[2] * e->r[2] * q / half);
            x0 = e->c[2] - half, x1 = e->c[2] + half;
            for (int64_t x = x0 < 0 ? 0 : (int64_t)x0 + 1; x <= x1 && x < n; x++)
                row[x] = 1;
        }
        for (int64_t x = 0; x < n; x++) {
            const uint64_t h = mix(j->seed ^ (uint64_t)((z * n + y) * n + x));
            const int u = (int)(h & 0xFF) + (int)((h >> 8) & 0xFF) + (int)((h >> 16) & 0xFF) +
                          (int)((h >> 24) & 0xFF) - 510; /* about -510..510, sd 147 */
            int v = (row[x] ? 150 : 90) + u * j->noise / 147;
            row[x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            const bool fg = z >= n / 2 - fs && z < n / 2 + fs && y >= n / 2 - fs &&
                            y < n / 2 + fs && x >= n / 2 - fs && x < n / 2 + fs;
            const bool bg = z < bs && y < bs && x < bs;
            srow[x] = fg ? GCUT_SEED_FOREGROUND : bg ? GCUT_SEED_BACKGROUND : GCUT_SEED_UNKNOWN;
        }
    }
}

static void *worker(void *arg) {
    job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        const int64_t z = j->next++;
        pthread_mutex_unlock(&j->lock);
        if (z >= j->n)
            return NULL;
        slab(j, z);
    }
}

static int write_all(const char *path, const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "band_volgen: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: band_volgen SIDE VOLUME.raw SEEDS.raw [easy|hard] [seed]\n");
        return 2;
    }
    static job j;
    j.n = atoll(argv[1]);
    j.noise = argc > 4 && strcmp(argv[4], "hard") == 0 ? 30 : 17;
    j.seed = argc > 5 ? (uint64_t)atoll(argv[5]) : 1;
    if (j.n < 8 || j.n > 4096) {
        fprintf(stderr, "band_volgen: SIDE must be in 8..4096\n");
        return 2;
    }
    const double n = (double)j.n;
    uint64_t s = j.seed * 0x5EEDull;
    for (int k = 0; k < 7; k++)
        for (int a = 0; a < 3; a++) {
            s = mix(s);
            const double u = (double)(s >> 11) / 9007199254740992.0;
            s = mix(s);
            const double v = (double)(s >> 11) / 9007199254740992.0;
            j.e[k].c[a] = k == 0 ? n / 2 : n * (0.25 + 0.6 * u);
            j.e[k].r[a] = k == 0 ? n * (0.22 + 0.06 * v) : n * (0.04 + 0.12 * v);
        }
    const size_t size = (size_t)j.n * (size_t)j.n * (size_t)j.n;
    j.vol = malloc(size);
    j.seeds = malloc(size);
    if (j.vol == NULL || j.seeds == NULL) {
        fprintf(stderr, "band_volgen: out of memory (%zu bytes twice)\n", size);
        return 1;
    }
    pthread_mutex_init(&j.lock, NULL);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
    pthread_t ids[64];
    for (int t = 0; t < threads; t++)
        pthread_create(&ids[t], NULL, worker, &j);
    for (int t = 0; t < threads; t++)
        pthread_join(ids[t], NULL);
    int st = write_all(argv[2], j.vol, size) | write_all(argv[3], j.seeds, size);
    printf("band_volgen: %" PRId64 "^3 %s seed %" PRIu64 " -> %s, %s\n", j.n,
           j.noise == 30 ? "hard" : "easy", j.seed, argv[2], argv[3]);
    free(j.vol), free(j.seeds);
    return st;
}
