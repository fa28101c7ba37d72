/* fuzz_image.c - libFuzzer harness of the image reader (PNG, JPEG, PGM/PPM, by magic bytes): an
 * image that parses and is small is segmented from two seeds (first pixel foreground, last
 * background): its grid is solved with bk, the cut certificate checked and the seeds kept. */
#include "fuzz_common.h"

/* Larger images are only parsed: solving them would slow the fuzzer, not test the reader. */
#define FUZZ_MAX_PIXELS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_input_path(data, size);
    if (path == NULL)
        return 0;
    gcut_image image = {0};
    if (gcut_image_read(path, &image) != GCUT_OK)
        return 0;
    if (fuzz_verbose())
        fprintf(stderr, "image: %lldx%lld\n", (long long)image.width, (long long)image.height);
    int64_t n = image.width * image.height * image.depth;
    fuzz_require(image.width >= 1 && image.height >= 1 && image.depth >= 1 && image.pixels != NULL,
                 "reader returned an empty image");
    if (n >= 2 && n <= FUZZ_MAX_PIXELS) {
        uint8_t seeds[FUZZ_MAX_PIXELS], labels[FUZZ_MAX_PIXELS];
        memset(seeds, GCUT_SEED_UNKNOWN, (size_t)n);
        seeds[0] = GCUT_SEED_FOREGROUND;
        seeds[n - 1] = GCUT_SEED_BACKGROUND;
        gcut_grid *grid = NULL;
        gcut_seg_params params; /* histograms: GMM fitting would slow the fuzzer 10x */
        gcut_seg_params_init(&params);
        params.model = GCUT_MODEL_HISTOGRAM;
        params.histogram_bins = 16;
        if (gcut_seg_build_grid(&image, seeds, &params, &grid, NULL) == GCUT_OK) {
            gcut_options opt;
            gcut_options_init(&opt);
            opt.solver = "bk";
            int64_t flow = -1;
            fuzz_require(gcut_grid_solve(grid, &opt, &flow, labels, NULL) == GCUT_OK, "bk");
            fuzz_require(gcut_grid_verify(grid, labels, flow, NULL) == GCUT_OK, "cut certificate");
            fuzz_require(labels[0] == GCUT_SOURCE && labels[n - 1] == GCUT_SINK, "seeds kept");
        }
        gcut_grid_free(grid);
    }
    gcut_image_free(&image);
    return 0;
}
