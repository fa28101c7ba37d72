/* qpbo_faults.c - what the first touch of fresh memory costs on this machine (docs/QPBO.md,
 * "Where pqpbo's time goes"): gcut's QPBO build writes a few hundred MB of new arrays, and
 * each page's first write is a page fault the kernel (or a sandbox's user-space kernel) serves.
 * Times, for one block of --mb MB: a write per 4 KB page on 1, 4, 16 threads (each its own
 * slice), the same after MADV_HUGEPAGE, one madvise(MADV_POPULATE_WRITE) call, one
 * mmap(MAP_POPULATE), and a second pass over memory already touched (no faults).
 *
 * usage: qpbo_faults [--mb 512] [--repeats 3]   (medians; prints a markdown table) */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

typedef struct slice {
    volatile char *p;
    size_t begin, end;
} slice;

static void *touch(void *arg) {
    slice *s = arg;
    for (size_t i = s->begin; i < s->end; i += 4096)
        s->p[i] = 1;
    return NULL;
}

static void touch_threads(char *p, size_t bytes, int threads) {
    pthread_t ids[64];
    slice s[64];
    for (int t = 0; t < threads; t++)
        s[t] = (slice){p, bytes * (size_t)t / (size_t)threads,
                       bytes * (size_t)(t + 1) / (size_t)threads};
    for (int t = 1; t < threads; t++)
        pthread_create(&ids[t], NULL, touch, &s[t]);
    touch(&s[0]);
    for (int t = 1; t < threads; t++)
        pthread_join(ids[t], NULL);
}

static char *fresh(size_t bytes, int flags) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    size_t mb = 512;
    int repeats = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--mb") == 0)
            mb = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--repeats") == 0)
            repeats = atoi(argv[i + 1]);
    }
    if (mb < 1 || repeats < 1 || repeats > 15) {
        fprintf(stderr, "usage: qpbo_faults [--mb 512] [--repeats 3<=15]\n");
        return 2;
    }
    const size_t bytes = mb << 20;
    const char *names[] = {"touch 1 thread",    "touch 4 threads",        "touch 16 threads",
                           "huge, 1 thread",    "huge, 16 threads",       "POPULATE_WRITE (1 call)",
                           "MAP_POPULATE mmap", "touched again, 1 thread"};
    enum { CASES = 8 };
    double ms[CASES][15];
    int refused = 0;
    for (int r = 0; r < repeats; r++)
        for (int c = 0; c < CASES; c++) {
            char *p = fresh(bytes, c == 6 ? MAP_POPULATE : 0);
            if (p == NULL) {
                fprintf(stderr, "qpbo_faults: mmap of %zu MB failed\n", mb);
                return 1;
            }
            if (c == 3 || c == 4)
                (void)madvise(p, bytes, MADV_HUGEPAGE);
            if (c == 7)
                touch_threads(p, bytes, 1);
            double t0 = now_ms();
            if (c == 6) {
                char *q = fresh(bytes, MAP_POPULATE);
                ms[c][r] = now_ms() - t0;
                if (q != NULL)
                    munmap(q, bytes);
                munmap(p, bytes);
                continue;
            }
            if (c == 5) {
                if (madvise(p, bytes, 23 /* MADV_POPULATE_WRITE */) != 0)
                    refused = 1;
            } else {
                touch_threads(p, bytes, c == 1 ? 4 : (c == 2 || c == 4) ? 16 : 1);
            }
            ms[c][r] = now_ms() - t0;
            munmap(p, bytes);
        }
    printf("first touch of %zu MB (one write per 4 KB page), medians of %d\n\n", mb, repeats);
    printf("| case | ms | ns per 4 KB page |\n|---|---:|---:|\n");
    for (int c = 0; c < CASES; c++) {
        qsort(ms[c], (size_t)repeats, sizeof(double), cmp);
        double m = ms[c][repeats / 2];
        printf("| %s%s | %.1f | %.0f |\n", names[c],
               c == 5 && refused ? " (refused: no pages mapped)" : "", m,
               1e6 * m / (double)(bytes / 4096));
    }
    return 0;
}
