/* fuzz_common.h - what the libFuzzer harnesses of tests/fuzz share: the input bytes handed to
 * a reader as a file (readers take paths), a small memory cap so that a header asking for
 * gigabytes fails fast, and a crash (which the fuzzer and the replay test both report) when a
 * solved problem's cut certificate does not hold. */
#ifndef GCUT_FUZZ_COMMON_H
#define GCUT_FUZZ_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "gcut.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Memory any one input may make gcut hold: small enough that absurd headers fail at once. */
#define FUZZ_MEMORY_LIMIT ((uint64_t)64 << 20)

/* A path whose file holds exactly data: an in-memory file where the system has memfd_create,
 * else a file in TMPDIR (both reused across inputs). NULL when the file cannot be made. */
static char fuzz_temp_paths[2][4096];
static void fuzz_remove_temps(void) {
    for (int k = 0; k < 2; k++)
        if (fuzz_temp_paths[k][0] != '\0')
            unlink(fuzz_temp_paths[k]);
}

/* File `slot` (0: the input, 1: scratch for a writer), holding data (size bytes; none for
 * NULL). @return its path, NULL when it cannot be made. */
static const char *fuzz_file(int slot, const uint8_t *data, size_t size) {
    static int fds[2] = {-1, -1};
    static char paths[2][4096];
    if (fds[slot] < 0) {
        gcut_set_memory_limit(FUZZ_MEMORY_LIMIT);
#if defined(__linux__) && defined(MFD_CLOEXEC)
        fds[slot] = memfd_create("gcut-fuzz", MFD_CLOEXEC);
        if (fds[slot] >= 0)
            snprintf(paths[slot], sizeof paths[slot], "/proc/self/fd/%d", fds[slot]);
#endif
        if (fds[slot] < 0) {
            const char *dir = getenv("TMPDIR");
            snprintf(fuzz_temp_paths[slot], sizeof fuzz_temp_paths[slot], "%s/gcut-fuzz-XXXXXX",
                     dir ? dir : "/tmp");
            fds[slot] = mkstemp(fuzz_temp_paths[slot]);
            if (fds[slot] < 0)
                return NULL;
            snprintf(paths[slot], sizeof paths[slot], "%s", fuzz_temp_paths[slot]);
            atexit(fuzz_remove_temps);
        }
    }
    if (ftruncate(fds[slot], 0) != 0)
        return NULL;
    if (data != NULL && pwrite(fds[slot], data, size, 0) != (ssize_t)size)
        return NULL;
    return paths[slot];
}

/* The input bytes as a file a reader can open. */
static const char *fuzz_input_path(const uint8_t *data, size_t size) {
    return fuzz_file(0, data, size);
}

/* gcut_alloc() as an expression: NULL when over the fuzzing cap. */
static inline void *fuzz_alloc(size_t bytes, const char *what) {
    void *block = NULL;
    return gcut_alloc(bytes, what, &block) == GCUT_OK ? block : NULL;
}

/* GCUT_FUZZ_VERBOSE=1 says what each input became (replay runs; too slow while fuzzing). */
static int fuzz_verbose(void) {
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("GCUT_FUZZ_VERBOSE") != NULL;
    return verbose;
}

/* A broken certificate is a bug: crash so that the fuzzer keeps the input. */
static void fuzz_require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "gcut fuzz: %s: %s\n", what, gcut_last_error());
        abort();
    }
}

#endif /* GCUT_FUZZ_COMMON_H */
