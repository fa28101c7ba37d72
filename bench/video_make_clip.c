/* video_make_clip.c - makes the bundled real clip (examples/coffee-clip/) from a photo and its
 * segmentation by camera motion: a crop window that pans and zooms over the photo, resampled
 * bilinearly to each frame (the kind of sequence Garrett & Saito 2009, 4, segment online). The
 * mask is cleaned (largest foreground component, holes filled) and cropped the same way, giving
 * the first frame's --init and a reference mask for every frame.
 *   video_make_clip PHOTO MASK OUT_DIR FRAMES WIDTH HEIGHT */
#include "gcut.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* Keep the 4-connected component of value `value` that is largest (keep_largest) or every one
 * touching the border (!keep_largest); set the rest to the other value. */
static void components(uint8_t *m, int64_t w, int64_t h, uint8_t value, int keep_largest) {
    const int64_t n = w * h;
    int32_t *label = calloc((size_t)n, sizeof *label);
    int64_t *stack = malloc((size_t)n * sizeof *stack);
    int64_t best = -1, best_size = 0;
    int32_t next = 0;
    uint8_t *keep = calloc((size_t)n + 1, 1);
    for (int64_t s = 0; s < n; s++) {
        if (m[s] != value || label[s] != 0)
            continue;
        int64_t top = 0, size = 0;
        int border = 0;
        label[s] = ++next;
        stack[top++] = s;
        while (top > 0) {
            const int64_t i = stack[--top], x = i % w, y = i / w;
            size++;
            border |= x == 0 || y == 0 || x == w - 1 || y == h - 1;
            const int64_t nb[4] = {x > 0 ? i - 1 : -1, x + 1 < w ? i + 1 : -1, y > 0 ? i - w : -1,
                                   y + 1 < h ? i + w : -1};
            for (int k = 0; k < 4; k++)
                if (nb[k] >= 0 && m[nb[k]] == value && label[nb[k]] == 0) {
                    label[nb[k]] = next;
                    stack[top++] = nb[k];
                }
        }
        if (size > best_size) {
            best_size = size;
            best = next;
        }
        keep[next] = (uint8_t)border;
    }
    for (int64_t i = 0; i < n; i++)
        if (m[i] == value) {
            const int ok = keep_largest ? label[i] == best : keep[label[i]];
            if (!ok)
                m[i] = (uint8_t)(1 - value);
        }
    free(label);
    free(stack);
    free(keep);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: video_make_clip PHOTO MASK OUT_DIR FRAMES WIDTH HEIGHT\n");
        return 2;
    }
    gcut_image photo, mask;
    if (gcut_image_read(argv[1], &photo) != GCUT_OK || gcut_image_read(argv[2], &mask) != GCUT_OK ||
        photo.channels != 3 || mask.width != photo.width || mask.height != photo.height) {
        fprintf(stderr, "video_make_clip: %s\n", gcut_last_error());
        return 1;
    }
    const int64_t pw = photo.width, ph = photo.height, frames = atoll(argv[4]);
    const int64_t w = atoll(argv[5]), h = atoll(argv[6]);
    uint8_t *m = malloc((size_t)(pw * ph));
    for (int64_t i = 0; i < pw * ph; i++)
        m[i] = ((const uint8_t *)mask.pixels)[i * mask.channels] != 0;
    components(m, pw, ph, 1, 1); /* the object: its largest piece */
    components(m, pw, ph, 0, 0); /* holes inside it filled */
    gcut_image frame, fmask;
    if (gcut_image_alloc(&frame, w, h, 1, 3, 8) != GCUT_OK ||
        gcut_image_alloc(&fmask, w, h, 1, 1, 8) != GCUT_OK)
        return 1;
    const uint8_t *src = photo.pixels;
    char path[4096];
    for (int64_t k = 0; k < frames; k++) {
        /* The window: width from 92% to 72% of the photo's and back (zoom in, out), its centre
         * on a slow loop (pan), always inside the photo. */
        const double t = (double)k / (double)(frames > 1 ? frames - 1 : 1);
        const double zoom = 0.92 - 0.2 * sin(PI * t);
        const double cw = zoom * (double)pw, ch = cw * (double)h / (double)w;
        const double cx = (double)pw / 2 + ((double)pw - cw) / 2 * 0.5 * sin(2 * PI * t);
        const double cy = (double)ph / 2 + ((double)ph - ch) / 2 * 0.5 * (1 - cos(2 * PI * t)) -
                          ((double)ph - ch) / 2 * 0.45;
        uint8_t *dst = frame.pixels, *dm = fmask.pixels;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                const double sx = cx - cw / 2 + ((double)x + 0.5) * cw / (double)w - 0.5;
                const double sy = cy - ch / 2 + ((double)y + 0.5) * ch / (double)h - 0.5;
                int64_t x0 = (int64_t)floor(sx), y0 = (int64_t)floor(sy);
                const double fx = sx - (double)x0, fy = sy - (double)y0;
                x0 = x0 < 0 ? 0 : x0 > pw - 2 ? pw - 2 : x0;
                y0 = y0 < 0 ? 0 : y0 > ph - 2 ? ph - 2 : y0;
                const int64_t i00 = y0 * pw + x0, i01 = i00 + 1, i10 = i00 + pw, i11 = i10 + 1;
                for (int c = 0; c < 3; c++) {
                    const double v =
                        (1 - fy) * ((1 - fx) * src[i00 * 3 + c] + fx * src[i01 * 3 + c]) +
                        fy * ((1 - fx) * src[i10 * 3 + c] + fx * src[i11 * 3 + c]);
                    dst[(y * w + x) * 3 + c] = (uint8_t)(v + 0.5);
                }
                const double mv = (1 - fy) * ((1 - fx) * m[i00] + fx * m[i01]) +
                                  fy * ((1 - fx) * m[i10] + fx * m[i11]);
                dm[y * w + x] = mv >= 0.5 ? 255 : 0;
            }
        snprintf(path, sizeof path, "%s/frame_%03lld.jpg", argv[3], (long long)k);
        if (gcut_image_write(path, &frame) != GCUT_OK) {
            fprintf(stderr, "video_make_clip: %s\n", gcut_last_error());
            return 1;
        }
        snprintf(path, sizeof path, "%s/reference/mask_%03lld.png", argv[3], (long long)k);
        if (gcut_image_write(path, &fmask) != GCUT_OK) {
            fprintf(stderr, "video_make_clip: %s\n", gcut_last_error());
            return 1;
        }
    }
    free(m);
    gcut_image_free(&photo);
    gcut_image_free(&mask);
    gcut_image_free(&frame);
    gcut_image_free(&fmask);
    return 0;
}
