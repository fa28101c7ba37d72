/* qpbo_kolmogorov_drv.c - Kolmogorov's QPBO v1.4 (the copy compiled into thinqpbo's extension
 * module, GPL, never linked into gcut) driven from C on in-memory terms, so that its graph build
 * (constructor, AddNode, AddUnaryTerm, AddPairwiseTerm: the loop a C++ user writes) is timed
 * apart from any file parsing, next to Solve() and ComputeWeakPersistencies().
 *
 * Built as a shared object by bench/qpbo_kolmogorov.py (cc -shared; the executable CMake also
 * makes from this file only prints where it belongs) and called through ctypes inside the
 * Python process that imported thinqpbo: the module is already loaded there, so dlopen with
 * RTLD_NOLOAD finds it and dlsym its exported QPBO<int> members (Itanium C++ ABI: a member
 * function is a C function whose first argument is `this`). The energy comes from a binary
 * file bench/qpbo_objects writes (read whole before any timing):
 *   "GQK1", int64 n, int64 nu, int64 m, nu x int32 {node, E0, E1}, m x int32 {i, j, E00, E01,
 *   E10, E11}, 0-based, as Kolmogorov's AddUnaryTerm / AddPairwiseTerm take them. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*ctor_fn)(void *self, int nodes, long long edges, void (*err)(const char *));
typedef void (*dtor_fn)(void *self);
typedef int (*add_node_fn)(void *self, int num);
typedef void (*add_unary_fn)(void *self, int i, int e0, int e1);
typedef long long (*add_pair_fn)(void *self, int i, int j, int e00, int e01, int e10, int e11);
typedef void (*void_fn)(void *self);
typedef int (*int_fn)(void *self);
typedef int (*label_fn)(void *self, int i);

/* Kolmogorov's QPBO<int> object is a few hundred bytes; this is room to spare. */
enum { QPBO_OBJECT_ROOM = 1 << 16 };

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static void on_error(const char *msg) {
    fprintf(stderr, "qpbo_kolmogorov_drv: Kolmogorov's QPBO: %s\n", msg);
    exit(1);
}

static long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * 4096;
}

/** Solve the energy in `path` with the QPBO<int> of the loaded module `module` (its file
 *  path). Writes one int8 label per node (-1 unlabeled) to labels_out, and prints to stdout
 *  `c build_ms`, `c solve_ms`, `c weak_ms`, `c rss_bytes`, `c labeled K of N`,
 *  `c lower_bound LB`. @return 0, or a message on stderr and nonzero. */
int qpbo_kolmogorov_run(const char *module, const char *path, const char *labels_out) {
    void *h = dlopen(module, RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL) {
        fprintf(stderr, "qpbo_kolmogorov_drv: %s is not loaded (%s)\n", module, dlerror());
        return 1;
    }
    ctor_fn ctor = NULL;
    dtor_fn dtor = NULL;
    add_node_fn add_node = NULL;
    add_unary_fn add_unary = NULL;
    add_pair_fn add_pair = NULL;
    void_fn solve = NULL, weak = NULL;
    int_fn twice_lb = NULL;
    label_fn get_label = NULL;
    /* dlsym's object pointer copied into a function pointer (ISO C has no cast between them;
     * POSIX guarantees the representation) */
#define QK_LOAD(fn, name)                                                                          \
    do {                                                                                           \
        void *at = dlsym(h, name);                                                                 \
        _Static_assert(sizeof at == sizeof fn, "function and object pointers differ in size");     \
        memcpy(&fn, &at, sizeof fn);                                                               \
    } while (0)
    QK_LOAD(ctor, "_ZN4QPBOIiEC1EixPFvPKcE");
    QK_LOAD(dtor, "_ZN4QPBOIiED1Ev");
    QK_LOAD(add_node, "_ZN4QPBOIiE7AddNodeEi");
    QK_LOAD(add_unary, "_ZN4QPBOIiE12AddUnaryTermEiii");
    QK_LOAD(add_pair, "_ZN4QPBOIiE15AddPairwiseTermEiiiiii");
    QK_LOAD(solve, "_ZN4QPBOIiE5SolveEv");
    QK_LOAD(weak, "_ZN4QPBOIiE24ComputeWeakPersistenciesEv");
    QK_LOAD(twice_lb, "_ZN4QPBOIiE22ComputeTwiceLowerBoundEv");
    QK_LOAD(get_label, "_ZN4QPBOIiE8GetLabelEi");
#undef QK_LOAD
    if (!ctor || !dtor || !add_node || !add_unary || !add_pair || !solve || !weak || !twice_lb ||
        !get_label) {
        fprintf(stderr, "qpbo_kolmogorov_drv: %s lacks a QPBO<int> member this driver calls\n",
                module);
        return 1;
    }
    FILE *f = fopen(path, "rb");
    char magic[4];
    int64_t head[3];
    if (f == NULL || fread(magic, 1, 4, f) != 4 || memcmp(magic, "GQK1", 4) != 0 ||
        fread(head, sizeof head[0], 3, f) != 3 || head[0] < 0 || head[0] > INT32_MAX ||
        head[1] < 0 || head[2] < 0) {
        fprintf(stderr, "qpbo_kolmogorov_drv: %s is not a GQK1 energy\n", path);
        if (f)
            fclose(f);
        return 1;
    }
    const int64_t n = head[0], nu = head[1], m = head[2];
    int32_t *un = malloc((size_t)nu * 3 * sizeof(int32_t) + 4);
    int32_t *te = malloc((size_t)m * 6 * sizeof(int32_t) + 4);
    int8_t *labels = malloc((size_t)n + 1);
    void *q = calloc(1, QPBO_OBJECT_ROOM);
    if (!un || !te || !labels || !q || fread(un, 12, (size_t)nu, f) != (size_t)nu ||
        fread(te, 24, (size_t)m, f) != (size_t)m) {
        fprintf(stderr, "qpbo_kolmogorov_drv: cannot read %s\n", path);
        fclose(f);
        return 1;
    }
    fclose(f);
    const long before = rss_bytes();
    const double t0 = now_ms();
    ctor(q, (int)n, (long long)m, on_error);
    add_node(q, (int)n);
    for (int64_t k = 0; k < nu; k++)
        add_unary(q, un[3 * k], un[3 * k + 1], un[3 * k + 2]);
    for (int64_t k = 0; k < m; k++) {
        const int32_t *t = te + 6 * k;
        add_pair(q, t[0], t[1], t[2], t[3], t[4], t[5]);
    }
    const double t1 = now_ms();
    solve(q);
    const double t2 = now_ms();
    weak(q);
    const double t3 = now_ms();
    const long grown = rss_bytes() - before;
    int64_t labeled = 0;
    for (int64_t i = 0; i < n; i++) {
        int x = get_label(q, (int)i);
        labels[i] = (int8_t)(x == 0 || x == 1 ? x : -1);
        labeled += x == 0 || x == 1;
    }
    const int twice = twice_lb(q);
    dtor(q);
    printf("c build_ms %.1f\nc solve_ms %.1f\nc weak_ms %.1f\nc rss_bytes %ld\n", t1 - t0, t2 - t1,
           t3 - t2, grown);
    printf("c labeled %lld of %lld\nc lower_bound %lld\n", (long long)labeled, (long long)n,
           (long long)(twice >= 0 ? (twice + 1) / 2 : -((-twice) / 2)));
    fflush(stdout);
    int rc = 0;
    if (labels_out != NULL) {
        FILE *o = fopen(labels_out, "wb");
        rc = o == NULL || fwrite(labels, 1, (size_t)n, o) != (size_t)n;
        if (o != NULL && fclose(o) != 0)
            rc = 1;
    }
    free(un);
    free(te);
    free(labels);
    free(q);
    return rc;
}

#ifndef QPBO_KOLMOGOROV_DRV_LIB
int main(void) {
    fprintf(stderr, "qpbo_kolmogorov_drv: a shared object for bench/qpbo_kolmogorov.py, which "
                    "compiles and loads it (this executable does nothing)\n");
    return 2;
}
#endif
