/* fuzz_seeds.c - libFuzzer harness of seed masks: the bytes are read as an image and decoded
 * with each seed encoding (gcut, grabcut, color); for the first encoding that gives a small
 * mask seeds of both kinds, a synthetic gray ramp of its size is segmented and the result
 * must keep every seed. */
#include "fuzz_common.h"

#define FUZZ_MAX_PIXELS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_input_path(data, size);
    if (path == NULL)
        return 0;
    gcut_image mask = {0};
    if (gcut_image_read(path, &mask) != GCUT_OK)
        return 0;
    if (fuzz_verbose())
        fprintf(stderr, "mask: %lldx%lld\n", (long long)mask.width, (long long)mask.height);
    int64_t n = mask.width * mask.height * mask.depth;
    static const gcut_seed_encoding encodings[] = {GCUT_SEEDS_GCUT, GCUT_SEEDS_GRABCUT,
                                                   GCUT_SEEDS_COLOR};
    if (n >= 1 && n <= FUZZ_MAX_PIXELS && mask.depth == 1) {
        uint8_t seeds[FUZZ_MAX_PIXELS], result[FUZZ_MAX_PIXELS], ramp[FUZZ_MAX_PIXELS];
        for (int64_t i = 0; i < n; i++)
            ramp[i] = (uint8_t)(i * 255 / (n > 1 ? n - 1 : 1));
        gcut_image image = {mask.width, mask.height, 1, 1, 8, ramp};
        for (size_t e = 0; e < sizeof encodings / sizeof encodings[0]; e++) {
            if (gcut_seeds_from_mask(&mask, encodings[e], seeds) != GCUT_OK)
                continue;
            int fg = 0, bg = 0;
            for (int64_t i = 0; i < n; i++) {
                fuzz_require(seeds[i] <= GCUT_SEED_BACKGROUND, "seed code out of range");
                fg += seeds[i] == GCUT_SEED_FOREGROUND;
                bg += seeds[i] == GCUT_SEED_BACKGROUND;
            }
            if (fg == 0 || bg == 0)
                continue;
            gcut_options opt;
            gcut_options_init(&opt);
            opt.solver = "bk";
            gcut_status st = gcut_segment(&image, seeds, NULL, &opt, result, NULL);
            fuzz_require(st == GCUT_OK, "segmentation of a valid mask failed");
            for (int64_t i = 0; i < n; i++)
                fuzz_require(seeds[i] == GCUT_SEED_UNKNOWN ||
                                 (result[i] == 1) == (seeds[i] == GCUT_SEED_FOREGROUND),
                             "a seed was not kept");
            break; /* one segmentation an input: the solve dominates the fuzzer's time */
        }
    }
    gcut_image_free(&mask);
    return 0;
}
