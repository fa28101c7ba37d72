/* video_synth.c - synthetic test videos with ground truth for online segmentation (the
 * situations Garrett & Saito 2009, 4, track: a moving, deforming silhouette), drawn in scene
 * units so that every size shows the same scene: motion, deformation, an appearing part,
 * colour drift, a passing occluder, camera pan and sensor noise. */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define PI 3.14159265358979323846

static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* An ellipse in pixel units: centre, half axes, rotation. */
typedef struct ellipse {
    double cx, cy, a, b, cos_t, sin_t;
} ellipse;

static bool inside(const ellipse *e, double x, double y) {
    const double dx = x - e->cx, dy = y - e->cy;
    const double u = dx * e->cos_t + dy * e->sin_t, v = -dx * e->sin_t + dy * e->cos_t;
    return (u * u) / (e->a * e->a) + (v * v) / (e->b * e->b) <= 1.0;
}

gcut_status gcut_video_synth_frame(int64_t width, int64_t height, uint64_t seed, int64_t index,
                                   gcut_synth_level level, gcut_image *image, uint8_t *truth) {
    if (image == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_synth_frame: image is NULL");
    memset(image, 0, sizeof *image);
    if (level != GCUT_SYNTH_EASY && level != GCUT_SYNTH_HARD)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_synth_frame: unknown level %d",
                          (int)level);
    if (width < 16 || height < 16 || width > 16384 || height > 16384 || index < 0)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_video_synth_frame: size %" PRId64 "x%" PRId64 " (16 to 16384 per "
                          "side) or frame %" PRId64 " not valid",
                          width, height, index);
    gcut_status st = gcut_image_alloc(image, width, height, 1, 3, 8);
    if (st != GCUT_OK)
        return st;
    /* Scene unit: 1/240 of the smaller side. Per-seed phases vary the path and the shapes. */
    const double s = (double)(width < height ? width : height) / 240.0;
    uint64_t r = mix64(seed);
    const double ph1 = (double)(r & 0xffff) / 65536.0 * 2 * PI;
    const double ph2 = (double)((r >> 16) & 0xffff) / 65536.0 * 2 * PI;
    const double t = (double)index;
    /* The object: across the frame and back every 90 frames, bobbing, breathing, turning. */
    ellipse body;
    body.cx = (double)width * (0.5 - 0.25 * cos(2 * PI * t / 90.0 + ph1 * 0.1));
    body.cy = (double)height * (0.5 + 0.08 * sin(2 * PI * t / 63.0 + ph2));
    body.a = 42.0 * s * (1.0 + 0.2 * sin(2 * PI * t / 40.0));
    body.b = 58.0 * s * (1.0 + 0.15 * cos(2 * PI * t / 33.0 + ph1));
    const double rot = 0.02 * t + ph2;
    body.cos_t = cos(rot);
    body.sin_t = sin(rot);
    /* An appearing part: grows out of the body's side between frames 10 and 30. */
    ellipse arm = body;
    const double grow = t < 10 ? 0.0 : t > 30 ? 1.0 : (t - 10) / 20.0;
    arm.a = 24.0 * s * grow + 1e-9;
    arm.b = 14.0 * s * grow + 1e-9;
    arm.cx = body.cx + body.cos_t * (body.a + 8.0 * s * grow);
    arm.cy = body.cy + body.sin_t * (body.a + 8.0 * s * grow);
    /* The occluder: a background-coloured bar sweeping right to left from frame 20. */
    const double bar_w = 8.0 * s;
    const double bar_x = (double)width * 1.05 - (t - 20.0) * 3.0 * s;
    /* Colour drift: the object's hue moves from orange towards yellow-green over 120 frames. */
    const double drift = 0.5 - 0.5 * cos(2 * PI * t / 240.0);
    const double pan = 0.6 * t; /* camera pan in scene units */
    /* Hard: three times the noise, object colours pulled a third of the way towards the
     * background's, and a brownish background blob (between the two palettes) drifting past the
     * object's path. */
    const bool hard = level == GCUT_SYNTH_HARD;
    const double noise = hard ? 36.0 : 12.0, pull = hard ? 0.33 : 0.0;
    ellipse blob = {(double)width * (0.5 + 0.3 * sin(2 * PI * t / 150.0 + ph2)),
                    (double)height * (0.2 + 0.6 * (0.5 - 0.5 * cos(2 * PI * t / 110.0))),
                    30.0 * s,
                    22.0 * s,
                    1.0,
                    0.0};
    uint8_t *px = image->pixels;
    for (int64_t y = 0; y < height; y++) {
        const double ys = (double)y / s;
        for (int64_t x = 0; x < width; x++) {
            const int64_t i = y * width + x;
            const double xs = (double)x / s, fx = (double)x, fy = (double)y;
            const bool fg = inside(&body, fx, fy) || (grow > 0 && inside(&arm, fx, fy));
            const bool bar = fx >= bar_x && fx < bar_x + bar_w;
            double c[3];
            if (fg && !bar) {
                /* Textured orange: stripes in object coordinates. */
                const double u = ((fx - body.cx) * body.cos_t + (fy - body.cy) * body.sin_t) / s;
                const double tex = sin(u * 0.45) * sin(ys * 0.2 + 0.3 * t);
                c[0] = 215 - 50 * drift + 20 * tex;
                c[1] = 100 + 80 * drift + 18 * tex;
                c[2] = 45 + 10 * tex;
            } else if (bar) {
                c[0] = 70;
                c[1] = 115;
                c[2] = 150;
            } else if (hard && inside(&blob, fx, fy)) {
                c[0] = 140;
                c[1] = 110;
                c[2] = 90;
            } else {
                /* Blue-green background with large soft structure, panning. */
                const double u = xs + pan;
                c[0] = 45 + 25 * sin(u * 0.045) * cos(ys * 0.05);
                c[1] = 120 + 35 * sin(u * 0.03 + ys * 0.02);
                c[2] = 150 + 40 * cos((u - ys) * 0.025);
            }
            if (fg && !bar && pull > 0) {
                static const double bg_mean[3] = {45, 120, 150};
                for (int k = 0; k < 3; k++)
                    c[k] += pull * (bg_mean[k] - c[k]);
            }
            const uint64_t h =
                mix64(seed ^ mix64((uint64_t)index * 0x100000001B3ull + (uint64_t)i));
            for (int k = 0; k < 3; k++) {
                /* Camera noise: a sum of two uniforms, standard deviation about 5 (hard: 15). */
                const double a1 = (double)((h >> (k * 16)) & 0xff) / 255.0;
                const double a2 = (double)((h >> (k * 16 + 8)) & 0xff) / 255.0;
                double v = c[k] + (a1 + a2 - 1.0) * noise;
                v = v < 0 ? 0 : v > 255 ? 255 : v;
                px[i * 3 + k] = (uint8_t)(v + 0.5 > 255 ? 255 : v + 0.5);
            }
            if (truth != NULL)
                truth[i] = fg && !bar;
        }
    }
    return GCUT_OK;
}
