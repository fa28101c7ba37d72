/* seg_stubs.c - placeholders for the segmentation calls until they land; the segmentation
 * engineer deletes the ones they implement. */
#include "internal.h"

#define GCUT__STUB(what) return gcut__fail(GCUT_ERR_UNSUPPORTED, "%s: not built yet", what)

gcut_status gcut_seeds_from_mask(const gcut_image *mask, gcut_seed_encoding encoding,
                                 uint8_t *seeds) {
    (void)mask, (void)encoding, (void)seeds;
    GCUT__STUB("gcut_seeds_from_mask");
}
void gcut_seg_params_init(gcut_seg_params *params) {
    (void)params;
}
gcut_status gcut_seg_build_grid(const gcut_image *image, const uint8_t *seeds,
                                const gcut_seg_params *params, gcut_grid **out,
                                gcut_seg_report *report) {
    (void)image, (void)seeds, (void)params, (void)out, (void)report;
    GCUT__STUB("gcut_seg_build_grid");
}
gcut_status gcut_segment(const gcut_image *image, const uint8_t *seeds,
                         const gcut_seg_params *params, const gcut_options *options, uint8_t *mask,
                         gcut_seg_report *report) {
    (void)image, (void)seeds, (void)params, (void)options, (void)mask, (void)report;
    GCUT__STUB("gcut_segment");
}
gcut_status gcut_overlay(const gcut_image *image, const uint8_t *mask, gcut_image *out) {
    (void)image, (void)mask, (void)out;
    GCUT__STUB("gcut_overlay");
}
gcut_status gcut_synth_image(int64_t width, int64_t height, int64_t depth, uint64_t seed,
                             gcut_synth_level level, gcut_image *image, uint8_t *truth) {
    (void)width, (void)height, (void)depth, (void)seed, (void)level, (void)image, (void)truth;
    GCUT__STUB("gcut_synth_image");
}
gcut_status gcut_synth_seeds(int64_t width, int64_t height, int64_t depth, uint8_t *seeds) {
    (void)width, (void)height, (void)depth, (void)seeds;
    GCUT__STUB("gcut_synth_seeds");
}
gcut_status gcut_synth_grid(int64_t width, int64_t height, int64_t depth, uint64_t seed,
                            gcut_synth_level level, int connectivity, gcut_grid **out) {
    (void)width, (void)height, (void)depth, (void)seed, (void)level, (void)connectivity, (void)out;
    GCUT__STUB("gcut_synth_grid");
}
