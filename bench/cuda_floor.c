/* cuda_floor.c - the floor under one `gcut segment` process on a GPU host (issue #17's 250 ms
 * bar; docs/CUDA-GRID.md, "Segmentation process time"): what a process that only starts CUDA,
 * or also holds buffers the size of a 1080p cut, costs from fork to exit. Through the driver
 * API opened with dlopen, so it builds everywhere; with -DCUDA_FLOOR_RUNTIME (nvcc -x cu)
 * through the runtime (cudaFree(0)), as gcut does. Time whole runs with bench/walltime. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef CUDA_FLOOR_RUNTIME
#include <cuda_runtime_api.h>
#endif

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t t0_ns, main_ns; /* GCUT_T0_NS (walltime's fork), main's entry */

static void mark(const char *event) {
    const int64_t t = now_ns();
    fprintf(stderr, "floor %8.1f ms from fork %8.1f ms from main  %s\n",
            t0_ns ? (double)(t - t0_ns) / 1e6 : -1.0, (double)(t - main_ns) / 1e6, event);
}

static void *fill(void *arg) {
    char *block = (char *)malloc((size_t)1 << 20);
    if (block != NULL)
        memset(block, 1, (size_t)1 << 20);
    free(block);
    return arg;
}

static void at_exit_last(void) {
    mark("last atexit handler (CUDA's own tear-down done)");
}

static void usage(void) {
    fputs("usage: cuda_floor MODE [DEVICE_MB HOST_MB]\n"
          "MODE: none | init | ctx | alloc, each optionally with -exit (end with _exit(0)\n"
          "after flushing, skipping atexit handlers), -release (release the context\n"
          "before returning) or -threads (start and join 16 threads that each fill 1 MB\n"
          "before returning, as gcut's mask writer does; to see whether threads change\n"
          "the exit). alloc also takes DEVICE_MB of device memory (default 400) and\n"
          "HOST_MB of pinned host memory (default 48) and touches them.\n",
          stderr);
}

#ifdef CUDA_FLOOR_RUNTIME
static int start(int level, size_t device_bytes, size_t host_bytes, int release) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        fprintf(stderr, "cuda_floor: no CUDA device\n");
        return 1;
    }
    mark("cudaGetDeviceCount (driver start-up)");
    if (level < 2)
        return 0;
    if (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess)
        return 1;
    mark("cudaFree(0) (primary context)");
    if (level >= 3) {
        void *d = NULL, *h = NULL;
        if (cudaMalloc(&d, device_bytes) != cudaSuccess ||
            cudaHostAlloc(&h, host_bytes, cudaHostAllocDefault) != cudaSuccess)
            return 1;
        memset(h, 1, host_bytes);
        cudaMemset(d, 0, device_bytes);
        cudaMemcpy(d, h, host_bytes < device_bytes ? host_bytes : device_bytes,
                   cudaMemcpyHostToDevice);
        cudaDeviceSynchronize();
        mark("buffers allocated and touched");
    }
    if (release) {
        cudaDeviceReset();
        mark("cudaDeviceReset");
    }
    return 0;
}
#else
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_retain_fn)(void **, int);
typedef int (*cu_release_fn)(int);
typedef int (*cu_set_current_fn)(void *);
typedef int (*cu_mem_alloc_fn)(uint64_t *, size_t);
typedef int (*cu_host_alloc_fn)(void **, size_t, unsigned);
typedef int (*cu_memset_fn)(uint64_t, unsigned char, size_t);
typedef int (*cu_memcpy_fn)(uint64_t, const void *, size_t);

/* A function pointer from dlsym without ISO C's object-to-function pointer cast. */
#define SYMBOL(fn, name)                                                                           \
    do {                                                                                           \
        void *symbol_ = dlsym(lib, name);                                                          \
        memcpy(&(fn), &symbol_, sizeof symbol_);                                                   \
    } while (0)

static int start(int level, size_t device_bytes, size_t host_bytes, int release) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr, "cuda_floor: no CUDA driver here (%s)\n", dlerror());
        return 1;
    }
    mark("dlopen libcuda.so.1");
    cu_init_fn init = NULL;
    cu_device_get_fn device_get = NULL;
    cu_retain_fn retain = NULL;
    cu_release_fn release_ctx = NULL;
    cu_set_current_fn set_current = NULL;
    cu_mem_alloc_fn mem_alloc = NULL;
    cu_host_alloc_fn host_alloc = NULL;
    cu_memset_fn memset_d8 = NULL;
    cu_memcpy_fn copy_htod = NULL;
    SYMBOL(init, "cuInit");
    SYMBOL(device_get, "cuDeviceGet");
    SYMBOL(retain, "cuDevicePrimaryCtxRetain");
    SYMBOL(release_ctx, "cuDevicePrimaryCtxRelease_v2");
    SYMBOL(set_current, "cuCtxSetCurrent");
    SYMBOL(mem_alloc, "cuMemAlloc_v2");
    SYMBOL(host_alloc, "cuMemHostAlloc");
    SYMBOL(memset_d8, "cuMemsetD8_v2");
    SYMBOL(copy_htod, "cuMemcpyHtoD_v2");
    if (!init || !device_get || !retain || !release_ctx || !set_current || !mem_alloc ||
        !host_alloc || !memset_d8 || !copy_htod) {
        fprintf(stderr, "cuda_floor: the driver lacks a function this program calls\n");
        return 1;
    }
    if (init(0) != 0) {
        fprintf(stderr, "cuda_floor: cuInit failed\n");
        return 1;
    }
    mark("cuInit (driver start-up)");
    if (level < 2)
        return 0;
    int device = 0;
    void *ctx = NULL;
    if (device_get(&device, 0) != 0 || retain(&ctx, device) != 0 || set_current(ctx) != 0) {
        fprintf(stderr, "cuda_floor: no context on device 0\n");
        return 1;
    }
    mark("cuDevicePrimaryCtxRetain (primary context)");
    if (level >= 3) {
        uint64_t d = 0;
        void *h = NULL;
        if (mem_alloc(&d, device_bytes) != 0 || host_alloc(&h, host_bytes, 0) != 0) {
            fprintf(stderr, "cuda_floor: allocation failed\n");
            return 1;
        }
        memset(h, 1, host_bytes);
        memset_d8(d, 0, device_bytes);
        copy_htod(d, h, host_bytes < device_bytes ? host_bytes : device_bytes);
        mark("buffers allocated and touched");
    }
    if (release) {
        release_ctx(device);
        mark("cuDevicePrimaryCtxRelease");
    }
    return 0;
}
#endif

int main(int argc, char **argv) {
    main_ns = now_ns();
    const char *t0 = getenv("GCUT_T0_NS");
    t0_ns = t0 != NULL ? strtoll(t0, NULL, 10) : 0;
    atexit(at_exit_last); /* registered first, so it runs last */
    mark("main");
    if (argc < 2) {
        usage();
        return 2;
    }
    char mode[32];
    snprintf(mode, sizeof mode, "%s", argv[1]);
    int quick = 0, release = 0, threads = 0;
    char *dash = strchr(mode, '-');
    if (dash != NULL) {
        quick = strcmp(dash, "-exit") == 0;
        release = strcmp(dash, "-release") == 0;
        threads = strcmp(dash, "-threads") == 0;
        if (!quick && !release && !threads) {
            usage();
            return 2;
        }
        *dash = '\0';
    }
    const int level = strcmp(mode, "none") == 0    ? 0
                      : strcmp(mode, "init") == 0  ? 1
                      : strcmp(mode, "ctx") == 0   ? 2
                      : strcmp(mode, "alloc") == 0 ? 3
                                                   : -1;
    if (level < 0) {
        usage();
        return 2;
    }
    const size_t device_mb = argc > 2 ? (size_t)atoi(argv[2]) : 400;
    const size_t host_mb = argc > 3 ? (size_t)atoi(argv[3]) : 48;
    if (level > 0 && start(level, device_mb << 20, host_mb << 20, release) != 0)
        return 1;
    if (threads) {
        pthread_t ids[16];
        for (int t = 0; t < 16; t++)
            if (pthread_create(&ids[t], NULL, fill, NULL) != 0)
                return 1;
        for (int t = 0; t < 16; t++)
            pthread_join(ids[t], NULL);
        mark("16 threads joined");
    }
    mark(quick ? "_exit" : "return from main");
    if (quick) {
        fflush(NULL);
        _exit(0);
    }
    return 0;
}
