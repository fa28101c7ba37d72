/* fuzz_image.c - libFuzzer harness of the image reader (PNG, JPEG, PGM/PPM, by magic bytes):
 * every sample of an image that parses is read; a small 2D one becomes a 4-connected grid
 * (terminals from the first channel, neighbours from sample differences), solved with bk and
 * cpu-pr (one thread) to equal flows, with bk's cut certificate checked. The segmentation
 * energy is left out: its colour tables (2^18 entries) would cost 150 ms an input under
 * coverage instrumentation, and fuzz_seeds.c covers it on gray images. */
#include "fuzz_common.h"

#define FUZZ_MAX_PIXELS 4096

static int64_t sample(const gcut_image *image, int64_t pixel, int channel) {
    int64_t k = pixel * image->channels + channel;
    return image->bit_depth == 16 ? ((const uint16_t *)image->pixels)[k]
                                  : ((const uint8_t *)image->pixels)[k];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_input_path(data, size);
    if (path == NULL)
        return 0;
    gcut_image image = {0};
    if (gcut_image_read(path, &image) != GCUT_OK)
        return 0;
    if (fuzz_verbose())
        fprintf(stderr, "image: %lldx%lld\n", (long long)image.width, (long long)image.height);
    fuzz_require(image.width >= 1 && image.height >= 1 && image.depth >= 1 &&
                     image.pixels != NULL && image.channels >= 1 && image.channels <= 4 &&
                     (image.bit_depth == 8 || image.bit_depth == 16),
                 "reader returned an impossible image");
    int64_t n = image.width * image.height * image.depth;
    /* Every sample is read (ASan sees a short pixel buffer) and within the bit depth. */
    int64_t top = image.bit_depth == 16 ? 65535 : 255, sum = 0;
    for (int64_t i = 0; i < n; i++)
        for (int c = 0; c < image.channels; c++)
            sum += sample(&image, i, c);
    fuzz_require(sum <= n * image.channels * top, "sample sum");
    if (image.depth == 1 && n <= FUZZ_MAX_PIXELS) {
        int64_t shape[2] = {image.height, image.width};
        gcut_grid *grid = NULL;
        if (gcut_grid_create(2, shape, 4, &grid) == GCUT_OK) {
            int32_t *source = gcut_grid_terminal_data(grid, GCUT_SOURCE);
            int32_t *sink = gcut_grid_terminal_data(grid, GCUT_SINK);
            for (int64_t i = 0; i < n; i++) {
                source[i] = (int32_t)sample(&image, i, 0);
                sink[i] = (int32_t)(top - sample(&image, i, 0));
            }
            for (int d = 0; d < 4; d++) {
                int32_t *cap = gcut_grid_dir_data(grid, d);
                for (int64_t i = 0; i < n; i++)
                    cap[i] = (int32_t)(1 + (sample(&image, i, image.channels - 1) & 63));
            }
            uint8_t labels[FUZZ_MAX_PIXELS];
            gcut_options opt;
            gcut_options_init(&opt);
            opt.solver = "bk";
            int64_t flow = -1, flow_pr = -1;
            fuzz_require(gcut_grid_solve(grid, &opt, &flow, labels, NULL) == GCUT_OK, "bk");
            fuzz_require(gcut_grid_verify(grid, labels, flow, NULL) == GCUT_OK, "cut certificate");
            opt.solver = "cpu-pr";
            opt.threads = 1;
            fuzz_require(gcut_grid_solve(grid, &opt, &flow_pr, labels, NULL) == GCUT_OK, "cpu-pr");
            fuzz_require(flow_pr == flow, "cpu-pr and bk flows differ");
        }
        gcut_grid_free(grid);
    }
    gcut_image_free(&image);
    return 0;
}
