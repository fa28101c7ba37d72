/* util_common.c - seeds, RNG and the summary line shared by the gcut tests. */
#include "util_common.h"

int test_failures = 0;

uint64_t test_seed(void) {
    static int printed = 0;
    static uint64_t seed = 20261122u;
    if (!printed) {
        const char *env = getenv("GCUT_TEST_SEED");
        if (env != NULL && *env != '\0')
            seed = strtoull(env, NULL, 0);
        printf("seed %llu (replay with GCUT_TEST_SEED=%llu)\n", (unsigned long long)seed,
               (unsigned long long)seed);
        printed = 1;
    }
    return seed;
}

void test_rng_init(test_rng *rng, uint64_t seed) {
    rng->state = seed;
}

uint64_t test_rng_next(test_rng *rng) {
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t test_rng_range(test_rng *rng, int64_t lo, int64_t hi) {
    uint64_t span = (uint64_t)(hi - lo) + 1u;
    if (span == 0)
        return (int64_t)test_rng_next(rng);
    return lo + (int64_t)(test_rng_next(rng) % span);
}

int test_finish(const char *name, int checks_passed) {
    printf("%s: %d passed, %d failed\n", name, checks_passed, test_failures);
    return test_failures == 0 ? 0 : 1;
}
