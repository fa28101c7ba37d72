/* test_image.c - image and volume I/O: round trips for every format, depth and channel count,
 * PNGs built here byte by byte (stored deflate, own CRC) as an oracle independent of libpng,
 * and malformed inputs (cut, corrupt, absurd) each rejected with its status and no leak. */
#define _POSIX_C_SOURCE 200809L
#include "util_common.h"

#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int passed = 0;

#define PASS_IF(cond)                                                                              \
    do {                                                                                           \
        int before_ = test_failures;                                                               \
        CHECK(cond);                                                                               \
        if (test_failures == before_)                                                              \
            passed++;                                                                              \
    } while (0)

/* ---- scratch directory: every file a test makes is recorded and removed at the end ---- */

static char scratch_dir[256];
static char *scratch_files[512];
static int scratch_count;
static test_rng rng;
static bool have_png, have_jpeg;

static const char *scratch(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    for (int i = 0; i < scratch_count; i++)
        if (strcmp(scratch_files[i], path) == 0)
            return scratch_files[i];
    if (scratch_count == (int)(sizeof scratch_files / sizeof scratch_files[0])) {
        fprintf(stderr, "too many scratch files\n");
        exit(1);
    }
    char *copy = malloc(strlen(path) + 1);
    if (copy == NULL)
        exit(1);
    strcpy(copy, path);
    scratch_files[scratch_count++] = copy;
    return copy;
}

static void scratch_cleanup(void) {
    for (int i = 0; i < scratch_count; i++) {
        remove(scratch_files[i]);
        free(scratch_files[i]);
    }
    rmdir(scratch_dir);
}

static void write_bytes(const char *path, const void *data, size_t length) {
    FILE *file = fopen(path, "wb");
    if (file == NULL || fwrite(data, 1, length, file) != length) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(file);
}

/* The whole file in a malloc'd buffer (NULL if it cannot be read). */
static uint8_t *read_bytes(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    *length = data != NULL ? fread(data, 1, (size_t)size, file) : 0;
    fclose(file);
    return data;
}

static void write_text(const char *path, const char *text) {
    write_bytes(path, text, strlen(text));
}

/* ---- images ---- */

static gcut_image random_image(int64_t width, int64_t height, int channels, int bit_depth) {
    gcut_image image;
    CHECK_OK(gcut_image_alloc(&image, width, height, 1, channels, bit_depth));
    int64_t count = width * height * channels;
    for (int64_t i = 0; i < count; i++) {
        uint64_t r = test_rng_next(&rng);
        if (bit_depth == 8)
            ((uint8_t *)image.pixels)[i] = (uint8_t)r;
        else
            ((uint16_t *)image.pixels)[i] = (uint16_t)r;
    }
    return image;
}

static bool same_geometry(const gcut_image *a, const gcut_image *b) {
    return a->width == b->width && a->height == b->height && a->depth == b->depth &&
           a->channels == b->channels && a->bit_depth == b->bit_depth;
}

static size_t pixel_bytes(const gcut_image *image) {
    return (size_t)(image->width * image->height * image->depth * image->channels *
                    (image->bit_depth / 8));
}

static bool same_image(const gcut_image *a, const gcut_image *b) {
    return same_geometry(a, b) && memcmp(a->pixels, b->pixels, pixel_bytes(a)) == 0;
}

static bool error_mentions(const char *text) {
    bool found = strstr(gcut_last_error(), text) != NULL;
    if (!found)
        fprintf(stderr, "  last error \"%s\" does not mention \"%s\"\n", gcut_last_error(), text);
    return found;
}

/* Read path expecting failure with status; the output must come back empty and no memory
 * may stay held (the allocator's count is an oracle independent of ASan). */
static bool read_fails(const char *path, gcut_status status) {
    uint64_t before = gcut_memory_in_use();
    gcut_image image;
    memset(&image, 0xab, sizeof image);
    gcut_status got = gcut_image_read(path, &image);
    bool ok = got == status && image.pixels == NULL && image.width == 0 &&
              gcut_memory_in_use() == before && strstr(gcut_last_error(), path) != NULL;
    if (!ok)
        fprintf(stderr, "  %s: expected %s, got %s (%s)\n", path, gcut_status_name(status),
                gcut_status_name(got), gcut_last_error());
    if (got == GCUT_OK)
        gcut_image_free(&image);
    return ok;
}

static bool round_trip(const char *name, const gcut_image *image) {
    const char *path = scratch(name);
    gcut_status status = gcut_image_write(path, image);
    if (status != GCUT_OK) {
        fprintf(stderr, "  write %s: %s\n", name, gcut_last_error());
        return false;
    }
    gcut_image back;
    status = gcut_image_read(path, &back);
    if (status != GCUT_OK) {
        fprintf(stderr, "  read %s: %s\n", name, gcut_last_error());
        return false;
    }
    bool same = same_image(image, &back);
    if (!same)
        fprintf(stderr, "  %s: pixels differ after the round trip\n", name);
    gcut_image_free(&back);
    return same;
}

/* Cut a valid file at every length from 1 to its size - 1: each cut must fail as PARSE. */
static int cuts_rejected(const char *source, const char *name, size_t from, size_t step) {
    size_t length = 0;
    uint8_t *data = read_bytes(source, &length);
    if (data == NULL)
        return 0;
    const char *path = scratch(name);
    int bad = 0;
    for (size_t cut = from; cut < length; cut += step) {
        write_bytes(path, data, cut);
        if (!read_fails(path, GCUT_ERR_PARSE)) {
            fprintf(stderr, "  cut at %zu of %zu bytes accepted or misreported\n", cut, length);
            bad++;
        }
    }
    free(data);
    return bad;
}

/* ---- an independent PNG writer: stored (uncompressed) deflate blocks and our own CRC-32 and
 * Adler-32, so that what libpng decodes can be compared with what was meant ---- */

typedef struct buffer {
    uint8_t *data;
    size_t length, room;
} buffer;

static void buffer_put(buffer *b, const void *data, size_t length) {
    if (b->length + length > b->room) {
        b->room = (b->length + length) * 2 + 64;
        b->data = realloc(b->data, b->room);
        if (b->data == NULL)
            exit(1);
    }
    memcpy(b->data + b->length, data, length);
    b->length += length;
}

static void buffer_put32(buffer *b, uint32_t value) {
    uint8_t bytes[4] = {(uint8_t)(value >> 24), (uint8_t)(value >> 16), (uint8_t)(value >> 8),
                        (uint8_t)value};
    buffer_put(b, bytes, 4);
}

static uint32_t crc32_of(const uint8_t *data, size_t length) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < length; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xffffffffu;
}

static void png_chunk(buffer *file, const char *type, const uint8_t *data, size_t length) {
    buffer body = {0};
    buffer_put(&body, type, 4);
    if (length > 0)
        buffer_put(&body, data, length);
    buffer_put32(file, (uint32_t)length);
    buffer_put(file, body.data, body.length);
    buffer_put32(file, crc32_of(body.data, body.length));
    free(body.data);
}

static void zlib_stored(buffer *out, const uint8_t *raw, size_t length) {
    uint8_t header[2] = {0x78, 0x01};
    buffer_put(out, header, 2);
    size_t at = 0;
    do {
        size_t block = length - at > 65535 ? 65535 : length - at;
        uint8_t head[5] = {(uint8_t)(at + block == length), (uint8_t)block, (uint8_t)(block >> 8),
                           (uint8_t)~block, (uint8_t)(~block >> 8)};
        buffer_put(out, head, 5);
        if (block > 0)
            buffer_put(out, raw + at, block);
        at += block;
    } while (at < length);
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < length; i++) {
        a = (a + raw[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    buffer_put32(out, (b << 16) | a);
}

/* One scanline: filter byte 0, then samples packed MSB first at bit_depth bits. */
static void pack_row(buffer *raw, const uint16_t *samples, size_t count, int bit_depth) {
    uint8_t zero = 0;
    buffer_put(raw, &zero, 1);
    if (bit_depth == 16) {
        for (size_t i = 0; i < count; i++) {
            uint8_t two[2] = {(uint8_t)(samples[i] >> 8), (uint8_t)samples[i]};
            buffer_put(raw, two, 2);
        }
        return;
    }
    uint8_t byte = 0;
    int used = 0;
    for (size_t i = 0; i < count; i++) {
        byte = (uint8_t)(byte | (samples[i] << (8 - bit_depth - used)));
        used += bit_depth;
        if (used == 8) {
            buffer_put(raw, &byte, 1);
            byte = 0;
            used = 0;
        }
    }
    if (used > 0)
        buffer_put(raw, &byte, 1);
}

typedef struct png_spec {
    uint32_t width, height;
    int bit_depth, color_type, interlace;
    int samples_per_pixel;
    const uint16_t *samples; /* width*height*samples_per_pixel, row-major */
    const uint8_t *palette;  /* PLTE bytes */
    size_t palette_length;
    const uint8_t *trns; /* tRNS bytes */
    size_t trns_length;
    bool filtered; /* non-interlaced rows filtered with type y % 5 (else every row type 0) */
} png_spec;

static int paeth_of(int a, int b, int c) {
    const int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* PNG spec 1.2 section 6: row y (1 + rowbytes at rows, type 0) filtered with type y % 5
 * against the unfiltered row above (zeros above the first), bpp bytes per pixel (at least 1). */
static void filter_rows(uint8_t *rows, size_t height, size_t rowbytes, size_t bpp) {
    uint8_t *prev = calloc(rowbytes + 1, 1), *cur = malloc(rowbytes + 1);
    if (prev == NULL || cur == NULL)
        exit(1);
    for (size_t y = 0; y < height; y++) {
        uint8_t *r = rows + y * (rowbytes + 1);
        memcpy(cur, r + 1, rowbytes); /* the row's own bytes, before filtering */
        const int type = (int)(y % 5);
        r[0] = (uint8_t)type;
        for (size_t i = 0; i < rowbytes; i++) {
            const int a = i >= bpp ? cur[i - bpp] : 0, b = prev[i];
            const int c = i >= bpp ? prev[i - bpp] : 0;
            const int pred = type == 1   ? a
                             : type == 2 ? b
                             : type == 3 ? (a + b) / 2
                             : type == 4 ? paeth_of(a, b, c)
                                         : 0;
            r[1 + i] = (uint8_t)(cur[i] - pred);
        }
        memcpy(prev, cur, rowbytes);
    }
    free(prev);
    free(cur);
}

static void make_png(const char *path, const png_spec *spec) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    buffer file = {0}, raw = {0}, z = {0}, ihdr = {0};
    buffer_put(&file, signature, 8);
    buffer_put32(&ihdr, spec->width);
    buffer_put32(&ihdr, spec->height);
    uint8_t rest[5] = {(uint8_t)spec->bit_depth, (uint8_t)spec->color_type, 0, 0,
                       (uint8_t)spec->interlace};
    buffer_put(&ihdr, rest, 5);
    png_chunk(&file, "IHDR", ihdr.data, ihdr.length);
    if (spec->palette != NULL)
        png_chunk(&file, "PLTE", spec->palette, spec->palette_length);
    if (spec->trns != NULL)
        png_chunk(&file, "tRNS", spec->trns, spec->trns_length);
    size_t spp = (size_t)spec->samples_per_pixel;
    uint16_t *row = malloc(spec->width * spp * sizeof *row + 1);
    /* Adam7 passes (x0, y0, dx, dy); a non-interlaced image is the single pass (0,0,1,1). */
    static const int adam7[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                    {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
    static const int whole[1][4] = {{0, 0, 1, 1}};
    const int(*passes)[4] = spec->interlace ? adam7 : whole;
    int num_passes = spec->interlace ? 7 : 1;
    for (int p = 0; p < num_passes; p++) {
        for (uint32_t y = (uint32_t)passes[p][1]; y < spec->height; y += (uint32_t)passes[p][3]) {
            size_t count = 0;
            for (uint32_t x = (uint32_t)passes[p][0]; x < spec->width; x += (uint32_t)passes[p][2])
                for (size_t s = 0; s < spp; s++)
                    row[count++] = spec->samples[((size_t)y * spec->width + x) * spp + s];
            if (count > 0)
                pack_row(&raw, row, count, spec->bit_depth);
        }
    }
    free(row);
    if (spec->filtered && !spec->interlace) {
        const size_t bits = (size_t)spec->width * spp * (size_t)spec->bit_depth;
        const size_t bpp = spp * (size_t)spec->bit_depth / 8;
        filter_rows(raw.data, spec->height, (bits + 7) / 8, bpp > 0 ? bpp : 1);
    }
    zlib_stored(&z, raw.data, raw.length);
    png_chunk(&file, "IDAT", z.data, z.length);
    png_chunk(&file, "IEND", NULL, 0);
    write_bytes(path, file.data, file.length);
    free(file.data);
    free(raw.data);
    free(z.data);
    free(ihdr.data);
}

/* An 8-bit gray PNG header of any size whose pixel data stops after the zlib header. */
static void make_png_header(const char *path, uint32_t width, uint32_t height) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    buffer file = {0}, ihdr = {0};
    buffer_put(&file, signature, 8);
    buffer_put32(&ihdr, width);
    buffer_put32(&ihdr, height);
    static const uint8_t rest[5] = {8, 0, 0, 0, 0};
    buffer_put(&ihdr, rest, 5);
    png_chunk(&file, "IHDR", ihdr.data, ihdr.length);
    png_chunk(&file, "IDAT", (const uint8_t *)"\x78\x01", 2);
    write_bytes(path, file.data, file.length);
    free(file.data);
    free(ihdr.data);
}

/* ---- tests ---- */

static void test_alloc(void) {
    uint64_t before = gcut_memory_in_use();
    gcut_image image;
    PASS_IF(gcut_image_alloc(&image, 5, 4, 3, 2, 16) == GCUT_OK);
    PASS_IF(image.width == 5 && image.height == 4 && image.depth == 3 && image.channels == 2 &&
            image.bit_depth == 16 && image.pixels != NULL);
    PASS_IF(gcut_memory_in_use() >= before + 5 * 4 * 3 * 2 * 2);
    bool zero = true;
    for (int i = 0; i < 5 * 4 * 3 * 2; i++)
        zero = zero && ((uint16_t *)image.pixels)[i] == 0;
    PASS_IF(zero);
    gcut_image_free(&image);
    PASS_IF(image.pixels == NULL && image.width == 0);
    PASS_IF(gcut_memory_in_use() == before);
    gcut_image_free(NULL);
    PASS_IF(gcut_image_alloc(&image, 0, 4, 1, 1, 8) == GCUT_ERR_INVALID_ARG &&
            error_mentions("width"));
    PASS_IF(gcut_image_alloc(&image, 4, 4, 0, 1, 8) == GCUT_ERR_INVALID_ARG &&
            error_mentions("depth"));
    PASS_IF(gcut_image_alloc(&image, 4, 4, 1, 5, 8) == GCUT_ERR_INVALID_ARG &&
            error_mentions("channels"));
    PASS_IF(gcut_image_alloc(&image, 4, 4, 1, 1, 12) == GCUT_ERR_INVALID_ARG &&
            error_mentions("bit_depth"));
    PASS_IF(gcut_image_alloc(NULL, 4, 4, 1, 1, 8) == GCUT_ERR_INVALID_ARG);
    /* Over the cap: refused before anything is held. */
    uint64_t cap = gcut_memory_limit();
    gcut_set_memory_limit(1 << 20);
    PASS_IF(gcut_image_alloc(&image, 1024, 1024, 1, 3, 8) == GCUT_ERR_NOMEM &&
            image.pixels == NULL && gcut_memory_in_use() == before);
    gcut_set_memory_limit(cap);
}

/* Write then read every channel count and depth each format holds: pixels identical. */
static void test_lossless_round_trips(void) {
    static const int64_t sizes[][2] = {{1, 1}, {7, 5}, {33, 17}, {2, 64}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int bit_depth = 8; bit_depth <= 16; bit_depth += 8) {
            for (int channels = 1; channels <= 4; channels++) {
                gcut_image image = random_image(sizes[s][0], sizes[s][1], channels, bit_depth);
                char name[64];
                if (have_png) {
                    snprintf(name, sizeof name, "rt_%zu_%d_%d.png", s, bit_depth, channels);
                    PASS_IF(round_trip(name, &image));
                }
                if (channels == 1 || channels == 3) {
                    snprintf(name, sizeof name, "rt_%zu_%d_%d.%s", s, bit_depth, channels,
                             channels == 1 ? "pgm" : "ppm");
                    PASS_IF(round_trip(name, &image));
                    snprintf(name, sizeof name, "rt_%zu_%d_%d.PNM", s, bit_depth, channels);
                    PASS_IF(round_trip(name, &image));
                }
                gcut_image_free(&image);
            }
        }
    }
}

/* Masks: an 8-bit gray image of at most two values, 0 and one other, is written unfiltered
 * (image.c), any other one with libpng's adaptive filters; both must give the pixels back.
 * Two-level images of every kind (0 and 255, 0 and 1, all zero, all one value, blobs and
 * noise), then the same with one pixel of a third value, or two non-zero values. */
static void test_mask_round_trips(void) {
    if (!have_png)
        return;
    for (int k = 0; k < 24; k++) {
        const int64_t w = test_rng_range(&rng, 1, 300), h = test_rng_range(&rng, 1, 200);
        gcut_image image;
        CHECK_OK(gcut_image_alloc(&image, w, h, 1, 1, 8));
        uint8_t *p = image.pixels;
        const uint8_t high = (uint8_t)(k % 4 == 0 ? 255 : test_rng_range(&rng, 1, 255));
        const int kind = k % 3; /* 0: noise, 1: a disc, 2: a single value */
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                const int64_t dx = 2 * x - w, dy = 2 * y - h;
                const bool on = kind == 0   ? (test_rng_next(&rng) & 1) != 0
                                : kind == 1 ? dx * dx + dy * dy < w * h / 2
                                            : (k & 8) != 0;
                p[y * w + x] = on ? high : 0;
            }
        char name[64];
        snprintf(name, sizeof name, "mask_%d.png", k);
        PASS_IF(round_trip(name, &image));
        /* A third value somewhere: written with filters, still lossless. */
        const int64_t at = test_rng_range(&rng, 0, w * h - 1);
        p[at] = (uint8_t)(high == 1 ? 2 : high - 1);
        if (k % 2 == 0)
            p[test_rng_range(&rng, 0, w * h - 1)] = (uint8_t)(high == 77 ? 78 : 77);
        snprintf(name, sizeof name, "mask3_%d.png", k);
        PASS_IF(round_trip(name, &image));
        gcut_image_free(&image);
    }
}

/* Masks of 512 KiB and more are compressed in strips on threads (image.c, GCUT_PNG_THREADS:
 * 1 = libpng's writer, N = N strips): every strip count gives the pixels back, and its file
 * differs from libpng's (so the knob does pick the writer). Wide, tall and thin masks; a
 * three-level image of that size goes through libpng whatever the knob says. */
static void test_mask_strips(void) {
    if (!have_png)
        return;
    static const int64_t shapes[][2] = {{1024, 640}, {7, 80000}, {4000, 140}, {1920, 1080}};
    const char *old = getenv("GCUT_PNG_THREADS");
    char *saved = old != NULL ? strdup(old) : NULL;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const int64_t w = shapes[k][0], h = shapes[k][1];
        gcut_image image;
        CHECK_OK(gcut_image_alloc(&image, w, h, 1, 1, 8));
        uint8_t *p = image.pixels;
        /* Blobs with ragged edges and some noise: runs of every length. */
        const int64_t r2 = (w * w + h * h) / 9;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                const int64_t dx = x - w / 3, dy = y - h / 2;
                const bool noise = test_rng_range(&rng, 0, 99) == 0;
                p[y * w + x] = (dx * dx + dy * dy < r2) != noise ? 255 : 0;
            }
        size_t libpng_length = 0;
        uint8_t *libpng_file = NULL;
        static const char *const counts[] = {"1", "2", "5", "16"};
        for (int c = 0; c < 4; c++) {
            setenv("GCUT_PNG_THREADS", counts[c], 1);
            char name[64];
            snprintf(name, sizeof name, "strips_%zu_%s.png", k, counts[c]);
            PASS_IF(round_trip(name, &image));
            size_t length = 0;
            uint8_t *file = read_bytes(scratch(name), &length);
            if (c == 0) {
                libpng_file = file;
                libpng_length = length;
                continue;
            }
            PASS_IF(file != NULL && libpng_file != NULL &&
                    (length != libpng_length || memcmp(file, libpng_file, length) != 0));
            free(file);
        }
        free(libpng_file);
        /* A third value: libpng's writer (adaptive filters) with any strip count. */
        p[test_rng_range(&rng, 0, w * h - 1)] = 128;
        setenv("GCUT_PNG_THREADS", "16", 1);
        PASS_IF(round_trip("strips_three.png", &image));
        gcut_image_free(&image);
    }
    if (saved != NULL)
        setenv("GCUT_PNG_THREADS", saved, 1);
    else
        unsetenv("GCUT_PNG_THREADS");
    free(saved);
}

/* The PPM a 16-bit image becomes is big-endian as Netpbm says, whatever the host order. */
static void test_pnm_bytes(void) {
    gcut_image image;
    CHECK_OK(gcut_image_alloc(&image, 2, 1, 1, 1, 16));
    ((uint16_t *)image.pixels)[0] = 0x1234;
    ((uint16_t *)image.pixels)[1] = 0xfedc;
    const char *path = scratch("bytes16.pgm");
    CHECK_OK(gcut_image_write(path, &image));
    size_t length = 0;
    uint8_t *data = read_bytes(path, &length);
    static const char expected[] = "P5\n2 1\n65535\n\x12\x34\xfe\xdc";
    PASS_IF(data != NULL && length == sizeof expected - 1 && memcmp(data, expected, length) == 0);
    free(data);
    gcut_image_free(&image);
}

static bool read_ok(const char *path, gcut_image *image) {
    gcut_status status = gcut_image_read(path, image);
    if (status != GCUT_OK)
        fprintf(stderr, "  %s: %s\n", path, gcut_last_error());
    return status == GCUT_OK;
}

static void test_pnm_parsing(void) {
    gcut_image image;
    /* Comments anywhere in the header, CRLF and tabs, values kept as stored (maxval 2). */
    const char *path = scratch("ascii.pgm");
    write_text(path, "P2\r\n# made by hand\n3\t2 # width height\n#maxval next\n2\n"
                     "0 1 2\n2\n1\n0\n");
    PASS_IF(read_ok(path, &image) && image.width == 3 && image.height == 2 && image.channels == 1 &&
            image.bit_depth == 8 && memcmp(image.pixels, "\0\1\2\2\1\0", 6) == 0);
    gcut_image_free(&image);
    path = scratch("ascii.ppm");
    write_text(path, "P3 2 1 65535 65535 0 300 1 2 3");
    PASS_IF(read_ok(path, &image) && image.channels == 3 && image.bit_depth == 16 &&
            ((uint16_t *)image.pixels)[0] == 65535 && ((uint16_t *)image.pixels)[2] == 300 &&
            ((uint16_t *)image.pixels)[5] == 3);
    gcut_image_free(&image);
    /* Binary 16-bit written by hand (big-endian), maxval 1000 keeps 16-bit storage. */
    path = scratch("hand16.pgm");
    static const char hand16[] = "P5 # comment\n2 1 1000\n\x03\xe8\x00\x07";
    write_bytes(path, hand16, sizeof hand16 - 1);
    PASS_IF(read_ok(path, &image) && image.bit_depth == 16 &&
            ((uint16_t *)image.pixels)[0] == 1000 && ((uint16_t *)image.pixels)[1] == 7);
    gcut_image_free(&image);
    /* A comment may end the maxval line; the newline is then the delimiter of the raster. */
    path = scratch("comment_raster.pgm");
    static const char comment_raster[] = "P5 1 1 255#why not\n\x2a";
    write_bytes(path, comment_raster, sizeof comment_raster - 1);
    PASS_IF(read_ok(path, &image) && ((uint8_t *)image.pixels)[0] == 42);
    gcut_image_free(&image);
    /* Trailing data after the raster (a second image) is left alone. */
    path = scratch("two_images.pgm");
    static const char two[] = "P5 1 1 255\n\x07P5 1 1 255\n\x08";
    write_bytes(path, two, sizeof two - 1);
    PASS_IF(read_ok(path, &image) && ((uint8_t *)image.pixels)[0] == 7);
    gcut_image_free(&image);

    /* Malformed headers and rasters, each with its line in the message where it has one. */
/* A string literal and its length without the terminating NUL (some hold NUL samples). */
#define TEXT(literal) literal, sizeof(literal) - 1
    static const struct {
        const char *text;
        size_t length;
        gcut_status status;
        const char *mention;
    } bad[] = {
        {TEXT("P5 4x 4 255\n"), GCUT_ERR_PARSE, "width"},
        {TEXT("P5 0 4 255\n"), GCUT_ERR_PARSE, "width"},
        {TEXT("P5 4 -4 255\n"), GCUT_ERR_PARSE, "height"},
        {TEXT("P5 99999999999 1 255\n"), GCUT_ERR_PARSE, "width"},
        {TEXT("P5 16777217 1 255\n"), GCUT_ERR_PARSE, "width"},
        {TEXT("P5 1 16777217 255\n"), GCUT_ERR_PARSE, "height"},
        {TEXT("P5 1 1 0\n\x00"), GCUT_ERR_PARSE, "maxval"},
        {TEXT("P5 1 1 65536\n\x00"), GCUT_ERR_PARSE, "maxval"},
        {TEXT("P5 1 1 255"), GCUT_ERR_PARSE, "truncated"},
        {TEXT("P5\n1\n1\n\n+3\n"), GCUT_ERR_PARSE, ":5:"},
        {TEXT("P2 2 1 5 4 6\n"), GCUT_ERR_PARSE, "maxval"},
        {TEXT("P2 2 1 5 4 x\n"), GCUT_ERR_PARSE, "sample 1"},
        {TEXT("P2 2 1 5 4 5x\n"), GCUT_ERR_PARSE, "sample 1"},
        {TEXT("P2 2 2 5\n4 5\n3\n"), GCUT_ERR_PARSE, "3 of 4"},
        {TEXT("P5 2 1 100\n\x05\x65"), GCUT_ERR_PARSE, "exceeds maxval"},
        {TEXT("P5 2 1 1000\n\x03\xe8\x03\xe9"), GCUT_ERR_PARSE, "sample 1 (pixel 1, 0)"},
        {TEXT("P52 1 1 255\n\x05"), GCUT_ERR_PARSE, "magic"},
        {TEXT("P1 1 1 1\n"), GCUT_ERR_UNSUPPORTED, "PBM"},
        {TEXT("P4 8 1\n\x01"), GCUT_ERR_UNSUPPORTED, "PBM"},
        {TEXT("P7\nWIDTH 1\n"), GCUT_ERR_UNSUPPORTED, "PAM"},
        {TEXT("P"), GCUT_ERR_PARSE, "truncated"},
        {TEXT("GIF89a...."), GCUT_ERR_UNSUPPORTED, "GIF"},
        {TEXT("hello world"), GCUT_ERR_UNSUPPORTED, "PNG, JPEG"},
        {TEXT(""), GCUT_ERR_PARSE, "empty"},
    };
#undef TEXT
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad_%zu.pgm", i);
        path = scratch(name);
        write_bytes(path, bad[i].text, bad[i].length);
        bool ok = read_fails(path, bad[i].status) && error_mentions(bad[i].mention);
        if (!ok)
            fprintf(stderr, "  case %zu: \"%s\"\n", i, bad[i].text);
        PASS_IF(ok);
    }

    /* Absurd but in-range dimensions: refused by the memory cap before any raster is read. */
    path = scratch("huge.ppm");
    write_text(path, "P6 16777216 16777216 255\n");
    PASS_IF(read_fails(path, GCUT_ERR_NOMEM) && error_mentions("out of memory"));
    uint64_t cap = gcut_memory_limit();
    gcut_set_memory_limit(1 << 20);
    path = scratch("over_cap.pgm");
    write_text(path, "P5 2000 2000 255\n");
    PASS_IF(read_fails(path, GCUT_ERR_NOMEM));
    gcut_set_memory_limit(cap);
    /* Under the cap the same header is a truncated file. */
    PASS_IF(read_fails(path, GCUT_ERR_PARSE) && error_mentions("truncated"));

    /* Binary PNM cut at every length; ASCII cut anywhere before its last sample begins. */
    gcut_image small = random_image(5, 3, 3, 16);
    path = scratch("cut_src.ppm");
    CHECK_OK(gcut_image_write(path, &small));
    PASS_IF(cuts_rejected(path, "cut.ppm", 1, 1) == 0);
    gcut_image_free(&small);
    path = scratch("cut_src_ascii.pgm");
    write_text(path, "P2\n# c\n3 2\n255\n10 20 30\n40 50 60\n");
    size_t last_sample = strlen("P2\n# c\n3 2\n255\n10 20 30\n40 50 ");
    size_t length = 0;
    uint8_t *data = read_bytes(path, &length);
    int bad_cuts = 0;
    for (size_t cut = 1; data != NULL && cut < last_sample; cut++) {
        write_bytes(scratch("cut_ascii.pgm"), data, cut);
        bad_cuts += !read_fails(scratch("cut_ascii.pgm"), GCUT_ERR_PARSE);
    }
    free(data);
    PASS_IF(bad_cuts == 0);
}

static uint16_t *samples_of(size_t count) {
    uint16_t *samples = malloc(count * sizeof *samples);
    if (samples == NULL)
        exit(1);
    return samples;
}

/* PNGs written by make_png, checked against what each pixel must decode to. */
static void test_png_oracle(void) {
    if (!have_png)
        return;
    const uint32_t w = 13, h = 11;
    gcut_image image;
    const char *path;
    /* Gray at 1, 2 and 4 bits: expanded to 8 bits by bit replication (v * 255 / max). */
    for (int bits = 1; bits <= 4; bits *= 2) {
        for (int interlace = 0; interlace <= 1; interlace++) {
            uint16_t *samples = samples_of(w * h);
            for (size_t i = 0; i < w * h; i++)
                samples[i] = (uint16_t)(test_rng_next(&rng) % (1u << bits));
            png_spec spec = {w, h, bits, 0, interlace, 1, samples, NULL, 0, NULL, 0, false};
            char name[32];
            snprintf(name, sizeof name, "gray%d_%d.png", bits, interlace);
            path = scratch(name);
            make_png(path, &spec);
            bool ok = read_ok(path, &image) && image.width == w && image.height == h &&
                      image.channels == 1 && image.bit_depth == 8;
            for (size_t i = 0; ok && i < w * h; i++)
                ok = ((uint8_t *)image.pixels)[i] == samples[i] * 255 / ((1u << bits) - 1);
            PASS_IF(ok);
            gcut_image_free(&image);
            free(samples);
        }
    }
    /* 16-bit RGB (interlaced too): native uint16 values, whatever the host byte order. */
    for (int interlace = 0; interlace <= 1; interlace++) {
        uint16_t *samples = samples_of(w * h * 3);
        for (size_t i = 0; i < w * h * 3; i++)
            samples[i] = (uint16_t)test_rng_next(&rng);
        png_spec spec = {w, h, 16, 2, interlace, 3, samples, NULL, 0, NULL, 0, false};
        path = scratch(interlace ? "rgb16_i.png" : "rgb16.png");
        make_png(path, &spec);
        PASS_IF(read_ok(path, &image) && image.channels == 3 && image.bit_depth == 16 &&
                memcmp(image.pixels, samples, w * h * 3 * 2) == 0);
        gcut_image_free(&image);
        free(samples);
    }
    /* A 4-bit palette with partial tRNS: RGBA, alpha 255 past the tRNS entries. */
    uint8_t palette[16 * 3], trns[5];
    for (size_t i = 0; i < sizeof palette; i++)
        palette[i] = (uint8_t)test_rng_next(&rng);
    for (size_t i = 0; i < sizeof trns; i++)
        trns[i] = (uint8_t)(i * 50);
    uint16_t *index = samples_of(w * h);
    for (size_t i = 0; i < w * h; i++)
        index[i] = (uint16_t)(test_rng_next(&rng) % 16);
    png_spec spec = {w, h, 4, 3, 0, 1, index, palette, sizeof palette, trns, sizeof trns, false};
    path = scratch("palette_trns.png");
    make_png(path, &spec);
    bool ok = read_ok(path, &image) && image.channels == 4 && image.bit_depth == 8;
    for (size_t i = 0; ok && i < w * h; i++) {
        const uint8_t *px = (const uint8_t *)image.pixels + 4 * i;
        ok = memcmp(px, palette + 3 * index[i], 3) == 0 &&
             px[3] == (index[i] < sizeof trns ? trns[index[i]] : 255);
    }
    PASS_IF(ok);
    gcut_image_free(&image);
    /* The same palette without tRNS: plain RGB. */
    spec.trns = NULL;
    spec.trns_length = 0;
    path = scratch("palette.png");
    make_png(path, &spec);
    ok = read_ok(path, &image) && image.channels == 3;
    for (size_t i = 0; ok && i < w * h; i++)
        ok = memcmp((const uint8_t *)image.pixels + 3 * i, palette + 3 * index[i], 3) == 0;
    PASS_IF(ok);
    gcut_image_free(&image);
    free(index);
    /* 8-bit gray with a tRNS key colour: gray+alpha, alpha 0 exactly on the key. */
    uint16_t *gray = samples_of(w * h);
    for (size_t i = 0; i < w * h; i++)
        gray[i] = (uint16_t)(test_rng_next(&rng) % 4);
    uint8_t key[2] = {0, 2};
    png_spec keyed = {w, h, 8, 0, 0, 1, gray, NULL, 0, key, 2, false};
    path = scratch("gray_key.png");
    make_png(path, &keyed);
    ok = read_ok(path, &image) && image.channels == 2 && image.bit_depth == 8;
    for (size_t i = 0; ok && i < w * h; i++) {
        const uint8_t *px = (const uint8_t *)image.pixels + 2 * i;
        ok = px[0] == gray[i] && px[1] == (gray[i] == 2 ? 0 : 255);
    }
    PASS_IF(ok);
    gcut_image_free(&image);
    free(gray);

    /* Absurd IHDR sizes: beyond the limit is corrupt; in range but over the cap is NOMEM. */
    path = scratch("wide.png");
    make_png_header(path, 0x7fffffffu, 1);
    PASS_IF(read_fails(path, GCUT_ERR_PARSE) && error_mentions("corrupt PNG"));
    path = scratch("big.png");
    make_png_header(path, 4000, 4000);
    uint64_t cap = gcut_memory_limit();
    gcut_set_memory_limit(1 << 20);
    PASS_IF(read_fails(path, GCUT_ERR_NOMEM));
    gcut_set_memory_limit(cap);
    PASS_IF(read_fails(path, GCUT_ERR_PARSE) && error_mentions("truncated PNG"));
}

/* Rows of every filter type, every colour type gcut reads without libpng (gray, gray+alpha,
 * RGB, RGBA at 8 and 16 bits) and one it leaves to libpng (gray at 4 bits), widths 1 to 37:
 * each decoder (GCUT_PNG_DECODER: the direct path with libdeflate where the system has it,
 * with zlib, and libpng) must give the samples that were written. A filter type past 4 is
 * refused as corrupt by every decoder. */
static void test_png_filters(void) {
    if (!have_png)
        return;
    static const int types[5][2] = {{0, 1}, {4, 2}, {2, 3}, {6, 4}, {0, 1}};
    static const char *const decoders[3] = {"", "zlib", "libpng"};
    for (int t = 0; t < 5; t++)
        for (int bits = 8; bits <= 16; bits += 8) {
            const int depth = t == 4 ? 4 : bits;
            if (t == 4 && bits == 16)
                continue;
            const uint32_t w = 1 + (uint32_t)(test_rng_next(&rng) % 37), h = 11;
            const int spp = types[t][1];
            uint16_t *samples = samples_of((size_t)w * h * (size_t)spp);
            for (size_t i = 0; i < (size_t)w * h * (size_t)spp; i++)
                samples[i] = (uint16_t)(test_rng_next(&rng) % (1u << depth));
            png_spec spec = {w, h, depth, types[t][0], 0, spp, samples, NULL, 0, NULL, 0, true};
            char name[48];
            snprintf(name, sizeof name, "filtered_%d_%d.png", t, depth);
            const char *path = scratch(name);
            make_png(path, &spec);
            for (int d = 0; d < 3; d++) {
                setenv("GCUT_PNG_DECODER", decoders[d], 1);
                gcut_image image;
                const uint64_t before = gcut_memory_in_use();
                bool ok = read_ok(path, &image) && image.width == w && image.height == h &&
                          image.channels == spp && image.bit_depth == (depth == 16 ? 16 : 8) &&
                          gcut_memory_in_use() == before + pixel_bytes(&image);
                for (size_t i = 0; ok && i < (size_t)w * h * (size_t)spp; i++) {
                    const unsigned v = depth == 16  ? ((uint16_t *)image.pixels)[i]
                                       : depth == 8 ? ((uint8_t *)image.pixels)[i]
                                                    : ((uint8_t *)image.pixels)[i] / 17u;
                    ok = v == samples[i];
                }
                if (!ok)
                    printf("filtered PNG %s (colour type %d, %d bits, width %u) misread by "
                           "decoder '%s'\n",
                           name, types[t][0], depth, w, decoders[d]);
                PASS_IF(ok);
                gcut_image_free(&image);
            }
            free(samples);
        }
    /* Filter type 5 on the last row (found by its offset in the stored deflate data). */
    uint16_t samples[4 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    png_spec spec = {4, 1, 8, 2, 0, 3, samples, NULL, 0, NULL, 0, false};
    const char *path = scratch("filter5.png");
    make_png(path, &spec);
    size_t length = 0;
    uint8_t *bytes = read_bytes(path, &length);
    /* signature 8, IHDR 25, IDAT length+type 8, zlib header 2, stored block header 5 */
    const size_t at = 8 + 25 + 8 + 2 + 5;
    bytes[at] = 5;
    /* The stored block's Adler-32 and the chunk's CRC-32 must stay right: patch both. */
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < 13; i++) {
        a = (a + bytes[at + i]) % 65521u;
        b = (b + a) % 65521u;
    }
    const uint32_t adler = (b << 16) | a;
    for (int k = 0; k < 4; k++)
        bytes[at + 13 + (size_t)k] = (uint8_t)(adler >> (24 - 8 * k));
    const uint32_t crc = crc32_of(bytes + 8 + 25 + 4, 4 + 2 + 5 + 13 + 4);
    for (int k = 0; k < 4; k++)
        bytes[at + 17 + (size_t)k] = (uint8_t)(crc >> (24 - 8 * k));
    write_bytes(path, bytes, length);
    free(bytes);
    for (int d = 0; d < 3; d++) {
        setenv("GCUT_PNG_DECODER", decoders[d], 1);
        PASS_IF(read_fails(path, GCUT_ERR_PARSE) && error_mentions("corrupt PNG"));
    }
    unsetenv("GCUT_PNG_DECODER");
}

/* Damage inside the image data of a filtered PNG with the chunk's CRC made right again, so
 * that the reader must find it in the zlib stream or the rows (stored blocks' lengths, the
 * Adler-32, filter types): each decoder either reads an image (a changed filter type or sample
 * can still be a valid file) or refuses it as PARSE, with nothing left allocated. */
static void test_png_inner_damage(void) {
    if (!have_png)
        return;
    static const char *const decoders[3] = {"", "zlib", "libpng"};
    const uint32_t w = 17, h = 9;
    uint16_t *samples = samples_of((size_t)w * h * 3);
    for (size_t i = 0; i < (size_t)w * h * 3; i++)
        samples[i] = (uint16_t)(test_rng_next(&rng) % 256);
    png_spec spec = {w, h, 8, 2, 0, 3, samples, NULL, 0, NULL, 0, true};
    const char *path = scratch("inner.png");
    make_png(path, &spec);
    free(samples);
    size_t length = 0;
    uint8_t *data = read_bytes(path, &length);
    /* signature 8 + IHDR 25; the IDAT's length, type, payload and CRC follow. */
    const size_t idat = 8 + 25, payload = (size_t)data[idat] << 24 | (size_t)data[idat + 1] << 16 |
                                          (size_t)data[idat + 2] << 8 | data[idat + 3];
    uint8_t *mutant = malloc(length);
    const char *bad = scratch("inner_bad.png");
    int wrong = 0, read = 0, refused = 0;
    for (int trial = 0; trial < 200; trial++) {
        memcpy(mutant, data, length);
        const int flips = (int)test_rng_range(&rng, 1, 3);
        for (int k = 0; k < flips; k++)
            mutant[idat + 8 + test_rng_next(&rng) % payload] ^=
                (uint8_t)test_rng_range(&rng, 1, 255);
        const uint32_t crc = crc32_of(mutant + idat + 4, 4 + payload);
        for (int k = 0; k < 4; k++)
            mutant[idat + 8 + payload + (size_t)k] = (uint8_t)(crc >> (24 - 8 * k));
        write_bytes(bad, mutant, length);
        for (int d = 0; d < 3; d++) {
            setenv("GCUT_PNG_DECODER", decoders[d], 1);
            gcut_image image = {0};
            const uint64_t before = gcut_memory_in_use();
            const gcut_status st = gcut_image_read(bad, &image);
            bool ok = st == GCUT_OK ? image.width == w && image.height == h &&
                                          gcut_memory_in_use() == before + pixel_bytes(&image)
                                    : st == GCUT_ERR_PARSE && gcut_memory_in_use() == before;
            read += st == GCUT_OK;
            refused += st != GCUT_OK;
            if (!ok) {
                printf("inner damage trial %d, decoder '%s': %s (%s)\n", trial, decoders[d],
                       gcut_status_name(st), gcut_last_error());
                wrong++;
            }
            gcut_image_free(&image);
        }
    }
    unsetenv("GCUT_PNG_DECODER");
    printf("inner damage: %d reads, %d refused\n", read, refused);
    PASS_IF(wrong == 0);
    free(mutant);
    free(data);
}

static void test_png_damage(void) {
    if (!have_png)
        return;
    gcut_image image = random_image(9, 7, 3, 8);
    const char *path = scratch("damage_src.png");
    CHECK_OK(gcut_image_write(path, &image));
    gcut_image_free(&image);
    PASS_IF(cuts_rejected(path, "cut.png", 1, 1) == 0);
    /* Every cut says "truncated", not "corrupt". */
    size_t length = 0;
    uint8_t *data = read_bytes(path, &length);
    if (data == NULL)
        return;
    const char *cut = scratch("cut_msg.png");
    write_bytes(cut, data, length / 2);
    PASS_IF(read_fails(cut, GCUT_ERR_PARSE) && error_mentions("truncated PNG"));
    /* A flipped bit in the pixel data: the IDAT CRC no longer matches. */
    uint8_t *flipped = malloc(length);
    memcpy(flipped, data, length);
    uint8_t *idat = NULL;
    for (size_t i = 8; i + 4 <= length; i++)
        if (memcmp(data + i, "IDAT", 4) == 0) {
            idat = flipped + i;
            break;
        }
    PASS_IF(idat != NULL);
    if (idat != NULL) {
        idat[8] ^= 0x10;
        const char *bad = scratch("flipped.png");
        write_bytes(bad, flipped, length);
        PASS_IF(read_fails(bad, GCUT_ERR_PARSE) && error_mentions("corrupt PNG"));
    }
    /* Damaged compressed data with a correct CRC: zlib itself objects. */
    make_png(scratch("zdamage.png"),
             &(png_spec){4, 4, 8, 0, 0, 1, (const uint16_t[16]){0}, NULL, 0, NULL, 0, false});
    size_t zlength = 0;
    uint8_t *zdata = read_bytes(scratch("zdamage.png"), &zlength);
    for (size_t i = 8; zdata != NULL && i + 4 <= zlength; i++)
        if (memcmp(zdata + i, "IDAT", 4) == 0) {
            uint32_t chunk_length = (uint32_t)zdata[i - 4] << 24 | (uint32_t)zdata[i - 3] << 16 |
                                    (uint32_t)zdata[i - 2] << 8 | zdata[i - 1];
            zdata[i + 4 + 2] = 0x06; /* block type 3: reserved, invalid */
            uint32_t crc = crc32_of(zdata + i, chunk_length + 4);
            uint8_t *at = zdata + i + 4 + chunk_length;
            at[0] = (uint8_t)(crc >> 24), at[1] = (uint8_t)(crc >> 16);
            at[2] = (uint8_t)(crc >> 8), at[3] = (uint8_t)crc;
            break;
        }
    if (zdata != NULL) {
        write_bytes(scratch("zdamage.png"), zdata, zlength);
        PASS_IF(read_fails(scratch("zdamage.png"), GCUT_ERR_PARSE) &&
                error_mentions("corrupt PNG"));
    }
    free(zdata);
    free(flipped);
    free(data);
}

static void smooth_image(gcut_image *image, int channels) {
    CHECK_OK(gcut_image_alloc(image, 40, 24, 1, channels, 8));
    uint8_t *px = image->pixels;
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 40; x++)
            for (int c = 0; c < channels; c++)
                px[(y * 40 + x) * channels + c] = (uint8_t)(20 + 3 * x + 2 * y + 20 * c);
}

static void test_jpeg(void) {
    if (!have_jpeg)
        return;
    for (int channels = 1; channels <= 3; channels += 2) {
        gcut_image image, back;
        smooth_image(&image, channels);
        const char *path = scratch(channels == 1 ? "gray.jpg" : "rgb.JPEG");
        CHECK_OK(gcut_image_write(path, &image));
        PASS_IF(read_ok(path, &back) && same_geometry(&image, &back));
        if (back.pixels != NULL && same_geometry(&image, &back)) {
            int worst = 0;
            double total = 0;
            for (size_t i = 0; i < pixel_bytes(&image); i++) {
                int d = abs(((uint8_t *)image.pixels)[i] - ((uint8_t *)back.pixels)[i]);
                worst = d > worst ? d : worst;
                total += d;
            }
            double mean = total / (double)pixel_bytes(&image);
            printf("%s: JPEG error worst %d, mean %.3f\n", path, worst, mean);
            /* Quality 95 at full chroma resolution on a smooth ramp (values 20..223, no
             * wrap-around): a few levels at most. */
            PASS_IF(worst <= 6 && mean <= 1.5);
        }
        gcut_image_free(&back);
        gcut_image_free(&image);
        /* Cut at every length: truncated, never a grey-filled success. */
        PASS_IF(cuts_rejected(path, "cut.jpg", 1, 1) == 0);
    }
    /* Detected by content, not by name. */
    size_t length = 0;
    uint8_t *data = read_bytes(scratch("rgb.JPEG"), &length);
    if (data == NULL)
        return;
    write_bytes(scratch("really_jpeg.png"), data, length);
    gcut_image image;
    PASS_IF(read_ok(scratch("really_jpeg.png"), &image) && image.channels == 3);
    gcut_image_free(&image);
    /* A zero height in the frame header, and a marker in the middle of the entropy data. */
    uint8_t *copy = malloc(length);
    memcpy(copy, data, length);
    size_t sof = 0, sos = 0;
    for (size_t i = 2; i + 1 < length; i++) {
        if (copy[i] == 0xff && copy[i + 1] == 0xc0 && sof == 0)
            sof = i;
        if (copy[i] == 0xff && copy[i + 1] == 0xda && sos == 0)
            sos = i;
    }
    PASS_IF(sof > 0 && sos > sof);
    if (sof > 0 && sos > sof) {
        copy[sof + 5] = 0, copy[sof + 6] = 0;
        write_bytes(scratch("zero_height.jpg"), copy, length);
        PASS_IF(read_fails(scratch("zero_height.jpg"), GCUT_ERR_PARSE) &&
                error_mentions("corrupt JPEG"));
        memcpy(copy, data, length);
        size_t middle = sos + (length - sos) / 2;
        copy[middle] = 0xff, copy[middle + 1] = 0xd9;
        write_bytes(scratch("marker.jpg"), copy, length);
        PASS_IF(read_fails(scratch("marker.jpg"), GCUT_ERR_PARSE));
    }
    free(copy);
    free(data);
    /* CMYK: a hand-made header (SOF0 with four components, no Adobe marker) up to its SOS. */
    static const uint8_t cmyk[] = {0xff, 0xd8, 0xff, 0xc0, 0x00, 0x14, 0x08, 0x00, 0x08, 0x00,
                                   0x08, 0x04, 0x01, 0x11, 0x00, 0x02, 0x11, 0x00, 0x03, 0x11,
                                   0x00, 0x04, 0x11, 0x00, 0xff, 0xda, 0x00, 0x08, 0x01, 0x01,
                                   0x00, 0x00, 0x3f, 0x00, 0x00, 0x00, 0xff, 0xd9};
    write_bytes(scratch("cmyk.jpg"), cmyk, sizeof cmyk);
    PASS_IF(read_fails(scratch("cmyk.jpg"), GCUT_ERR_UNSUPPORTED) && error_mentions("CMYK"));
    /* A progressive 600x600 header: its pixels (360 kB) fit a 1 MiB cap, libjpeg's whole-image
     * coefficient buffer (720 kB) on top does not. Under no cap it is a truncated file. */
    static const uint8_t progressive[] = {0xff, 0xd8, 0xff, 0xc2, 0x00, 0x0b, 0x08, 0x02, 0x58,
                                          0x02, 0x58, 0x01, 0x01, 0x11, 0x00, 0xff, 0xda, 0x00,
                                          0x08, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00};
    write_bytes(scratch("progressive.jpg"), progressive, sizeof progressive);
    uint64_t cap = gcut_memory_limit();
    gcut_set_memory_limit(1 << 20);
    PASS_IF(read_fails(scratch("progressive.jpg"), GCUT_ERR_NOMEM) && error_mentions("memory cap"));
    gcut_set_memory_limit(cap);
    PASS_IF(read_fails(scratch("progressive.jpg"), GCUT_ERR_PARSE));
}

static void test_write_errors(void) {
    gcut_image gray16 = random_image(4, 3, 1, 16);
    gcut_image rgba = random_image(4, 3, 4, 8);
    gcut_image rgb = random_image(4, 3, 3, 8);
    PASS_IF(gcut_image_write(scratch("x.jpg"), &gray16) == GCUT_ERR_UNSUPPORTED &&
            error_mentions(have_jpeg ? "8-bit" : "libjpeg"));
    if (have_jpeg)
        PASS_IF(gcut_image_write(scratch("x.jpg"), &rgba) == GCUT_ERR_UNSUPPORTED &&
                error_mentions("RGBA"));
    PASS_IF(gcut_image_write(scratch("x.bmp"), &rgb) == GCUT_ERR_UNSUPPORTED &&
            error_mentions("extension"));
    PASS_IF(gcut_image_write(scratch("x.pgm"), &rgb) == GCUT_ERR_UNSUPPORTED &&
            error_mentions(".ppm"));
    PASS_IF(gcut_image_write(scratch("x.ppm"), &gray16) == GCUT_ERR_UNSUPPORTED &&
            error_mentions(".pgm"));
    PASS_IF(gcut_image_write(scratch("x.pnm"), &rgba) == GCUT_ERR_UNSUPPORTED);
    struct stat info;
    PASS_IF(stat(scratch("x.pnm"), &info) != 0); /* nothing left behind */
    char missing_dir[512];
    snprintf(missing_dir, sizeof missing_dir, "%s/no/such/dir.pgm", scratch_dir);
    PASS_IF(gcut_image_write(missing_dir, &gray16) == GCUT_ERR_IO &&
            error_mentions("no/such/dir.pgm"));
    gcut_image volume;
    CHECK_OK(gcut_image_alloc(&volume, 4, 3, 2, 1, 8));
    PASS_IF(gcut_image_write(scratch("x.png"), &volume) == GCUT_ERR_UNSUPPORTED &&
            error_mentions("volume"));
    gcut_image_free(&volume);
    gcut_image empty = {4, 3, 1, 1, 8, NULL};
    PASS_IF(gcut_image_write(scratch("x.pgm"), &empty) == GCUT_ERR_INVALID_ARG);
    gcut_image odd = {4, 3, 1, 1, 12, rgb.pixels};
    PASS_IF(gcut_image_write(scratch("x.pgm"), &odd) == GCUT_ERR_INVALID_ARG &&
            error_mentions("bit_depth"));
    PASS_IF(gcut_image_write(NULL, &rgb) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_image_write(scratch("x.pgm"), NULL) == GCUT_ERR_INVALID_ARG);
    gcut_image_free(&gray16);
    gcut_image_free(&rgba);
    gcut_image_free(&rgb);
}

static void test_read_errors(void) {
    char missing[512];
    snprintf(missing, sizeof missing, "%s/does_not_exist.png", scratch_dir);
    PASS_IF(read_fails(missing, GCUT_ERR_IO) && error_mentions("No such file"));
    PASS_IF(read_fails(scratch_dir, GCUT_ERR_IO) && error_mentions("directory"));
    gcut_image image;
    PASS_IF(gcut_image_read(NULL, &image) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_image_read(missing, NULL) == GCUT_ERR_INVALID_ARG);
    /* A cut PNG signature is a truncated PNG, not an unknown format. */
    write_bytes(scratch("sig.png"), "\x89PN", 3);
    if (have_png)
        PASS_IF(read_fails(scratch("sig.png"), GCUT_ERR_PARSE) && error_mentions("truncated"));
    else
        PASS_IF(read_fails(scratch("sig.png"), GCUT_ERR_UNSUPPORTED) && error_mentions("libpng"));
}

static void test_volumes(void) {
    /* Raw: 16-bit native order, two channels; file size must match exactly. */
    const int64_t d = 3, h = 4, w = 5;
    size_t count = (size_t)(d * h * w * 2);
    uint16_t *voxels = samples_of(count);
    for (size_t i = 0; i < count; i++)
        voxels[i] = (uint16_t)test_rng_next(&rng);
    const char *path = scratch("volume.raw");
    write_bytes(path, voxels, count * 2);
    gcut_image volume;
    PASS_IF(gcut_volume_read_raw(path, d, h, w, 2, 16, &volume) == GCUT_OK && volume.depth == d &&
            volume.height == h && volume.width == w && volume.channels == 2 &&
            volume.bit_depth == 16 && memcmp(volume.pixels, voxels, count * 2) == 0);
    gcut_image_free(&volume);
    uint64_t before = gcut_memory_in_use();
    PASS_IF(gcut_volume_read_raw(path, d, h, w + 1, 2, 16, &volume) == GCUT_ERR_PARSE &&
            error_mentions("288 bytes") && error_mentions("240") && volume.pixels == NULL &&
            gcut_memory_in_use() == before);
    PASS_IF(gcut_volume_read_raw(path, d, h, w, 2, 8, &volume) == GCUT_ERR_PARSE &&
            error_mentions("120 bytes"));
    write_bytes(scratch("short.raw"), voxels, count * 2 - 1);
    PASS_IF(gcut_volume_read_raw(scratch("short.raw"), d, h, w, 2, 16, &volume) == GCUT_ERR_PARSE &&
            error_mentions("239"));
    PASS_IF(gcut_volume_read_raw(path, 0, h, w, 2, 16, &volume) == GCUT_ERR_INVALID_ARG &&
            error_mentions("depth"));
    PASS_IF(gcut_volume_read_raw(path, d, h, w, 2, 32, &volume) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_volume_read_raw(scratch("nope.raw"), d, h, w, 2, 16, &volume) == GCUT_ERR_IO &&
            error_mentions("nope.raw"));
    PASS_IF(gcut_volume_read_raw(scratch_dir, d, h, w, 2, 16, &volume) == GCUT_ERR_IO);
    free(voxels);

    /* Slices: three PGMs (and one PNG where built) stacked in z order. */
    gcut_image slices[4];
    const char *paths[4];
    char name[32];
    int n = have_png ? 4 : 3;
    for (int z = 0; z < n; z++) {
        slices[z] = random_image(6, 5, 1, 8);
        snprintf(name, sizeof name, "slice%d.%s", z, z == 3 ? "png" : "pgm");
        paths[z] = scratch(name);
        CHECK_OK(gcut_image_write(paths[z], &slices[z]));
    }
    bool ok = gcut_volume_read_slices(paths, n, &volume) == GCUT_OK && volume.depth == n &&
              volume.width == 6 && volume.height == 5 && volume.channels == 1;
    for (int z = 0; ok && z < n; z++)
        ok = memcmp((uint8_t *)volume.pixels + z * 30, slices[z].pixels, 30) == 0;
    PASS_IF(ok);
    gcut_image_free(&volume);
    for (int z = 0; z < n; z++)
        gcut_image_free(&slices[z]);
    /* A slice of another size, another depth, a missing slice: each named. */
    gcut_image other = random_image(6, 4, 1, 8);
    const char *odd_paths[3] = {paths[0], paths[1], scratch("odd_slice.pgm")};
    CHECK_OK(gcut_image_write(odd_paths[2], &other));
    gcut_image_free(&other);
    before = gcut_memory_in_use();
    PASS_IF(gcut_volume_read_slices(odd_paths, 3, &volume) == GCUT_ERR_PARSE &&
            error_mentions("slice 2") && error_mentions("odd_slice.pgm") && volume.pixels == NULL &&
            gcut_memory_in_use() == before);
    other = random_image(6, 5, 1, 16);
    CHECK_OK(gcut_image_write(odd_paths[2], &other));
    gcut_image_free(&other);
    PASS_IF(gcut_volume_read_slices(odd_paths, 3, &volume) == GCUT_ERR_PARSE &&
            error_mentions("16-bit"));
    odd_paths[1] = scratch("missing_slice.pgm");
    PASS_IF(gcut_volume_read_slices(odd_paths, 3, &volume) == GCUT_ERR_IO &&
            error_mentions("slice 1") && error_mentions("missing_slice.pgm") &&
            gcut_memory_in_use() == before);
    PASS_IF(gcut_volume_read_slices(paths, 0, &volume) == GCUT_ERR_INVALID_ARG);
    PASS_IF(gcut_volume_read_slices(NULL, 2, &volume) == GCUT_ERR_INVALID_ARG);
    const char *with_null[2] = {paths[0], NULL};
    PASS_IF(gcut_volume_read_slices(with_null, 2, &volume) == GCUT_ERR_INVALID_ARG &&
            error_mentions("paths[1]"));
}

/* Random byte damage to valid files of each format, under a small memory cap: every read
 * either succeeds with a sane image or fails as PARSE / UNSUPPORTED / NOMEM, holding nothing
 * afterwards (and, under ASan, touching nothing out of bounds). Seeded by test_seed(). */
static void test_random_damage(void) {
    gcut_image image = random_image(12, 9, 3, 8);
    const char *sources[3] = {scratch("fuzz.ppm"), have_png ? scratch("fuzz.png") : NULL,
                              have_jpeg ? scratch("fuzz.jpg") : NULL};
    for (int f = 0; f < 3; f++)
        if (sources[f] != NULL)
            CHECK_OK(gcut_image_write(sources[f], &image));
    gcut_image_free(&image);
    uint64_t cap = gcut_memory_limit();
    gcut_set_memory_limit(64 << 20);
    int bad = 0, accepted = 0, rejected = 0;
    for (int f = 0; f < 3; f++) {
        size_t length = 0;
        uint8_t *data = sources[f] != NULL ? read_bytes(sources[f], &length) : NULL;
        if (data == NULL)
            continue;
        uint8_t *mutant = malloc(length);
        const char *path = scratch("mutant.img");
        for (int trial = 0; trial < 300; trial++) {
            memcpy(mutant, data, length);
            int flips = (int)test_rng_range(&rng, 1, 4);
            for (int k = 0; k < flips; k++) {
                /* Half the damage lands in the first 64 bytes, where the headers are. */
                size_t span = test_rng_next(&rng) % 2 && length > 64 ? 64 : length;
                mutant[test_rng_next(&rng) % span] ^= (uint8_t)test_rng_range(&rng, 1, 255);
            }
            size_t cut = test_rng_next(&rng) % 4 == 0
                             ? (size_t)test_rng_range(&rng, 1, (int64_t)length)
                             : length;
            write_bytes(path, mutant, cut);
            uint64_t before = gcut_memory_in_use();
            gcut_status status = gcut_image_read(path, &image);
            bool ok =
                gcut_memory_in_use() == before + (status == GCUT_OK ? pixel_bytes(&image) : 0);
            if (status == GCUT_OK) {
                ok = ok && image.width >= 1 && image.height >= 1 && image.depth == 1 &&
                     image.channels >= 1 && image.channels <= 4 && image.pixels != NULL;
                accepted++;
            } else {
                ok = ok &&
                     (status == GCUT_ERR_PARSE || status == GCUT_ERR_UNSUPPORTED ||
                      status == GCUT_ERR_NOMEM) &&
                     image.pixels == NULL;
                rejected++;
            }
            if (!ok) {
                fprintf(stderr, "  source %s trial %d: %s (%s)\n", sources[f], trial,
                        gcut_status_name(status), gcut_last_error());
                bad++;
            }
            gcut_image_free(&image);
        }
        free(mutant);
        free(data);
    }
    gcut_set_memory_limit(cap);
    printf("random damage: %d reads accepted, %d rejected\n", accepted, rejected);
    PASS_IF(bad == 0);
}

int main(void) {
    test_rng_init(&rng, test_seed());
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch_dir, sizeof scratch_dir, "%s/gcut_test_image_XXXXXX",
             tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    if (mkdtemp(scratch_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    /* Which optional codecs this build has: a write says so by its status. */
    gcut_image probe;
    CHECK_OK(gcut_image_alloc(&probe, 1, 1, 1, 1, 8));
    have_png = gcut_image_write(scratch("probe.png"), &probe) == GCUT_OK;
    if (!have_png)
        PASS_IF(error_mentions("libpng"));
    have_jpeg = gcut_image_write(scratch("probe.jpg"), &probe) == GCUT_OK;
    if (!have_jpeg)
        PASS_IF(error_mentions("libjpeg"));
    gcut_image_free(&probe);
    printf("PNG %s, JPEG %s\n", have_png ? "built in" : "absent",
           have_jpeg ? "built in" : "absent");

    uint64_t start = gcut_memory_in_use();
    test_alloc();
    test_lossless_round_trips();
    test_mask_round_trips();
    test_mask_strips();
    test_pnm_bytes();
    test_pnm_parsing();
    test_png_oracle();
    test_png_filters();
    test_png_inner_damage();
    test_png_damage();
    test_jpeg();
    test_write_errors();
    test_read_errors();
    test_volumes();
    test_random_damage();
    PASS_IF(gcut_memory_in_use() == start);
    scratch_cleanup();
    return test_finish("test_image", passed);
}
