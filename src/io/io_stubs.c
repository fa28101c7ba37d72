/* io_stubs.c - placeholders for the image I/O calls until they land;
 * each engineer deletes the ones they implement. */
#include "internal.h"

#define GCUT__STUB(what) return gcut__fail(GCUT_ERR_UNSUPPORTED, "%s: not built yet", what)

gcut_status gcut_image_read(const char *path, gcut_image *out) {
    (void)path, (void)out;
    GCUT__STUB("gcut_image_read");
}
gcut_status gcut_image_write(const char *path, const gcut_image *image) {
    (void)path, (void)image;
    GCUT__STUB("gcut_image_write");
}
gcut_status gcut_volume_read_raw(const char *path, int64_t depth, int64_t height, int64_t width,
                                 int channels, int bit_depth, gcut_image *out) {
    (void)path, (void)depth, (void)height, (void)width, (void)channels, (void)bit_depth, (void)out;
    GCUT__STUB("gcut_volume_read_raw");
}
gcut_status gcut_volume_read_slices(const char *const *paths, int64_t count, gcut_image *out) {
    (void)paths, (void)count, (void)out;
    GCUT__STUB("gcut_volume_read_slices");
}
gcut_status gcut_image_alloc(gcut_image *image, int64_t width, int64_t height, int64_t depth,
                             int channels, int bit_depth) {
    (void)image, (void)width, (void)height, (void)depth, (void)channels, (void)bit_depth;
    GCUT__STUB("gcut_image_alloc");
}
void gcut_image_free(gcut_image *image) {
    (void)image;
}
