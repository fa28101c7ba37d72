/* util_common.h - what every gcut test shares: a replayable seed (GCUT_TEST_SEED), a small
 * fast RNG, check macros that count failures, and the GPU-skip convention (exit 77). */
#ifndef GCUT_UTIL_COMMON_H
#define GCUT_UTIL_COMMON_H

#include "gcut.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/** Exit code ctest reads as "skipped" (no GPU, no optional dependency). */
#define TEST_SKIP 77

/** Failures counted so far by CHECK*. */
extern int test_failures;

/** The run's seed: GCUT_TEST_SEED if set, else a fixed default; printed once so a failure
 *  can be replayed with GCUT_TEST_SEED=... */
uint64_t test_seed(void);

/** splitmix64 generator state. */
typedef struct test_rng {
    uint64_t state;
} test_rng;

void test_rng_init(test_rng *rng, uint64_t seed);
uint64_t test_rng_next(test_rng *rng);
/** Uniform integer in [lo, hi] (inclusive). */
int64_t test_rng_range(test_rng *rng, int64_t lo, int64_t hi);

/** Print a summary line ("N passed, N failed") and return the process exit code. */
int test_finish(const char *name, int checks_passed);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_I64(a, b)                                                                         \
    do {                                                                                           \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                            \
        if (check_a_ != check_b_) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__,  \
                    #a, #b, check_a_, check_b_);                                                   \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_OK(expr)                                                                             \
    do {                                                                                           \
        gcut_status check_st_ = (expr);                                                            \
        if (check_st_ != GCUT_OK) {                                                                \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr,              \
                    gcut_status_name(check_st_), gcut_last_error());                               \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

/** A check that adds one to the counter `passed_counter` when `cond` holds, or prints its
 *  line and counts a failure (the tests that report passed checks in test_finish). */
#define CHECK_COUNT(passed_counter, cond)                                                          \
    do {                                                                                           \
        if (cond) {                                                                                \
            (passed_counter)++;                                                                    \
        } else {                                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#endif /* GCUT_UTIL_COMMON_H */
