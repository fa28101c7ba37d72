/* image.c - image and volume I/O: PNG (libpng), JPEG (libjpeg) and PGM/PPM (own code, Netpbm
 * spec), read by magic bytes and written by extension; raw volumes and slice stacks. Library
 * errors unwind by longjmp into one frame per file, so bad input is a status, never a crash. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef GCUT_HAVE_PNG
#include <dlfcn.h>
#include <png.h>
#include <pthread.h>
#include <zlib.h>
#endif
#ifdef GCUT_HAVE_JPEG
#include <jerror.h>
#include <jpeglib.h>
#endif

/* Larger sides are not pictures but corrupt headers; the limit keeps every size product of
 * three sides and a sample size far inside int64. */
#define MAX_SIDE ((int64_t)1 << 24)

static const char *const channel_names[] = {"?", "gray", "gray+alpha", "RGB", "RGBA"};

static const char *channels_name(int channels) {
    return channels >= 1 && channels <= 4 ? channel_names[channels] : "?";
}

/* Bytes of pixel data for a geometry whose sides are within MAX_SIDE; false if the total
 * passes INT64_MAX (only reachable with three huge sides). */
static bool geometry_bytes(int64_t width, int64_t height, int64_t depth, int channels,
                           int bit_depth, uint64_t *bytes) {
    uint64_t plane = (uint64_t)width * (uint64_t)height * (uint64_t)channels * (bit_depth / 8u);
    if (depth != 0 && plane > (uint64_t)INT64_MAX / (uint64_t)depth)
        return false;
    *bytes = plane * (uint64_t)depth;
    return true;
}

static gcut_status check_geometry(const char *who, int64_t width, int64_t height, int64_t depth,
                                  int channels, int bit_depth) {
    const char *names[3] = {"width", "height", "depth"};
    int64_t sides[3] = {width, height, depth};
    for (int i = 0; i < 3; i++)
        if (sides[i] < 1 || sides[i] > MAX_SIDE)
            return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: %s %lld outside 1..%lld", who, names[i],
                              (long long)sides[i], (long long)MAX_SIDE);
    if (channels < 1 || channels > 4)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: channels %d outside 1..4", who, channels);
    if (bit_depth != 8 && bit_depth != 16)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "%s: bit_depth %d is neither 8 nor 16", who,
                          bit_depth);
    uint64_t bytes;
    if (!geometry_bytes(width, height, depth, channels, bit_depth, &bytes) ||
        bytes > (uint64_t)SIZE_MAX)
        return gcut__fail(GCUT_ERR_NOMEM,
                          "%s: %lld x %lld x %lld x %d samples do not fit in memory", who,
                          (long long)width, (long long)height, (long long)depth, channels);
    return GCUT_OK;
}

/* Allocate image pixels under the memory cap, uninitialised when the caller overwrites them
 * all (decoders), zeroed otherwise. The geometry must have passed check_geometry(). */
static gcut_status image_alloc(gcut_image *image, int64_t width, int64_t height, int64_t depth,
                               int channels, int bit_depth, bool zero, const char *what,
                               const char *path) {
    uint64_t bytes = 0;
    geometry_bytes(width, height, depth, channels, bit_depth, &bytes);
    void *pixels = zero ? gcut__calloc((size_t)bytes, 1, what) : gcut__malloc((size_t)bytes, what);
    if (pixels == NULL) {
        if (path == NULL)
            return GCUT_ERR_NOMEM;
        char reason[512];
        snprintf(reason, sizeof reason, "%s", gcut_last_error());
        return gcut__fail(GCUT_ERR_NOMEM, "%s: %s", path, reason);
    }
    image->width = width;
    image->height = height;
    image->depth = depth;
    image->channels = channels;
    image->bit_depth = bit_depth;
    image->pixels = pixels;
    return GCUT_OK;
}

gcut_status gcut_image_alloc(gcut_image *image, int64_t width, int64_t height, int64_t depth,
                             int channels, int bit_depth) {
    if (image == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_image_alloc: image is NULL");
    memset(image, 0, sizeof *image);
    gcut_status status =
        check_geometry("gcut_image_alloc", width, height, depth, channels, bit_depth);
    if (status != GCUT_OK)
        return status;
    return image_alloc(image, width, height, depth, channels, bit_depth, true, "image pixels",
                       NULL);
}

void gcut_image_free(gcut_image *image) {
    if (image == NULL)
        return;
    gcut__free(image->pixels);
    memset(image, 0, sizeof *image);
}

static size_t image_bytes(const gcut_image *image) {
    uint64_t bytes = 0;
    geometry_bytes(image->width, image->height, image->depth, image->channels, image->bit_depth,
                   &bytes);
    return (size_t)bytes;
}

/* Open path for reading. *size gets the file's length, or -1 when it is not a regular file
 * (a pipe): then readers rely on end-of-file alone. */
static gcut_status open_input(const char *path, FILE **out, int64_t *size) {
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat info;
    if (fstat(fileno(file), &info) != 0) {
        int err = errno;
        fclose(file);
        return gcut__fail(GCUT_ERR_IO, "%s: cannot stat: %s", path, strerror(err));
    }
    if (S_ISDIR(info.st_mode)) {
        fclose(file);
        return gcut__fail(GCUT_ERR_IO, "%s: cannot read: %s", path, strerror(EISDIR));
    }
    *size = S_ISREG(info.st_mode) ? (int64_t)info.st_size : -1;
    *out = file;
    return GCUT_OK;
}

/* Close a file written by one of the writers; a failed write or close removes the partial
 * file so that no truncated image is left behind under a valid name. */
static gcut_status finish_output(FILE *file, const char *path, gcut_status status) {
    if (status == GCUT_OK && ferror(file))
        status = gcut__fail(GCUT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    if (fclose(file) != 0 && status == GCUT_OK)
        status = gcut__fail(GCUT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    if (status != GCUT_OK)
        remove(path);
    return status;
}

static gcut_status open_output(const char *path, FILE **out) {
    *out = fopen(path, "wb");
    if (*out == NULL)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    return GCUT_OK;
}

/* ------------------------------------------------------------------------------------------
 * PGM / PPM (Netpbm): P2/P5 gray, P3/P6 RGB; maxval up to 255 gives 8-bit samples, above
 * that 16-bit. Samples are kept as stored (not rescaled to the full range), so a label mask
 * with maxval 2 reads back as 0..2.
 * ---------------------------------------------------------------------------------------- */

typedef struct pnm_reader {
    FILE *file;
    const char *path;
    int line;
} pnm_reader;

static bool pnm_space(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* A character for a message: quoted if printable, else its code (a NUL in a header). */
static const char *show_char(int c, char shown[8]) {
    if (c > ' ' && c < 127)
        snprintf(shown, 8, "'%c'", c);
    else
        snprintf(shown, 8, "0x%02x", (unsigned)c & 0xffu);
    return shown;
}

static int pnm_getc(pnm_reader *reader) {
    int c = getc(reader->file);
    if (c == '\n')
        reader->line++;
    return c;
}

static gcut_status pnm_eof(pnm_reader *reader, const char *what) {
    if (ferror(reader->file))
        return gcut__fail(GCUT_ERR_IO, "%s: read error: %s", reader->path, strerror(errno));
    return gcut__fail(GCUT_ERR_PARSE, "%s:%d: truncated PNM: file ends in the header (%s)",
                      reader->path, reader->line, what);
}

/* One header number: whitespace and '#' comments before it, decimal digits, then one
 * delimiter (whitespace, or a comment running to its newline), which is consumed: after the
 * maxval that single delimiter is all that separates the header from a binary raster. */
static gcut_status pnm_header_number(pnm_reader *reader, const char *what, int64_t low,
                                     int64_t high, int64_t *value) {
    char shown[8];
    int c;
    for (;;) {
        c = pnm_getc(reader);
        if (c == '#') {
            while (c != '\n' && c != EOF)
                c = pnm_getc(reader);
        }
        if (c == EOF)
            return pnm_eof(reader, what);
        if (!pnm_space(c))
            break;
    }
    if (c < '0' || c > '9')
        return gcut__fail(GCUT_ERR_PARSE, "%s:%d: %s: expected a decimal number, found %s",
                          reader->path, reader->line, what, show_char(c, shown));
    int64_t number = 0;
    while (c >= '0' && c <= '9') {
        number = number * 10 + (c - '0');
        if (number > high)
            return gcut__fail(GCUT_ERR_PARSE, "%s:%d: %s is larger than %lld", reader->path,
                              reader->line, what, (long long)high);
        c = pnm_getc(reader);
    }
    if (number < low)
        return gcut__fail(GCUT_ERR_PARSE, "%s:%d: %s %lld is below %lld", reader->path,
                          reader->line, what, (long long)number, (long long)low);
    if (c == '#') {
        while (c != '\n' && c != EOF)
            c = pnm_getc(reader);
    }
    if (c == EOF)
        return pnm_eof(reader, what);
    if (!pnm_space(c))
        return gcut__fail(GCUT_ERR_PARSE, "%s:%d: %s: unexpected %s after the number", reader->path,
                          reader->line, what, show_char(c, shown));
    *value = number;
    return GCUT_OK;
}

static gcut_status pnm_read_ascii(pnm_reader *reader, gcut_image *image, int64_t maxval) {
    int64_t count = image->width * image->height * image->channels;
    uint8_t *bytes = image->pixels;
    uint16_t *words = image->pixels;
    char shown[8];
    for (int64_t i = 0; i < count; i++) {
        int c;
        do {
            c = pnm_getc(reader);
        } while (pnm_space(c));
        if (c == EOF) {
            if (ferror(reader->file))
                return gcut__fail(GCUT_ERR_IO, "%s: read error: %s", reader->path, strerror(errno));
            return gcut__fail(GCUT_ERR_PARSE, "%s:%d: truncated PNM: %lld of %lld samples present",
                              reader->path, reader->line, (long long)i, (long long)count);
        }
        if (c < '0' || c > '9')
            return gcut__fail(GCUT_ERR_PARSE, "%s:%d: sample %lld: expected a number, found %s",
                              reader->path, reader->line, (long long)i, show_char(c, shown));
        int64_t sample = 0;
        while (c >= '0' && c <= '9') {
            sample = sample * 10 + (c - '0');
            if (sample > maxval)
                return gcut__fail(GCUT_ERR_PARSE, "%s:%d: sample %lld exceeds maxval %lld",
                                  reader->path, reader->line, (long long)i, (long long)maxval);
            c = pnm_getc(reader);
        }
        if (c != EOF && !pnm_space(c))
            return gcut__fail(GCUT_ERR_PARSE, "%s:%d: sample %lld: unexpected %s", reader->path,
                              reader->line, (long long)i, show_char(c, shown));
        if (image->bit_depth == 8)
            bytes[i] = (uint8_t)sample;
        else
            words[i] = (uint16_t)sample;
    }
    return GCUT_OK;
}

static gcut_status pnm_read_binary(pnm_reader *reader, gcut_image *image, int64_t maxval,
                                   int64_t file_size) {
    size_t bytes = image_bytes(image);
    long header_end = ftell(reader->file);
    if (file_size >= 0 && header_end >= 0 && (uint64_t)(file_size - header_end) < bytes)
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s: truncated PNM: the raster needs %zu bytes, the file has %lld "
                          "after the header",
                          reader->path, bytes, (long long)(file_size - header_end));
    size_t got = fread(image->pixels, 1, bytes, reader->file);
    if (got != bytes) {
        if (ferror(reader->file))
            return gcut__fail(GCUT_ERR_IO, "%s: read error: %s", reader->path, strerror(errno));
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s: truncated PNM: the raster needs %zu bytes, the file has %zu",
                          reader->path, bytes, got);
    }
    int64_t count = (int64_t)(bytes / (size_t)(image->bit_depth / 8));
    int64_t bad = -1;
    if (image->bit_depth == 8) {
        const uint8_t *samples = image->pixels;
        for (int64_t i = 0; i < count && bad < 0; i++)
            if (samples[i] > maxval)
                bad = i;
    } else {
        /* The format stores 16-bit samples big-endian; the image holds them natively. */
        uint8_t *raw = image->pixels;
        uint16_t *samples = image->pixels;
        for (int64_t i = 0; i < count; i++) {
            uint16_t sample = (uint16_t)((raw[2 * i] << 8) | raw[2 * i + 1]);
            samples[i] = sample;
            if (sample > maxval && bad < 0)
                bad = i;
        }
    }
    if (bad >= 0)
        return gcut__fail(GCUT_ERR_PARSE, "%s: sample %lld (pixel %lld, %lld) exceeds maxval %lld",
                          reader->path, (long long)bad,
                          (long long)(bad / image->channels % image->width),
                          (long long)(bad / image->channels / image->width), (long long)maxval);
    return GCUT_OK;
}

static gcut_status read_pnm(FILE *file, const char *path, int64_t file_size, gcut_image *out) {
    pnm_reader reader = {file, path, 1};
    char magic[2] = {0, 0}, shown[8];
    size_t got = fread(magic, 1, 2, file);
    if (got < 2)
        return gcut__fail(GCUT_ERR_PARSE, "%s: truncated PNM: no magic number", path);
    int kind = magic[1] - '0';
    if (kind == 1 || kind == 4)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "%s: PBM bitmaps (P%d) are not read; convert to PGM (P5)", path, kind);
    if (kind == 7)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "%s: PAM (P7) is not read; convert to PGM (P5) or PPM (P6)", path);
    if (kind != 2 && kind != 3 && kind != 5 && kind != 6)
        return gcut__fail(GCUT_ERR_UNSUPPORTED, "%s: not a PGM/PPM file (magic 'P%c')", path,
                          magic[1]);
    int channels = kind == 3 || kind == 6 ? 3 : 1;
    int64_t width, height, maxval;
    int c = getc(file);
    if (c == EOF)
        return pnm_eof(&reader, "width");
    if (!pnm_space(c) && c != '#')
        return gcut__fail(GCUT_ERR_PARSE, "%s:1: unexpected %s after the magic number", path,
                          show_char(c, shown));
    ungetc(c, file);
    gcut_status status = pnm_header_number(&reader, "width", 1, MAX_SIDE, &width);
    if (status == GCUT_OK)
        status = pnm_header_number(&reader, "height", 1, MAX_SIDE, &height);
    if (status == GCUT_OK)
        status = pnm_header_number(&reader, "maxval", 1, 65535, &maxval);
    if (status != GCUT_OK)
        return status;
    int bit_depth = maxval > 255 ? 16 : 8;
    status = check_geometry(path, width, height, 1, channels, bit_depth);
    if (status == GCUT_OK)
        status = image_alloc(out, width, height, 1, channels, bit_depth, false, "PNM pixels", path);
    if (status != GCUT_OK)
        return status;
    status = kind <= 3 ? pnm_read_ascii(&reader, out, maxval)
                       : pnm_read_binary(&reader, out, maxval, file_size);
    if (status != GCUT_OK)
        gcut_image_free(out);
    return status;
}

static gcut_status write_pnm(const char *path, const gcut_image *image, int kind) {
    FILE *file;
    gcut_status status = open_output(path, &file);
    if (status != GCUT_OK)
        return status;
    fprintf(file, "P%d\n%lld %lld\n%d\n", kind, (long long)image->width, (long long)image->height,
            image->bit_depth == 8 ? 255 : 65535);
    if (image->bit_depth == 8) {
        fwrite(image->pixels, 1, image_bytes(image), file);
        return finish_output(file, path, GCUT_OK);
    }
    size_t row_samples = (size_t)(image->width * image->channels);
    uint8_t *row = gcut__malloc(row_samples * 2, "PPM row");
    if (row == NULL)
        return finish_output(file, path, GCUT_ERR_NOMEM);
    const uint16_t *samples = image->pixels;
    for (int64_t y = 0; y < image->height && !ferror(file); y++) {
        for (size_t i = 0; i < row_samples; i++) {
            uint16_t sample = samples[(size_t)y * row_samples + i];
            row[2 * i] = (uint8_t)(sample >> 8);
            row[2 * i + 1] = (uint8_t)(sample & 0xff);
        }
        fwrite(row, 1, row_samples * 2, file);
    }
    gcut__free(row);
    return finish_output(file, path, GCUT_OK);
}

/* ------------------------------------------------------------------------------------------
 * PNG through libpng: palettes, tRNS and 1/2/4-bit gray are expanded to 8-bit samples;
 * 16-bit samples are swapped from the file's big-endian order to the host's.
 * ---------------------------------------------------------------------------------------- */

#ifdef GCUT_HAVE_PNG

static bool host_little_endian(void) {
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* One decode or encode. libpng's errors longjmp back to png_read_frame/png_write_frame,
 * which touch nothing but this struct (owned by their caller), so no local variable of the
 * setjmp frame is read after the jump. */
typedef struct png_job {
    FILE *file;
    const char *path;
    png_structp png;
    png_infop info;
    png_bytep *rows;
    gcut_image image;
    bool end_of_file; /* the data ran out: truncated rather than corrupt */
    bool read_error;  /* the system failed to read */
    char message[256];
} png_job;

static void png_on_error(png_structp png, png_const_charp message) {
    png_job *job = png_get_error_ptr(png);
    snprintf(job->message, sizeof job->message, "%s", message);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp message) {
    /* Warnings concern ancillary data gcut ignores (colour profiles, text); stay quiet. */
    (void)png, (void)message;
}

static void png_on_read(png_structp png, png_bytep data, size_t length) {
    png_job *job = png_get_io_ptr(png);
    if (fread(data, 1, length, job->file) != length) {
        job->read_error = ferror(job->file) != 0;
        job->end_of_file = !job->read_error;
        png_error(png, job->read_error ? strerror(errno) : "unexpected end of file");
    }
}

static gcut_status png_read_frame(png_job *job) {
    if (setjmp(png_jmpbuf(job->png))) {
        if (job->read_error)
            return gcut__fail(GCUT_ERR_IO, "%s: read error: %s", job->path, job->message);
        return gcut__fail(GCUT_ERR_PARSE, "%s: %s PNG (%s)", job->path,
                          job->end_of_file ? "truncated" : "corrupt", job->message);
    }
    png_structp png = job->png;
    png_infop info = job->info;
    png_set_read_fn(png, job, png_on_read);
    png_set_user_limits(png, (png_uint_32)MAX_SIDE, (png_uint_32)MAX_SIDE);
    png_read_info(png, info);
    png_uint_32 width = png_get_image_width(png, info);
    png_uint_32 height = png_get_image_height(png, info);
    int color_type = png_get_color_type(png, info);
    int bit_depth = png_get_bit_depth(png, info);
    if (color_type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    if (bit_depth == 16 && host_little_endian())
        png_set_swap(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    int out_depth = png_get_bit_depth(png, info);
    gcut_status status = check_geometry(job->path, width, height, 1, channels, out_depth);
    if (status == GCUT_OK)
        status = image_alloc(&job->image, width, height, 1, channels, out_depth, false,
                             "PNG pixels", job->path);
    if (status != GCUT_OK)
        return status;
    size_t stride = (size_t)width * (size_t)channels * (size_t)(out_depth / 8);
    if (png_get_rowbytes(png, info) != stride)
        return gcut__fail(GCUT_ERR_INTERNAL, "%s: libpng row of %zu bytes, expected %zu", job->path,
                          (size_t)png_get_rowbytes(png, info), stride);
    job->rows = gcut__malloc((size_t)height * sizeof(png_bytep), "PNG row pointers");
    if (job->rows == NULL)
        return GCUT_ERR_NOMEM;
    for (png_uint_32 y = 0; y < height; y++)
        job->rows[y] = (png_bytep)job->image.pixels + (size_t)y * stride;
    png_read_image(png, job->rows);
    /* Reading to IEND checks the CRCs of the chunks after the pixels: a cut file fails. */
    png_read_end(png, NULL);
    return GCUT_OK;
}

/* ------------------------------------------------------------------------------------------
 * PNG's common case without libpng (issue #17, fifth pass; docs/CUDA-GRID.md "Segmentation
 * process time (fifth pass)"): non-interlaced 8- or 16-bit gray, gray+alpha, RGB or RGBA with
 * no palette and no tRNS. The file is read at once, every chunk's CRC checked, the IDAT
 * payloads joined in place and inflated in one call, by libdeflate where the system has it
 * (libdeflate.so.0, loaded with dlopen on first use: no build dependency) else by zlib, then
 * unfiltered row by row (PNG spec 1.2 section 6). libpng inflates row by row and was 60% zlib
 * on a hard 1920x1080 photo; libdeflate inflates the same stream in ~0.55x zlib's time. Any
 * other file, and any file this path finds wrong (CRC, truncation, filter type, extra data),
 * is read again by libpng from its start, so libpng's messages for bad files are unchanged.
 * GCUT_PNG_DECODER=libpng forces libpng, =zlib this path without libdeflate.
 * ---------------------------------------------------------------------------------------- */

typedef void *(*deflate_alloc_fn)(void);
typedef int (*deflate_zlib_fn)(void *, const void *, size_t, void *, size_t, size_t *);
typedef void (*deflate_free_fn)(void *);
typedef uint32_t (*deflate_crc_fn)(uint32_t, const void *, size_t);

static struct {
    deflate_alloc_fn alloc;
    deflate_zlib_fn zlib_decompress;
    deflate_free_fn release;
    deflate_crc_fn crc32;
} libdeflate;
static pthread_once_t libdeflate_once = PTHREAD_ONCE_INIT;

static void libdeflate_load(void) {
    void *h = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return;
    /* POSIX: dlsym's void * converts to a function pointer (memcpy keeps -Wpedantic quiet). */
    void *a = dlsym(h, "libdeflate_alloc_decompressor"),
         *z = dlsym(h, "libdeflate_zlib_decompress");
    void *f = dlsym(h, "libdeflate_free_decompressor"), *c = dlsym(h, "libdeflate_crc32");
    if (a == NULL || z == NULL || f == NULL || c == NULL) {
        dlclose(h);
        return;
    }
    memcpy(&libdeflate.zlib_decompress, &z, sizeof z);
    memcpy(&libdeflate.release, &f, sizeof f);
    memcpy(&libdeflate.crc32, &c, sizeof c);
    memcpy(&libdeflate.alloc, &a, sizeof a); /* last: alloc != NULL means all four are set */
}

/* 0 libpng only, 1 this path with zlib, 2 with libdeflate where it loads. */
static int png_decoder(void) {
    const char *env = getenv("GCUT_PNG_DECODER");
    if (env != NULL && strcmp(env, "libpng") == 0)
        return 0;
    if (env != NULL && strcmp(env, "zlib") == 0)
        return 1;
    pthread_once(&libdeflate_once, libdeflate_load);
    return libdeflate.alloc != NULL ? 2 : 1;
}

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The filtered rows (height rows of 1 + rowbytes) from the joined zlib stream; false unless
 * the stream holds exactly that many bytes and its checksum is right. */
static bool png_inflate(int decoder, const uint8_t *in, size_t in_bytes, uint8_t *out,
                        size_t out_bytes) {
    if (decoder == 2) {
        void *d = libdeflate.alloc();
        if (d == NULL)
            return false;
        size_t got = 0;
        /* 0 = LIBDEFLATE_SUCCESS; a stream with more data is INSUFFICIENT_SPACE (3). */
        const int rc = libdeflate.zlib_decompress(d, in, in_bytes, out, out_bytes, &got);
        libdeflate.release(d);
        return rc == 0 && got == out_bytes;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
        return false;
    bool ok = true;
    size_t in_at = 0, out_at = 0;
    int rc = Z_OK;
    while (ok && rc != Z_STREAM_END) { /* zlib counts in 32 bits: feed at most 1 GiB a call */
        const size_t in_step =
            in_bytes - in_at < ((size_t)1 << 30) ? in_bytes - in_at : (size_t)1 << 30;
        const size_t out_step =
            out_bytes - out_at < ((size_t)1 << 30) ? out_bytes - out_at : (size_t)1 << 30;
        z.next_in = (Bytef *)(uintptr_t)(in + in_at);
        z.avail_in = (uInt)in_step;
        z.next_out = out + out_at;
        z.avail_out = (uInt)out_step;
        rc = inflate(&z, Z_NO_FLUSH);
        in_at += in_step - z.avail_in;
        out_at += out_step - z.avail_out;
        ok = rc == Z_OK || rc == Z_STREAM_END;
        if (ok && rc == Z_OK && in_step == z.avail_in && out_step == z.avail_out)
            ok = false; /* no progress: the stream ends early, or holds more than expected */
    }
    inflateEnd(&z);
    return ok && out_at == out_bytes;
}

static inline uint8_t paeth(uint8_t a, uint8_t b, uint8_t c) {
    const int p = (int)a + b - c;
    const int pa = p > a ? p - a : a - p, pb = p > b ? p - b : b - p, pc = p > c ? p - c : c - p;
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Row y's bytes from its filtered form f (filter type f[0]) and the row above (prev; NULL for
 * the first row, read as zeros). row may overlap f from below (row <= f): each byte is read
 * before any write reaches it, so the image unfilters in place. @return false for an unknown
 * filter type. Inlined with bpp a constant for the common pixel sizes. */
static inline bool png_unfilter_row(const uint8_t *f, const uint8_t *prev, uint8_t *row,
                                    size_t rowbytes, size_t bpp) {
    const uint8_t type = f[0];
    const uint8_t *src = f + 1;
    switch (type) {
    case 0:
        memmove(row, src, rowbytes);
        return true;
    case 1:
        for (size_t i = 0; i < bpp; i++)
            row[i] = src[i];
        for (size_t i = bpp; i < rowbytes; i++)
            row[i] = (uint8_t)(src[i] + row[i - bpp]);
        return true;
    case 2:
        if (prev == NULL)
            memmove(row, src, rowbytes);
        else
            for (size_t i = 0; i < rowbytes; i++)
                row[i] = (uint8_t)(src[i] + prev[i]);
        return true;
    case 3:
        if (prev == NULL) {
            for (size_t i = 0; i < bpp; i++)
                row[i] = src[i];
            for (size_t i = bpp; i < rowbytes; i++)
                row[i] = (uint8_t)(src[i] + (row[i - bpp] >> 1));
        } else {
            for (size_t i = 0; i < bpp; i++)
                row[i] = (uint8_t)(src[i] + (prev[i] >> 1));
            for (size_t i = bpp; i < rowbytes; i++)
                row[i] = (uint8_t)(src[i] + (((unsigned)row[i - bpp] + prev[i]) >> 1));
        }
        return true;
    case 4:
        if (prev == NULL) { /* Paeth with a zero row above is Sub */
            for (size_t i = 0; i < bpp; i++)
                row[i] = src[i];
            for (size_t i = bpp; i < rowbytes; i++)
                row[i] = (uint8_t)(src[i] + row[i - bpp]);
        } else {
            for (size_t i = 0; i < bpp; i++)
                row[i] = (uint8_t)(src[i] + prev[i]);
            for (size_t i = bpp; i < rowbytes; i++)
                row[i] = (uint8_t)(src[i] + paeth(row[i - bpp], prev[i], prev[i - bpp]));
        }
        return true;
    default:
        return false;
    }
}

/* Every row of an image inflated into pixels (height rows of 1 + rowbytes), in place. */
static bool png_unfilter(uint8_t *pixels, size_t height, size_t rowbytes, size_t bpp) {
    for (size_t y = 0; y < height; y++) {
        const uint8_t *f = pixels + y * (rowbytes + 1);
        const uint8_t *prev = y > 0 ? pixels + (y - 1) * rowbytes : NULL;
        uint8_t *row = pixels + y * rowbytes;
        bool ok;
        switch (bpp) {
        case 3:
            ok = png_unfilter_row(f, prev, row, rowbytes, 3);
            break;
        case 4:
            ok = png_unfilter_row(f, prev, row, rowbytes, 4);
            break;
        case 1:
            ok = png_unfilter_row(f, prev, row, rowbytes, 1);
            break;
        default:
            ok = png_unfilter_row(f, prev, row, rowbytes, bpp);
            break;
        }
        if (!ok)
            return false;
    }
    return true;
}

/* The common case (above) into *out. @return false to leave the file to libpng (nothing is
 * kept then; the file position is wherever this stopped). */
static bool read_png_direct(FILE *file, int64_t size, gcut_image *out) {
    const int decoder = png_decoder();
    /* Pipes (size -1) and files past 1 GiB stream through libpng. */
    if (decoder == 0 || size < 8 + 25 + 12 || size > ((int64_t)1 << 30))
        return false;
    uint8_t *data = gcut__malloc((size_t)size, "PNG file");
    if (data == NULL)
        return false;
    bool ok = fread(data, 1, (size_t)size, file) == (size_t)size;
    const size_t n = (size_t)size;
    /* IHDR first: 13 bytes. */
    uint32_t width = 0, height = 0;
    int bit_depth = 0, channels = 0;
    if (ok) {
        ok = be32(data + 8) == 13 && memcmp(data + 12, "IHDR", 4) == 0;
        width = be32(data + 16), height = be32(data + 20);
        bit_depth = data[24];
        static const int channels_of[7] = {1, 0, 3, 0, 2, 0, 4};
        channels = data[25] <= 6 ? channels_of[data[25]] : 0;
        ok = ok && width >= 1 && height >= 1 && width <= MAX_SIDE && height <= MAX_SIDE &&
             (bit_depth == 8 || bit_depth == 16) && channels > 0 && data[26] == 0 &&
             data[27] == 0 && data[28] == 0;
    }
    /* Every chunk: its CRC checked; IDAT payloads moved down to data[0..joined). */
    size_t at = 8, joined = 0;
    bool seen_idat = false, idat_done = false, seen_end = false;
    const bool fast_crc = decoder == 2;
    while (ok && !seen_end) {
        if (n - at < 12) {
            ok = false;
            break;
        }
        const uint32_t length = be32(data + at);
        const uint8_t *type = data + at + 4;
        if (length > 0x7fffffffu || (size_t)length > n - at - 12) {
            ok = false;
            break;
        }
        const uint32_t crc = fast_crc ? libdeflate.crc32(0, type, (size_t)length + 4)
                                      : (uint32_t)crc32(crc32(0L, Z_NULL, 0), type, length + 4);
        if (crc != be32(type + 4 + length)) {
            ok = false;
            break;
        }
        const bool critical = (type[0] & 0x20) == 0;
        if (memcmp(type, "IDAT", 4) == 0) {
            ok = !idat_done;
            seen_idat = true;
            memmove(data + joined, type + 4, length);
            joined += length;
        } else {
            idat_done = seen_idat;
            if (memcmp(type, "IEND", 4) == 0)
                seen_end = true;
            else if (at == 8 ? memcmp(type, "IHDR", 4) != 0
                             : critical || memcmp(type, "tRNS", 4) == 0)
                ok = false; /* a palette, tRNS or unknown critical chunk: libpng's */
        }
        at += (size_t)length + 12;
    }
    ok = ok && seen_idat && seen_end;
    const size_t bpp = (size_t)channels * (size_t)(bit_depth / 8);
    const size_t rowbytes = (size_t)width * bpp;
    if (ok && check_geometry("PNG", width, height, 1, channels, bit_depth) != GCUT_OK)
        ok = false;
    if (ok && (size_t)height > (SIZE_MAX - 1) / (rowbytes + 1))
        ok = false;
    /* The pixels' block holds the filtered rows (height more bytes than the image), which
     * unfilter in place; the block is then shrunk to the image. */
    uint8_t *pixels = NULL;
    if (ok)
        ok = (pixels = gcut__malloc((size_t)height * (rowbytes + 1), "PNG pixels")) != NULL;
    if (ok)
        ok = png_inflate(decoder, data, joined, pixels, (size_t)height * (rowbytes + 1));
    gcut__free(data);
    if (ok)
        ok = png_unfilter(pixels, height, rowbytes, bpp);
    if (ok && bit_depth == 16 && host_little_endian()) {
        const size_t count = (size_t)height * rowbytes;
        for (size_t i = 0; i < count; i += 2) {
            const uint8_t t = pixels[i];
            pixels[i] = pixels[i + 1];
            pixels[i + 1] = t;
        }
    }
    if (!ok) {
        gcut__free(pixels);
        return false;
    }
    /* The image's own size (in place: a shrink), as every other reader allocates it. */
    uint8_t *exact = gcut__realloc(pixels, (size_t)height * rowbytes, "PNG pixels");
    if (exact != NULL)
        pixels = exact;
    *out = (gcut_image){width, height, 1, channels, bit_depth, pixels};
    return true;
}

static gcut_status read_png(FILE *file, const char *path, int64_t size, gcut_image *out) {
    if (read_png_direct(file, size, out))
        return GCUT_OK;
    if (fseek(file, 0, SEEK_SET) != 0)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot rewind: %s", path, strerror(errno));
    png_job job;
    memset(&job, 0, sizeof job);
    job.file = file;
    job.path = path;
    job.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, png_on_error, png_on_warning);
    if (job.png == NULL)
        return gcut__fail(GCUT_ERR_NOMEM, "%s: libpng could not start", path);
    job.info = png_create_info_struct(job.png);
    gcut_status status = job.info == NULL
                             ? gcut__fail(GCUT_ERR_NOMEM, "%s: libpng could not start", path)
                             : png_read_frame(&job);
    png_destroy_read_struct(&job.png, job.info != NULL ? &job.info : NULL, NULL);
    gcut__free(job.rows);
    if (status == GCUT_OK)
        *out = job.image;
    else
        gcut_image_free(&job.image);
    return status;
}

/* Whether an 8-bit image holds at most two sample values, 0 and one other (a mask). */
static bool two_level(const gcut_image *image) {
    const uint8_t *p = image->pixels;
    const size_t n = image_bytes(image);
    uint8_t other = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == 0 || p[i] == other)
            continue;
        if (other != 0)
            return false;
        other = p[i];
    }
    return true;
}

static gcut_status png_write_frame(png_job *job, const gcut_image *image) {
    if (setjmp(png_jmpbuf(job->png)))
        return gcut__fail(GCUT_ERR_IO, "%s: cannot write PNG (%s: %s)", job->path, job->message,
                          strerror(errno));
    static const int color_types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                       PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    png_structp png = job->png;
    png_init_io(png, job->file);
    png_set_user_limits(png, (png_uint_32)MAX_SIDE, (png_uint_32)MAX_SIDE);
    png_set_IHDR(png, job->info, (png_uint_32)image->width, (png_uint_32)image->height,
                 image->bit_depth, color_types[image->channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* zlib's fastest level with run-length matching only (OpenCV's imwrite defaults too): on
     * the bundled 450x300 photograph 4x faster than libpng's defaults (9.6 vs 40 ms) for a file
     * 0.7% larger, on a 1920x1080 overlay of the noisy synthetic picture 136 vs 240 ms at the
     * same size, and masks come out smaller (9.4 vs 11.6 kB at 1920x1080). */
    png_set_compression_level(png, Z_BEST_SPEED);
    png_set_compression_strategy(png, Z_RLE);
    /* A two-level 8-bit gray image (a 0/255 mask) is written unfiltered: libpng's adaptive
     * filter choice tries five filters on every row, which for a 1920x1080 mask took 13-16 ms
     * of a 15-20 ms write on the build machine, against 4-5 ms unfiltered, and the file comes
     * out smaller (7.9 against 9.4 kB): runs of equal bytes are what Z_RLE matches best. */
    if (image->channels == 1 && image->bit_depth == 8 && two_level(image))
        png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_write_info(png, job->info);
    if (image->bit_depth == 16 && host_little_endian())
        png_set_swap(png);
    size_t stride = (size_t)image->width * (size_t)image->channels * (size_t)(image->bit_depth / 8);
    job->rows = gcut__malloc((size_t)image->height * sizeof(png_bytep), "PNG row pointers");
    if (job->rows == NULL)
        return GCUT_ERR_NOMEM;
    for (int64_t y = 0; y < image->height; y++)
        job->rows[y] = (png_bytep)image->pixels + (size_t)y * stride;
    png_write_image(png, job->rows);
    png_write_end(png, NULL);
    return GCUT_OK;
}

/* ---- masks on threads ----
 * A two-level 8-bit gray image (a 0/255 mask) of at least MASK_PARALLEL_MIN_BYTES is written
 * without libpng, its compression split over threads (as pigz does): rows unfiltered (filter
 * byte 0), cut into strips; each strip deflated on a thread of its own as a raw deflate stream
 * at the same level and strategy as above, ended with a sync flush (the last with the final
 * block), so the strips concatenate into one deflate stream; the zlib header in front and the
 * Adler-32 of the whole (adler32_combine of the strips') behind; one IDAT chunk between IHDR
 * and IEND. Any PNG reader reads it (tests/test_image.c reads it back through libpng). On the
 * H100 host a 1920x1080 mask's write took 8.6-8.8 ms (median) through libpng; the mask is the
 * last thing `gcut segment` does before it exits, on the critical path. GCUT_PNG_THREADS=1
 * keeps libpng for masks too; 0 or unset = the online cores, at most 16. */
#define MASK_PARALLEL_MIN_BYTES ((int64_t)512 * 1024)
#define MASK_MAX_STRIPS 16

typedef struct mask_strip {
    const uint8_t *pixels; /* the strip's first row */
    int64_t width, rows;
    uint8_t *raw;    /* the strip's rows, each after its filter byte */
    uint8_t *packed; /* the strip's deflate output */
    size_t packed_bytes, raw_bytes;
    uLong adler;
    bool last, ok;
} mask_strip;

static void *mask_strip_run(void *arg) {
    mask_strip *s = arg;
    s->ok = false;
    const size_t stride = (size_t)s->width + 1;
    for (int64_t y = 0; y < s->rows; y++) {
        s->raw[(size_t)y * stride] = 0; /* filter type None */
        memcpy(s->raw + (size_t)y * stride + 1, s->pixels + (size_t)y * (size_t)s->width,
               (size_t)s->width);
    }
    s->raw_bytes = (size_t)s->rows * stride;
    s->adler = adler32(adler32(0L, Z_NULL, 0), s->raw, (uInt)s->raw_bytes);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, -15, 8, Z_RLE) != Z_OK)
        return NULL;
    z.next_in = s->raw;
    z.avail_in = (uInt)s->raw_bytes;
    z.next_out = s->packed;
    z.avail_out = (uInt)s->packed_bytes;
    const int flush = s->last ? Z_FINISH : Z_SYNC_FLUSH;
    const int rc = deflate(&z, flush);
    /* The buffer is deflateBound plus room for the flush marker: one call finishes. */
    s->ok = (s->last ? rc == Z_STREAM_END : rc == Z_OK && z.avail_out > 0) && z.avail_in == 0;
    s->packed_bytes = (size_t)(z.next_out - s->packed);
    deflateEnd(&z);
    return NULL;
}

static void put_be32(uint8_t *at, uint32_t v) {
    at[0] = (uint8_t)(v >> 24), at[1] = (uint8_t)(v >> 16), at[2] = (uint8_t)(v >> 8);
    at[3] = (uint8_t)v;
}

/* One chunk: length, type, data, CRC-32 of type and data. @return false on a write error. */
static bool put_chunk(FILE *file, const char *type, const uint8_t *data, size_t length) {
    uint8_t head[8], tail[4];
    put_be32(head, (uint32_t)length);
    memcpy(head + 4, type, 4);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), head + 4, 4);
    if (length > 0)
        crc = crc32(crc, data, (uInt)length);
    put_be32(tail, (uint32_t)crc);
    return fwrite(head, 1, 8, file) == 8 &&
           (length == 0 || fwrite(data, 1, length, file) == length) &&
           fwrite(tail, 1, 4, file) == 4;
}

/* How many strips a mask is written in: 0 = not this way (libpng's). */
static int mask_strips(const gcut_image *image) {
    if (image->channels != 1 || image->bit_depth != 8 || image->depth != 1 ||
        image->width * image->height < MASK_PARALLEL_MIN_BYTES || image->width > (1 << 24) ||
        image->height < 2 * 16)
        return 0;
    int strips = gcut__env_int("GCUT_PNG_THREADS", 0, 0, MASK_MAX_STRIPS);
    if (strips == 0)
        strips = gcut__online_cores();
    if (strips > MASK_MAX_STRIPS)
        strips = MASK_MAX_STRIPS;
    if (strips > image->height / 16) /* strips of at least 16 rows */
        strips = (int)(image->height / 16);
    /* Each strip's bytes must fit zlib's 32-bit counters (else libpng writes it). */
    if (strips < 2 || (image->width + 1) * (image->height / strips + 1) > ((int64_t)1 << 30))
        return 0;
    return two_level(image) ? strips : 0;
}

static gcut_status write_mask_png(const char *path, const gcut_image *image, int strips) {
    const int64_t w = image->width, h = image->height;
    mask_strip job[MASK_MAX_STRIPS];
    memset(job, 0, sizeof job);
    gcut_status status = GCUT_OK;
    for (int k = 0; k < strips; k++) {
        const int64_t y0 = h * k / strips, y1 = h * (k + 1) / strips;
        mask_strip *s = &job[k];
        s->pixels = (const uint8_t *)image->pixels + (size_t)(y0 * w);
        s->width = w;
        s->rows = y1 - y0;
        s->last = k == strips - 1;
        const size_t raw = (size_t)s->rows * (size_t)(w + 1);
        s->packed_bytes = (size_t)deflateBound(NULL, (uLong)raw) + 64;
        s->raw = gcut__malloc(raw, "PNG mask strip");
        s->packed = gcut__malloc(s->packed_bytes, "PNG mask strip");
        if (s->raw == NULL || s->packed == NULL)
            status = GCUT_ERR_NOMEM;
    }
    FILE *file = NULL;
    if (status == GCUT_OK)
        gcut__run_jobs(mask_strip_run, job, sizeof job[0], strips);
    for (int k = 0; k < strips && status == GCUT_OK; k++)
        if (!job[k].ok)
            status = gcut__fail(GCUT_ERR_INTERNAL, "%s: zlib could not compress the mask", path);
    if (status == GCUT_OK)
        status = open_output(path, &file);
    if (status == GCUT_OK) {
        static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
        uint8_t ihdr[13] = {0};
        put_be32(ihdr, (uint32_t)w);
        put_be32(ihdr + 4, (uint32_t)h);
        ihdr[8] = 8; /* bit depth; colour type 0 (gray), deflate, filter method 0, no interlace */
        size_t total = 2 + 4;
        uLong adler = adler32(0L, Z_NULL, 0);
        for (int k = 0; k < strips; k++) {
            total += job[k].packed_bytes;
            adler = adler32_combine(adler, job[k].adler, (z_off_t)job[k].raw_bytes);
        }
        /* The IDAT data: the zlib header (deflate, 32 KiB window, fastest level), the strips'
         * deflate stream, the Adler-32; one chunk (a 1080p mask's is ~10 kB). */
        uint8_t *idat = total <= UINT32_MAX / 2 ? gcut__malloc(total, "PNG mask data") : NULL;
        if (idat == NULL) {
            status = GCUT_ERR_NOMEM;
        } else {
            idat[0] = 0x78, idat[1] = 0x01;
            size_t at = 2;
            for (int k = 0; k < strips; k++) {
                memcpy(idat + at, job[k].packed, job[k].packed_bytes);
                at += job[k].packed_bytes;
            }
            put_be32(idat + at, (uint32_t)adler);
            if (fwrite(signature, 1, 8, file) != 8 || !put_chunk(file, "IHDR", ihdr, 13) ||
                !put_chunk(file, "IDAT", idat, total) || !put_chunk(file, "IEND", NULL, 0))
                status =
                    gcut__fail(GCUT_ERR_IO, "%s: cannot write PNG (%s)", path, strerror(errno));
            gcut__free(idat);
        }
        status = finish_output(file, path, status);
    }
    for (int k = 0; k < strips; k++) {
        gcut__free(job[k].raw);
        gcut__free(job[k].packed);
    }
    return status;
}

static gcut_status write_png(const char *path, const gcut_image *image) {
    const int strips = mask_strips(image);
    if (strips > 1)
        return write_mask_png(path, image, strips);
    png_job job;
    memset(&job, 0, sizeof job);
    job.path = path;
    gcut_status status = open_output(path, &job.file);
    if (status != GCUT_OK)
        return status;
    job.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, png_on_error, png_on_warning);
    job.info = job.png != NULL ? png_create_info_struct(job.png) : NULL;
    status = job.info == NULL ? gcut__fail(GCUT_ERR_NOMEM, "%s: libpng could not start", path)
                              : png_write_frame(&job, image);
    if (job.png != NULL)
        png_destroy_write_struct(&job.png, job.info != NULL ? &job.info : NULL);
    gcut__free(job.rows);
    return finish_output(job.file, path, status);
}

#else

static gcut_status read_png(FILE *file, const char *path, int64_t size, gcut_image *out) {
    (void)file, (void)size, (void)out;
    return gcut__fail(GCUT_ERR_UNSUPPORTED,
                      "%s: reading PNG needs libpng, which this build of gcut lacks", path);
}

static gcut_status write_png(const char *path, const gcut_image *image) {
    (void)image;
    return gcut__fail(GCUT_ERR_UNSUPPORTED,
                      "%s: writing PNG needs libpng, which this build of gcut lacks", path);
}

#endif

/* ------------------------------------------------------------------------------------------
 * JPEG through libjpeg(-turbo): 8-bit gray and RGB. libjpeg's default error_exit calls
 * exit(); ours longjmps. Warnings that mean the pixels are not what the file should hold
 * (premature end, damaged entropy data) are errors too; harmless oddities are ignored.
 * ---------------------------------------------------------------------------------------- */

#ifdef GCUT_HAVE_JPEG

typedef struct jpeg_job {
    union {
        struct jpeg_decompress_struct in;
        struct jpeg_compress_struct out;
    } codec;
    struct jpeg_error_mgr errors;
    jmp_buf jump;
    FILE *file;
    const char *path;
    gcut_image image;
    bool created;
    char message[JMSG_LENGTH_MAX];
} jpeg_job;

static void jpeg_on_error(j_common_ptr codec) {
    jpeg_job *job = codec->client_data;
    codec->err->format_message(codec, job->message);
    longjmp(job->jump, 1);
}

/* Failures are told apart by libjpeg's message text, not its message codes: the codes are
 * positions in a table whose entries differ between libjpeg versions and builds (a header
 * from one libjpeg-turbo and a library from another numbered them differently on one of our
 * machines), while these texts have been the same since IJG libjpeg 6b. */
static bool jpeg_says(const jpeg_job *job, const char *const *texts) {
    for (; *texts != NULL; texts++)
        if (strstr(job->message, *texts) != NULL)
            return true;
    return false;
}

static const char *const jpeg_damage[] = {"Premature end of",
                                          "premature end of data segment",
                                          "found marker",
                                          "bad Huffman code",
                                          "Invalid SOS parameters",
                                          "Inconsistent progression",
                                          "Corrupt JPEG data: bad arithmetic code",
                                          NULL};
static const char *const jpeg_truncation[] = {"Premature end of", "Empty input file", NULL};
static const char *const jpeg_memory[] = {"Backing store not supported", "Insufficient memory",
                                          NULL};

static void jpeg_on_message(j_common_ptr codec, int level) {
    if (level >= 0)
        return;
    /* A warning that means the pixels are not what the file should hold is an error; harmless
     * oddities (extraneous bytes before a marker, an unknown JFIF version) are ignored. */
    jpeg_job *job = codec->client_data;
    codec->err->format_message(codec, job->message);
    if (jpeg_says(job, jpeg_damage))
        longjmp(job->jump, 1);
    job->message[0] = '\0';
}

static void jpeg_job_init(jpeg_job *job, FILE *file, const char *path) {
    memset(job, 0, sizeof *job);
    job->file = file;
    job->path = path;
    job->codec.in.err = jpeg_std_error(&job->errors);
    job->errors.error_exit = jpeg_on_error;
    job->errors.emit_message = jpeg_on_message;
    job->codec.in.client_data = job;
}

static gcut_status jpeg_read_frame(jpeg_job *job) {
    struct jpeg_decompress_struct *in = &job->codec.in;
    if (setjmp(job->jump)) {
        if (ferror(job->file))
            return gcut__fail(GCUT_ERR_IO, "%s: read error: %s", job->path, strerror(errno));
        if (jpeg_says(job, jpeg_memory))
            return gcut__fail(GCUT_ERR_NOMEM,
                              "%s: out of memory: the JPEG decoder's buffers would pass the "
                              "memory cap (gcut_set_memory_limit or GCUT_MEMORY_LIMIT)",
                              job->path);
        const bool truncated = jpeg_says(job, jpeg_truncation);
        return gcut__fail(GCUT_ERR_PARSE, "%s: %s JPEG (%s)", job->path,
                          truncated ? "truncated" : "corrupt", job->message);
    }
    job->created = true;
    jpeg_create_decompress(in);
    jpeg_stdio_src(in, job->file);
    jpeg_read_header(in, TRUE);
    if (in->jpeg_color_space == JCS_CMYK || in->jpeg_color_space == JCS_YCCK)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "%s: CMYK JPEG is not supported; convert it to RGB first", job->path);
    int channels;
    if (in->num_components == 1) {
        in->out_color_space = JCS_GRAYSCALE;
        channels = 1;
    } else if (in->num_components == 3) {
        in->out_color_space = JCS_RGB;
        channels = 3;
    } else {
        return gcut__fail(GCUT_ERR_UNSUPPORTED, "%s: JPEG with %d components is not supported",
                          job->path, in->num_components);
    }
    jpeg_calc_output_dimensions(in);
    gcut_status status =
        check_geometry(job->path, in->output_width, in->output_height, 1, channels, 8);
    if (status == GCUT_OK)
        status = image_alloc(&job->image, in->output_width, in->output_height, 1, channels, 8,
                             false, "JPEG pixels", job->path);
    if (status != GCUT_OK)
        return status;
    /* libjpeg's own buffers (a progressive file keeps every coefficient of the image) obey
     * what the cap leaves: past it libjpeg stops with JERR_NO_BACKING_STORE. */
    uint64_t cap = gcut_memory_limit(), held = gcut_memory_in_use();
    uint64_t room = cap > held ? cap - held : 1;
    in->mem->max_memory_to_use = room > (uint64_t)LONG_MAX ? LONG_MAX : (long)room;
    jpeg_start_decompress(in);
    size_t stride = (size_t)in->output_width * (size_t)channels;
    while (in->output_scanline < in->output_height) {
        JSAMPROW row = (JSAMPROW)job->image.pixels + (size_t)in->output_scanline * stride;
        jpeg_read_scanlines(in, &row, 1);
    }
    /* Reading on to EOI notices a file cut after the last scanline... */
    jpeg_finish_decompress(in);
    /* ...where libjpeg warns of it: some builds stop without a word when only the EOI marker
     * itself is missing, so the two bytes before where decoding stopped must be that marker
     * (a seekable file; a pipe is left to libjpeg). */
    long end = ftell(job->file);
    if (end >= 0) {
        long stop = end - (long)in->src->bytes_in_buffer;
        unsigned char eoi[2] = {0, 0};
        if (stop < 2 || fseek(job->file, stop - 2, SEEK_SET) != 0 ||
            fread(eoi, 1, 2, job->file) != 2 || eoi[0] != 0xff || eoi[1] != JPEG_EOI)
            return gcut__fail(GCUT_ERR_PARSE, "%s: truncated JPEG (no end-of-image marker)",
                              job->path);
    }
    return GCUT_OK;
}

static gcut_status read_jpeg(FILE *file, const char *path, gcut_image *out) {
    jpeg_job job;
    jpeg_job_init(&job, file, path);
    gcut_status status = jpeg_read_frame(&job);
    if (job.created)
        jpeg_destroy_decompress(&job.codec.in);
    if (status == GCUT_OK)
        *out = job.image;
    else
        gcut_image_free(&job.image);
    return status;
}

static gcut_status jpeg_write_frame(jpeg_job *job, const gcut_image *image) {
    struct jpeg_compress_struct *out = &job->codec.out;
    if (setjmp(job->jump))
        return gcut__fail(GCUT_ERR_IO, "%s: cannot write JPEG (%s)", job->path, job->message);
    job->created = true;
    jpeg_create_compress(out);
    jpeg_stdio_dest(out, job->file);
    out->image_width = (JDIMENSION)image->width;
    out->image_height = (JDIMENSION)image->height;
    out->input_components = image->channels;
    out->in_color_space = image->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(out);
    jpeg_set_quality(out, 95, TRUE);
    /* Full-resolution chroma: segmentation reads colour edges, which 4:2:0 would blur. */
    for (int i = 0; i < out->num_components; i++) {
        out->comp_info[i].h_samp_factor = 1;
        out->comp_info[i].v_samp_factor = 1;
    }
    jpeg_start_compress(out, TRUE);
    size_t stride = (size_t)image->width * (size_t)image->channels;
    while (out->next_scanline < out->image_height) {
        JSAMPROW row = (JSAMPROW)image->pixels + (size_t)out->next_scanline * stride;
        jpeg_write_scanlines(out, &row, 1);
    }
    jpeg_finish_compress(out);
    return GCUT_OK;
}

static gcut_status write_jpeg(const char *path, const gcut_image *image) {
    if (image->bit_depth != 8)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "%s: JPEG holds 8-bit samples only, image is "
                          "%d-bit (write PNG or PGM/PPM)",
                          path, image->bit_depth);
    if (image->channels != 1 && image->channels != 3)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "%s: JPEG holds gray or RGB, image is %s (write PNG)", path,
                          channels_name(image->channels));
    if (image->width > JPEG_MAX_DIMENSION || image->height > JPEG_MAX_DIMENSION)
        return gcut__fail(GCUT_ERR_UNSUPPORTED, "%s: JPEG sides are at most %d pixels", path,
                          (int)JPEG_MAX_DIMENSION);
    FILE *file;
    gcut_status status = open_output(path, &file);
    if (status != GCUT_OK)
        return status;
    jpeg_job job;
    jpeg_job_init(&job, file, path);
    status = jpeg_write_frame(&job, image);
    if (job.created)
        jpeg_destroy_compress(&job.codec.out);
    return finish_output(file, path, status);
}

#else

static gcut_status read_jpeg(FILE *file, const char *path, gcut_image *out) {
    (void)file, (void)out;
    return gcut__fail(GCUT_ERR_UNSUPPORTED,
                      "%s: reading JPEG needs libjpeg, which this build of gcut lacks", path);
}

static gcut_status write_jpeg(const char *path, const gcut_image *image) {
    (void)image;
    return gcut__fail(GCUT_ERR_UNSUPPORTED,
                      "%s: writing JPEG needs libjpeg, which this build of gcut lacks", path);
}

#endif

/* ------------------------------------------------------------------------------------------
 * Dispatch
 * ---------------------------------------------------------------------------------------- */

/* Names formats that users hand to image tools, so the message says what the file is. */
static const char *guess_format(const uint8_t *magic, size_t got) {
    if (got >= 3 && memcmp(magic, "GIF", 3) == 0)
        return "a GIF image";
    if (got >= 2 && memcmp(magic, "BM", 2) == 0)
        return "a BMP image";
    if (got >= 4 && (memcmp(magic, "II*\0", 4) == 0 || memcmp(magic, "MM\0*", 4) == 0))
        return "a TIFF image";
    if (got >= 4 && memcmp(magic, "\0\0\1\0", 4) == 0)
        return "a Windows icon (ICO)";
    if (got >= 4 && memcmp(magic, "RIFF", 4) == 0)
        return "a RIFF (WebP?) file";
    return "not an image gcut knows";
}

gcut_status gcut_image_read(const char *path, gcut_image *out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_image_read: out is NULL");
    memset(out, 0, sizeof *out);
    if (path == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_image_read: path is NULL");
    FILE *file;
    int64_t size;
    gcut_status status = open_input(path, &file, &size);
    if (status != GCUT_OK)
        return status;
    static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    uint8_t magic[8];
    size_t got = fread(magic, 1, sizeof magic, file);
    if (ferror(file))
        status = gcut__fail(GCUT_ERR_IO, "%s: read error: %s", path, strerror(errno));
    else if (got == 0)
        status = gcut__fail(GCUT_ERR_PARSE, "%s: empty file", path);
    else if (fseek(file, 0, SEEK_SET) != 0)
        status = gcut__fail(GCUT_ERR_IO, "%s: cannot rewind: %s", path, strerror(errno));
    /* A prefix of a signature is a cut file of that format, reported as truncated. */
    else if (memcmp(magic, png_magic, got < 8 ? got : 8) == 0)
        status = read_png(file, path, size, out);
    else if (magic[0] == 0xFF && (got < 2 || magic[1] == 0xD8))
        status = read_jpeg(file, path, out);
    else if (magic[0] == 'P' && (got < 2 || (magic[1] >= '1' && magic[1] <= '7')))
        status = read_pnm(file, path, size, out);
    else
        status = gcut__fail(GCUT_ERR_UNSUPPORTED,
                            "%s: %s (first bytes %02x %02x); gcut reads PNG, JPEG and PGM/PPM",
                            path, guess_format(magic, got), magic[0], got > 1 ? magic[1] : 0);
    fclose(file);
    return status;
}

static bool ends_with(const char *text, const char *suffix) {
    size_t n = strlen(text), m = strlen(suffix);
    if (m > n)
        return false;
    for (size_t i = 0; i < m; i++) {
        char c = text[n - m + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != suffix[i])
            return false;
    }
    return true;
}

gcut_status gcut_image_write(const char *path, const gcut_image *image) {
    if (path == NULL || image == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_image_write: %s is NULL",
                          path == NULL ? "path" : "image");
    if (image->pixels == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_image_write: %s: image has no pixels", path);
    gcut_status status = check_geometry("gcut_image_write", image->width, image->height,
                                        image->depth, image->channels, image->bit_depth);
    if (status != GCUT_OK)
        return status;
    if (image->depth != 1)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "%s: a volume (depth %lld) cannot be written as one image; write its "
                          "slices",
                          path, (long long)image->depth);
    if (ends_with(path, ".png"))
        return write_png(path, image);
    if (ends_with(path, ".jpg") || ends_with(path, ".jpeg"))
        return write_jpeg(path, image);
    bool pgm = ends_with(path, ".pgm"), ppm = ends_with(path, ".ppm");
    if (ends_with(path, ".pnm")) {
        pgm = image->channels == 1;
        ppm = image->channels == 3;
        if (!pgm && !ppm)
            return gcut__fail(GCUT_ERR_UNSUPPORTED,
                              "%s: PNM holds gray or RGB, image is %s (write PNG)", path,
                              channels_name(image->channels));
    }
    if (pgm || ppm) {
        if (image->channels != (pgm ? 1 : 3))
            return gcut__fail(GCUT_ERR_UNSUPPORTED, "%s: %s holds %s, image is %s%s", path,
                              pgm ? "PGM" : "PPM", pgm ? "gray" : "RGB",
                              channels_name(image->channels),
                              image->channels == 3   ? " (use .ppm)"
                              : image->channels == 1 ? " (use .pgm)"
                                                     : " (write PNG)");
        return write_pnm(path, image, pgm ? 5 : 6);
    }
    return gcut__fail(GCUT_ERR_UNSUPPORTED,
                      "%s: unknown image extension; use .png, .jpg, .jpeg, .pgm, .ppm or .pnm",
                      path);
}

/* ------------------------------------------------------------------------------------------
 * Volumes
 * ---------------------------------------------------------------------------------------- */

gcut_status gcut_volume_read_raw(const char *path, int64_t depth, int64_t height, int64_t width,
                                 int channels, int bit_depth, gcut_image *out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_volume_read_raw: out is NULL");
    memset(out, 0, sizeof *out);
    if (path == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_volume_read_raw: path is NULL");
    gcut_status status =
        check_geometry("gcut_volume_read_raw", width, height, depth, channels, bit_depth);
    if (status != GCUT_OK)
        return status;
    FILE *file;
    int64_t size;
    status = open_input(path, &file, &size);
    if (status != GCUT_OK)
        return status;
    uint64_t expected = 0;
    geometry_bytes(width, height, depth, channels, bit_depth, &expected);
    if (size >= 0 && (uint64_t)size != expected) {
        fclose(file);
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s: raw volume of %lld x %lld x %lld, %d channel(s), %d-bit needs "
                          "%llu bytes, the file has %lld",
                          path, (long long)depth, (long long)height, (long long)width, channels,
                          bit_depth, (unsigned long long)expected, (long long)size);
    }
    status =
        image_alloc(out, width, height, depth, channels, bit_depth, false, "volume voxels", path);
    if (status == GCUT_OK) {
        size_t got = fread(out->pixels, 1, (size_t)expected, file);
        if (ferror(file))
            status = gcut__fail(GCUT_ERR_IO, "%s: read error: %s", path, strerror(errno));
        else if (got != expected || getc(file) != EOF)
            status =
                gcut__fail(GCUT_ERR_PARSE, "%s: raw volume needs %llu bytes, the stream has %s",
                           path, (unsigned long long)expected, got != expected ? "fewer" : "more");
        if (status != GCUT_OK)
            gcut_image_free(out);
    }
    fclose(file);
    return status;
}

gcut_status gcut_volume_read_slices(const char *const *paths, int64_t count, gcut_image *out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_volume_read_slices: out is NULL");
    memset(out, 0, sizeof *out);
    if (paths == NULL || count < 1 || count > MAX_SIDE)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_volume_read_slices: %s (count %lld, at most %lld)",
                          paths == NULL ? "paths is NULL" : "count out of range", (long long)count,
                          (long long)MAX_SIDE);
    for (int64_t z = 0; z < count; z++)
        if (paths[z] == NULL)
            return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_volume_read_slices: paths[%lld] is NULL",
                              (long long)z);
    gcut_status status = GCUT_OK;
    size_t slice_bytes = 0;
    for (int64_t z = 0; z < count && status == GCUT_OK; z++) {
        gcut_image slice;
        status = gcut_image_read(paths[z], &slice);
        if (status != GCUT_OK) {
            char reason[512];
            snprintf(reason, sizeof reason, "%s", gcut_last_error());
            status = gcut__fail(status, "slice %lld: %s", (long long)z, reason);
            break;
        }
        if (z == 0) {
            slice_bytes = image_bytes(&slice);
            status = check_geometry(paths[0], slice.width, slice.height, count, slice.channels,
                                    slice.bit_depth);
            if (status == GCUT_OK)
                status = image_alloc(out, slice.width, slice.height, count, slice.channels,
                                     slice.bit_depth, false, "volume voxels", paths[0]);
        } else if (slice.width != out->width || slice.height != out->height ||
                   slice.channels != out->channels || slice.bit_depth != out->bit_depth) {
            status = gcut__fail(
                GCUT_ERR_PARSE,
                "slice %lld (%s) is %lld x %lld %s %d-bit, but slice 0 (%s) is "
                "%lld x %lld %s %d-bit",
                (long long)z, paths[z], (long long)slice.width, (long long)slice.height,
                channels_name(slice.channels), slice.bit_depth, paths[0], (long long)out->width,
                (long long)out->height, channels_name(out->channels), out->bit_depth);
        }
        if (status == GCUT_OK)
            memcpy((uint8_t *)out->pixels + (size_t)z * slice_bytes, slice.pixels, slice_bytes);
        gcut_image_free(&slice);
    }
    if (status != GCUT_OK)
        gcut_image_free(out);
    return status;
}
