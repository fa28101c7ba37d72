/* grid_io.c - the gcut grid file (docs/FORMATS.md): one text header line such as
 * "gcut-grid 1 ndim 2 shape 480 640 conn 4", then little-endian int32 arrays: source, sink,
 * and one per direction in gcut.h's order. Strict reader and its writer. */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAGIC "gcut-grid"
/* The header is one short line; anything longer is not a grid file. */
#define MAX_HEADER_BYTES 256

static bool host_is_little_endian(void) {
    const uint16_t probe = 1;
    unsigned char first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

static void swap_bytes(int32_t *values, size_t count) {
    for (size_t i = 0; i < count; i++) {
        uint32_t v = (uint32_t)values[i];
        v = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
        values[i] = (int32_t)v;
    }
}

/* Name array k of the file for messages: "source", "sink" or "direction 2 (dy,dx)=(+1,+0)". */
static const char *array_name(const gcut_grid *grid, int k, char *out, size_t room) {
    if (k < 2) {
        snprintf(out, room, "%s", k == GCUT_SOURCE ? "source" : "sink");
    } else {
        const int *o = grid->offset[k - 2];
        if (grid->ndim == 2)
            snprintf(out, room, "direction %d (dy,dx)=(%+d,%+d)", k - 2, o[1], o[2]);
        else
            snprintf(out, room, "direction %d (dz,dy,dx)=(%+d,%+d,%+d)", k - 2, o[0], o[1], o[2]);
    }
    return out;
}

static int32_t *array_of(gcut_grid *grid, int k) {
    return k < 2 ? grid->terminal[k] : grid->cap[k - 2];
}

/* Split the header line into blank-separated words, in place. */
static int split_words(char *line, char **words, int max_words) {
    int count = 0;
    char *p = line;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        if (count == max_words)
            return max_words + 1;
        words[count++] = p;
        while (*p != '\0' && *p != ' ')
            p++;
        if (*p == ' ')
            *p++ = '\0';
    }
    return count;
}

/* A positive decimal integer of at most 18 digits; false for anything else. */
static bool parse_positive(const char *text, int64_t *value) {
    int64_t v = 0;
    size_t len = strlen(text);
    if (len == 0 || len > 18)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        v = v * 10 + (text[i] - '0');
    }
    *value = v;
    return v > 0;
}

static gcut_status read_header(FILE *file, const char *name, int *ndim, int64_t *shape,
                               int *connectivity, uint64_t *header_bytes) {
    char line[MAX_HEADER_BYTES + 1];
    size_t len = 0;
    int ch = 0;
    while (len < MAX_HEADER_BYTES && (ch = fgetc(file)) != EOF && ch != '\n')
        line[len++] = (char)ch;
    line[len] = '\0';
    if (ch == EOF && ferror(file))
        return gcut__fail(GCUT_ERR_IO, "%s: read error: %s", name, strerror(errno));
    if (len == 0 && ch == EOF)
        return gcut__fail(GCUT_ERR_PARSE, "%s:1: empty file (expected a '" MAGIC "' header)", name);
    if (len < strlen(MAGIC " ") || memcmp(line, MAGIC " ", strlen(MAGIC " ")) != 0)
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s:1: not a gcut grid file (it does not start with '" MAGIC " ')", name);
    if (ch != '\n')
        return gcut__fail(GCUT_ERR_PARSE, "%s:1: %s", name,
                          ch == EOF ? "truncated header line (no newline)"
                                    : "header line longer than 256 bytes");
    if (strlen(line) != len)
        return gcut__fail(GCUT_ERR_PARSE, "%s:1: NUL byte in the header line", name);
    *header_bytes = len + 1;
    char *words[12];
    int count = split_words(line, words, 11);
    /* gcut-grid VERSION ndim D shape S1 .. SD conn C */
    const char *expected = "expected 'gcut-grid 1 ndim 2|3 shape [DEPTH] HEIGHT WIDTH conn C'";
    if (count < 7 || strcmp(words[2], "ndim") != 0 || strcmp(words[4], "shape") != 0)
        return gcut__fail(GCUT_ERR_PARSE, "%s:1: bad header: %s", name, expected);
    if (strcmp(words[1], "1") != 0)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "%s:1: grid format version '%.16s' is not supported (this build "
                          "reads version 1)",
                          name, words[1]);
    if (strcmp(words[3], "2") != 0 && strcmp(words[3], "3") != 0)
        return gcut__fail(GCUT_ERR_PARSE, "%s:1: ndim '%.16s' is not 2 or 3", name, words[3]);
    *ndim = words[3][0] - '0';
    if (count != 7 + *ndim || strcmp(words[5 + *ndim], "conn") != 0)
        return gcut__fail(GCUT_ERR_PARSE, "%s:1: bad header: %s", name, expected);
    for (int i = 0; i < *ndim; i++)
        if (!parse_positive(words[5 + i], &shape[i]))
            return gcut__fail(GCUT_ERR_PARSE,
                              "%s:1: shape[%d] '%.24s' is not a positive integer below 10^18", name,
                              i, words[5 + i]);
    const char *conn = words[6 + *ndim];
    bool conn_ok = *ndim == 2 ? strcmp(conn, "4") == 0 || strcmp(conn, "8") == 0
                              : strcmp(conn, "6") == 0 || strcmp(conn, "26") == 0;
    if (!conn_ok)
        return gcut__fail(GCUT_ERR_PARSE, "%s:1: connectivity '%.16s' is not valid in %dD (%s)",
                          name, conn, *ndim, *ndim == 2 ? "4 or 8" : "6 or 26");
    *connectivity = conn[0] == '4' ? 4 : conn[0] == '8' ? 8 : conn[0] == '6' ? 6 : 26;
    return GCUT_OK;
}

static gcut_status read_arrays(FILE *file, const char *name, uint64_t header_bytes,
                               gcut_grid *grid) {
    size_t n = (size_t)grid->num_nodes;
    int arrays = 2 + grid->num_dirs;
    uint64_t array_bytes = (uint64_t)n * sizeof(int32_t);
    uint64_t total = header_bytes + (uint64_t)arrays * array_bytes;
    char what[64];
    for (int k = 0; k < arrays; k++) {
        int32_t *values = array_of(grid, k);
        size_t got = fread(values, sizeof(int32_t), n, file);
        if (got < n) {
            if (ferror(file))
                return gcut__fail(GCUT_ERR_IO, "%s: read error: %s", name, strerror(errno));
            uint64_t at = header_bytes + (uint64_t)k * array_bytes + got * sizeof(int32_t);
            return gcut__fail(GCUT_ERR_PARSE,
                              "%s: byte %" PRIu64 ": truncated: the %s array has %zu of %zu "
                              "values (the header's shape needs %" PRIu64 " bytes in all)",
                              name, at, array_name(grid, k, what, sizeof what), got, n, total);
        }
        if (!host_is_little_endian())
            swap_bytes(values, n);
        for (size_t i = 0; i < n; i++)
            if (values[i] < 0)
                return gcut__fail(GCUT_ERR_PARSE,
                                  "%s: byte %" PRIu64 ": negative capacity %d in the %s array at "
                                  "node %zu",
                                  name, header_bytes + (uint64_t)k * array_bytes + i * 4,
                                  (int)values[i], array_name(grid, k, what, sizeof what), i);
    }
    if (fgetc(file) != EOF)
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s: byte %" PRIu64 ": data after the last array (the header's shape "
                          "needs exactly %" PRIu64 " bytes)",
                          name, total, total);
    if (ferror(file))
        return gcut__fail(GCUT_ERR_IO, "%s: read error: %s", name, strerror(errno));
    return GCUT_OK;
}

static double array_bytes_of(int ndim, const int64_t *shape, int connectivity) {
    double nodes = 1;
    for (int i = 0; i < ndim; i++)
        nodes *= (double)shape[i];
    return nodes * (2 + connectivity) * sizeof(int32_t);
}

/* A header asking for more than the memory cap fails here, naming the line, before anything
 * is read or allocated. */
static gcut_status check_memory(const char *name, int ndim, const int64_t *shape,
                                int connectivity) {
    double need = array_bytes_of(ndim, shape, connectivity);
    uint64_t bytes = need >= 1.8e19 ? UINT64_MAX : (uint64_t)need;
    if (gcut__reserve(bytes, "the grid of the header") == 0) {
        gcut__unreserve(bytes);
        return GCUT_OK;
    }
    char detail[768];
    snprintf(detail, sizeof detail, "%s", gcut_last_error());
    return gcut__fail(GCUT_ERR_NOMEM, "%s:1: %s", name, detail);
}

/* A regular file's size tells at once whether the header's shape fits it, before the grid's
 * arrays are allocated and zeroed: a small corrupt file never costs gigabytes. */
static gcut_status check_file_size(FILE *file, const char *name, uint64_t header_bytes, int ndim,
                                   const int64_t *shape, int connectivity) {
    if (fseek(file, 0, SEEK_END) != 0)
        return GCUT_OK; /* not seekable: the reads will find a short file */
    long size = ftell(file);
    if (size < 0 || fseek(file, (long)header_bytes, SEEK_SET) != 0)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot seek: %s", name, strerror(errno));
    double need = (double)header_bytes + array_bytes_of(ndim, shape, connectivity);
    if ((double)size < need)
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s: truncated: the header's shape needs %.0f bytes, the file has %ld",
                          name, need, size);
    return GCUT_OK;
}

gcut_status gcut_grid_read(const char *path, gcut_grid **out) {
    if (out != NULL)
        *out = NULL;
    if (path == NULL || out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_read: path or out is NULL");
    bool from_stdin = strcmp(path, "-") == 0;
    const char *name = from_stdin ? "<stdin>" : path;
    FILE *file = from_stdin ? stdin : fopen(path, "rb");
    if (file == NULL)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    int ndim = 0, connectivity = 0;
    int64_t shape[3] = {0, 0, 0};
    gcut_grid *grid = NULL;
    uint64_t header_bytes = 0;
    gcut_status st = read_header(file, name, &ndim, shape, &connectivity, &header_bytes);
    if (st == GCUT_OK)
        st = check_memory(name, ndim, shape, connectivity);
    if (st == GCUT_OK && !from_stdin)
        st = check_file_size(file, name, header_bytes, ndim, shape, connectivity);
    if (st == GCUT_OK) {
        st = gcut_grid_create(ndim, shape, connectivity, &grid);
        if (st != GCUT_OK) {
            char detail[768];
            snprintf(detail, sizeof detail, "%s", gcut_last_error());
            gcut__fail(st, "%s:1: the header's grid cannot be made: %s", name, detail);
        }
    }
    if (st == GCUT_OK)
        st = read_arrays(file, name, header_bytes, grid);
    if (!from_stdin)
        fclose(file);
    if (st != GCUT_OK) {
        gcut_grid_free(grid);
        return st;
    }
    *out = grid;
    return GCUT_OK;
}

gcut_status gcut_grid_write(const gcut_grid *grid, const char *path) {
    if (grid == NULL || path == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_grid_write: grid or path is NULL");
    bool to_stdout = strcmp(path, "-") == 0;
    const char *name = to_stdout ? "<stdout>" : path;
    size_t n = (size_t)grid->num_nodes;
    int32_t *swapped = NULL;
    if (!host_is_little_endian() &&
        (swapped = gcut__malloc(gcut__mul_size(n, sizeof(int32_t)), "grid write buffer")) == NULL)
        return GCUT_ERR_NOMEM;
    FILE *file = to_stdout ? stdout : fopen(path, "wb");
    if (file == NULL) {
        gcut__free(swapped);
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    }
    bool ok = true;
    if (grid->ndim == 2)
        ok = fprintf(file, MAGIC " 1 ndim 2 shape %" PRId64 " %" PRId64 " conn %d\n",
                     grid->shape[0], grid->shape[1], grid->connectivity) > 0;
    else
        ok = fprintf(file, MAGIC " 1 ndim 3 shape %" PRId64 " %" PRId64 " %" PRId64 " conn %d\n",
                     grid->shape[0], grid->shape[1], grid->shape[2], grid->connectivity) > 0;
    for (int k = 0; ok && k < 2 + grid->num_dirs; k++) {
        const int32_t *values = k < 2 ? grid->terminal[k] : grid->cap[k - 2];
        if (swapped != NULL) {
            memcpy(swapped, values, n * sizeof(int32_t));
            swap_bytes(swapped, n);
            values = swapped;
        }
        ok = fwrite(values, sizeof(int32_t), n, file) == n;
    }
    int err = errno;
    gcut__free(swapped);
    if ((to_stdout ? fflush(file) : fclose(file)) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok)
        return gcut__fail(GCUT_ERR_IO, "%s: write failed: %s", name, strerror(err));
    return GCUT_OK;
}
