/* source.c - where video frames come from and where overlay videos go: folders and lists of
 * numbered frames (PNG/JPEG/PNM through src/io/image.c), and video files decoded / encoded by
 * gcut's FFmpeg module, loaded only when a video file is opened (src/io/ffmpeg_load.c; Garrett
 * & Saito 2009, 4: frames are acquired while earlier ones are cut). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ffmpeg_module.h"

int gcut_video_file_support(void) {
    return gcut__ffmpeg_module(NULL) != NULL;
}

/* A failure of the FFmpeg module, its message into gcut_last_error(). */
static gcut_status module_fail(int status, const char *message) {
    return gcut__fail((gcut_status)status, "%s", message);
}

struct gcut_video_source {
    char **paths; /* frames of a folder or list; NULL for a video file */
    int64_t count, next;
    int64_t width, height;
    double fps;
    char *name;                 /* the path given, for messages */
    const gcut__ffmpeg_api *av; /* a video file: the FFmpeg module and its decoder */
    void *file;
};

static char *dup_string(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = gcut__malloc(n, "path");
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

static bool has_image_extension(const char *name) {
    const char *dot = strrchr(name, '.');
    if (dot == NULL)
        return false;
    static const char *const exts[] = {".png", ".jpg", ".jpeg", ".ppm", ".pgm", ".pnm"};
    for (size_t k = 0; k < sizeof exts / sizeof exts[0]; k++) {
        const char *e = exts[k];
        size_t j = 0;
        while (e[j] != '\0' && dot[j] != '\0' && tolower((unsigned char)dot[j]) == e[j])
            j++;
        if (e[j] == '\0' && dot[j] == '\0')
            return true;
    }
    return false;
}

/* The last run of digits in a file name, or -1. */
static int64_t frame_number(const char *name) {
    int64_t value = -1;
    for (const char *p = name; *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p))
            continue;
        int64_t v = 0;
        while (isdigit((unsigned char)*p) && v < INT64_MAX / 10)
            v = v * 10 + (*p++ - '0');
        value = v;
        p--;
    }
    return value;
}

typedef struct numbered {
    int64_t number;
    char *path;
} numbered;

static int by_number(const void *a, const void *b) {
    const numbered *x = a, *y = b;
    return x->number < y->number ? -1 : x->number > y->number;
}

static gcut_status add_path(gcut_video_source *s, int64_t *room, char *path) {
    if (s->count == *room) {
        int64_t grown = *room < 64 ? 64 : *room * 2;
        char **p = gcut__realloc(s->paths, (size_t)grown * sizeof *p, "frame list");
        if (p == NULL) {
            gcut__free(path);
            return GCUT_ERR_NOMEM;
        }
        s->paths = p;
        *room = grown;
    }
    s->paths[s->count++] = path;
    return GCUT_OK;
}

static char *join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = gcut__malloc(a + b + 2, "path");
    if (p == NULL)
        return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

static gcut_status open_folder(gcut_video_source *s, const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open folder: %s", dir, strerror(errno));
    numbered *list = NULL;
    int64_t count = 0, room = 0;
    gcut_status st = GCUT_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !has_image_extension(e->d_name))
            continue;
        const int64_t number = frame_number(e->d_name);
        if (number < 0)
            continue;
        if (count == room) {
            room = room < 64 ? 64 : room * 2;
            numbered *grown = gcut__realloc(list, (size_t)room * sizeof *list, "frame list");
            if (grown == NULL) {
                st = GCUT_ERR_NOMEM;
                break;
            }
            list = grown;
        }
        list[count].number = number;
        if ((list[count].path = join(dir, e->d_name)) == NULL) {
            st = GCUT_ERR_NOMEM;
            break;
        }
        count++;
    }
    closedir(d);
    if (st == GCUT_OK && count == 0)
        st = gcut__fail(GCUT_ERR_PARSE, "%s: no numbered frames (PNG, JPEG, PNM) in the folder",
                        dir);
    if (st == GCUT_OK) {
        qsort(list, (size_t)count, sizeof *list, by_number);
        for (int64_t k = 1; k < count && st == GCUT_OK; k++) {
            if (list[k].number == list[k - 1].number)
                st = gcut__fail(GCUT_ERR_PARSE, "%s: two frames numbered %" PRId64 " (%s, %s)", dir,
                                list[k].number, list[k - 1].path, list[k].path);
            else if (list[k].number != list[k - 1].number + 1)
                st =
                    gcut__fail(GCUT_ERR_PARSE,
                               "%s: frame %" PRId64 " is missing (the frames go from %" PRId64
                               " to %" PRId64 " with a gap)",
                               dir, list[k - 1].number + 1, list[0].number, list[count - 1].number);
        }
    }
    int64_t path_room = 0;
    for (int64_t k = 0; k < count; k++) {
        if (st == GCUT_OK) {
            st = add_path(s, &path_room, list[k].path);
        } else {
            gcut__free(list[k].path);
        }
    }
    gcut__free(list);
    return st;
}

static gcut_status open_list(gcut_video_source *s, const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    /* Relative frame paths are relative to the list's folder. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    char line[4096];
    int64_t room = 0, lineno = 0;
    gcut_status st = GCUT_OK;
    while (st == GCUT_OK && fgets(line, sizeof line, f) != NULL) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            st = gcut__fail(GCUT_ERR_PARSE, "%s:%" PRId64 ": line too long", path, lineno);
            break;
        }
        while (len > 0 && isspace((unsigned char)line[len - 1]))
            line[--len] = '\0';
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || *p == '#')
            continue;
        char *full = *p == '/' ? dup_string(p) : join(dir, p);
        st = full == NULL ? GCUT_ERR_NOMEM : add_path(s, &room, full);
    }
    fclose(f);
    if (st == GCUT_OK && s->count == 0)
        st = gcut__fail(GCUT_ERR_PARSE, "%s: the list names no frames", path);
    return st;
}

/* A video file, through the FFmpeg module. */
static gcut_status open_file(gcut_video_source *s, const char *path) {
    const char *why = NULL;
    const gcut__ffmpeg_api *av = gcut__ffmpeg_module(&why);
    if (av == NULL)
        return gcut__fail(GCUT_ERR_UNSUPPORTED, "%s: %s", path, why);
    char err[1024] = "";
    const int st =
        av->source_open(path, &s->file, &s->width, &s->height, &s->count, &s->fps, err, sizeof err);
    if (st != GCUT_OK)
        return module_fail(st, err);
    s->av = av;
    return GCUT_OK;
}

gcut_status gcut_video_source_open(const char *path, gcut_video_source **out) {
    if (path == NULL || out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_source_open: path or out is NULL");
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return gcut__fail(GCUT_ERR_IO, "%s: %s", path, strerror(errno));
    gcut_video_source *s = gcut__calloc(1, sizeof *s, "video source");
    if (s == NULL)
        return GCUT_ERR_NOMEM;
    s->fps = 25.0;
    gcut_status st;
    if ((s->name = dup_string(path)) == NULL) {
        gcut__free(s);
        return GCUT_ERR_NOMEM;
    }
    const char *dot = strrchr(path, '.');
    const bool is_list = dot != NULL && (strcmp(dot, ".txt") == 0 || strcmp(dot, ".lst") == 0 ||
                                         strcmp(dot, ".list") == 0);
    if (S_ISDIR(sb.st_mode)) {
        st = open_folder(s, path);
    } else if (is_list) {
        st = open_list(s, path);
    } else if (has_image_extension(path)) {
        st = gcut__fail(GCUT_ERR_INVALID_ARG,
                        "%s: a single image; give the folder of frames or a list file", path);
    } else {
        st = open_file(s, path);
    }
    if (st == GCUT_OK && s->paths != NULL) {
        /* Geometry from the first frame. */
        gcut_image first;
        st = gcut_image_read(s->paths[0], &first);
        if (st == GCUT_OK) {
            s->width = first.width;
            s->height = first.height;
            gcut_image_free(&first);
        }
    }
    if (st != GCUT_OK) {
        gcut_video_source_close(s);
        return st;
    }
    *out = s;
    return GCUT_OK;
}

void gcut_video_source_info(const gcut_video_source *s, int64_t *width, int64_t *height,
                            int64_t *count, double *fps) {
    if (width)
        *width = s ? s->width : 0;
    if (height)
        *height = s ? s->height : 0;
    if (count)
        *count = s ? s->count : 0;
    if (fps)
        *fps = s ? s->fps : 0;
}

/* Frame index of a folder or list into frame (8-bit RGB of the source's size, allocated on
 * first use): reads only s->paths and the geometry, so threads may read different frames at
 * once. */
static gcut_status read_path(const gcut_video_source *s, int64_t index, gcut_image *frame) {
    const char *path = s->paths[index];
    gcut_image img;
    gcut_status st = gcut_image_read(path, &img);
    if (st != GCUT_OK) {
        char prev[512];
        snprintf(prev, sizeof prev, "%s", gcut_last_error());
        return gcut__fail(st, "frame %" PRId64 " (%s): %s", index, path, prev);
    }
    if (img.width != s->width || img.height != s->height) {
        const int64_t iw = img.width, ih = img.height;
        gcut_image_free(&img);
        return gcut__fail(GCUT_ERR_PARSE,
                          "frame %" PRId64 " (%s) is %" PRId64 "x%" PRId64
                          " but the first frame is %" PRId64 "x%" PRId64,
                          index, path, iw, ih, s->width, s->height);
    }
    uint8_t *dst = frame->pixels;
    const int64_t n = s->width * s->height;
    const int ch = img.channels;
    if (img.bit_depth == 8 && ch == 3) {
        memcpy(dst, img.pixels, (size_t)n * 3);
    } else {
        for (int64_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                const int k = ch >= 3 ? c : 0;
                dst[i * 3 + c] = img.bit_depth == 8
                                     ? ((const uint8_t *)img.pixels)[i * ch + k]
                                     : (uint8_t)(((const uint16_t *)img.pixels)[i * ch + k] >> 8);
            }
    }
    gcut_image_free(&img);
    return GCUT_OK;
}

static gcut_status check_frame_buffer(const gcut_video_source *s, gcut_image *frame) {
    if (frame->pixels == NULL) {
        gcut_status st = gcut_image_alloc(frame, s->width, s->height, 1, 3, 8);
        if (st != GCUT_OK)
            return st;
    }
    if (frame->width != s->width || frame->height != s->height || frame->channels != 3 ||
        frame->bit_depth != 8)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_source_read: frame buffer geometry "
                                                "differs from the source's");
    return GCUT_OK;
}

int64_t gcut_video_source_frames(const gcut_video_source *s) {
    return s != NULL && s->paths != NULL ? s->count : -1;
}

gcut_status gcut_video_source_read_frame(const gcut_video_source *s, int64_t index,
                                         gcut_image *frame) {
    if (s == NULL || frame == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_source_read_frame: NULL argument");
    if (s->paths == NULL)
        return gcut__fail(GCUT_ERR_UNSUPPORTED,
                          "%s: a video file is read in order (gcut_video_source_read)", s->name);
    if (index < 0 || index >= s->count)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_video_source_read_frame: frame %" PRId64 " of %" PRId64, index,
                          s->count);
    gcut_status st = check_frame_buffer(s, frame);
    return st != GCUT_OK ? st : read_path(s, index, frame);
}

gcut_status gcut_video_source_read(gcut_video_source *s, gcut_image *frame, int *done) {
    if (s == NULL || frame == NULL || done == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_source_read: NULL argument");
    *done = 0;
    gcut_status st = check_frame_buffer(s, frame);
    if (st != GCUT_OK)
        return st;
    if (s->paths != NULL) {
        if (s->next >= s->count) {
            *done = 1;
            return GCUT_OK;
        }
        if ((st = read_path(s, s->next, frame)) != GCUT_OK)
            return st;
        s->next++;
        return GCUT_OK;
    }
    if (s->file == NULL)
        return gcut__fail(GCUT_ERR_INTERNAL, "video source without frames");
    char err[1024] = "";
    const int got = s->av->source_read(s->file, frame->pixels, done, err, sizeof err);
    if (got != GCUT_OK)
        return module_fail(got, err);
    if (!*done)
        s->next++;
    return GCUT_OK;
}

void gcut_video_source_close(gcut_video_source *s) {
    if (s == NULL)
        return;
    for (int64_t k = 0; s->paths != NULL && k < s->count; k++)
        gcut__free(s->paths[k]);
    gcut__free(s->paths);
    gcut__free(s->name);
    if (s->file != NULL)
        s->av->source_close(s->file);
    gcut__free(s);
}

/* ---- overlay videos ---- */

struct gcut_video_writer {
    int64_t width, height;
    const gcut__ffmpeg_api *av;
    void *file;
};

gcut_status gcut_video_writer_open(const char *path, int64_t width, int64_t height, double fps,
                                   gcut_video_writer **out) {
    if (path == NULL || out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_writer_open: path or out is NULL");
    *out = NULL;
    if (width < 2 || height < 2 || width > 16384 || height > 16384)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "video writer: size %" PRId64 "x%" PRId64, width,
                          height);
    const char *why = NULL;
    const gcut__ffmpeg_api *av = gcut__ffmpeg_module(&why);
    if (av == NULL)
        return gcut__fail(GCUT_ERR_UNSUPPORTED, "%s: writing a video: %s", path, why);
    gcut_video_writer *w = gcut__calloc(1, sizeof *w, "video writer");
    if (w == NULL)
        return GCUT_ERR_NOMEM;
    w->width = width;
    w->height = height;
    w->av = av;
    char err[1024] = "";
    const int st = av->writer_open(path, width, height, fps, &w->file, err, sizeof err);
    if (st != GCUT_OK) {
        gcut__free(w);
        return module_fail(st, err);
    }
    *out = w;
    return GCUT_OK;
}

gcut_status gcut_video_writer_write(gcut_video_writer *w, const gcut_image *frame) {
    if (w == NULL || frame == NULL || frame->pixels == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_writer_write: NULL argument");
    if (frame->width != w->width || frame->height != w->height || frame->channels != 3 ||
        frame->bit_depth != 8)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "video writer: frame is %" PRId64 "x%" PRId64
                          " (%d channels) but the video is %" PRId64 "x%" PRId64 " RGB",
                          frame->width, frame->height, frame->channels, w->width, w->height);
    char err[1024] = "";
    const int st = w->av->writer_write(w->file, frame->pixels, err, sizeof err);
    return st == GCUT_OK ? GCUT_OK : module_fail(st, err);
}

gcut_status gcut_video_writer_close(gcut_video_writer *w) {
    if (w == NULL)
        return GCUT_OK;
    char err[1024] = "";
    const int st = w->av->writer_close(w->file, err, sizeof err);
    gcut__free(w);
    return st == GCUT_OK ? GCUT_OK : module_fail(st, err);
}
