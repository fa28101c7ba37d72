/* ffmpeg_module.h - the interface between libgcut and its FFmpeg module (libgcut_ffmpeg.so,
 * src/ffmpeg/ffmpeg_io.c), which libgcut loads with dlopen only when a video file is opened
 * (src/video/ffmpeg_load.c), so that no other process pays for loading FFmpeg's libraries. */
#ifndef GCUT_FFMPEG_MODULE_H
#define GCUT_FFMPEG_MODULE_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever the table below changes; a module of another version is refused. */
#define GCUT__FFMPEG_ABI 1
/* The one symbol the module exports: it returns its table. */
#define GCUT__FFMPEG_ENTRY "gcut_ffmpeg_module_api"

/* Every function returns a gcut_status value (0 = GCUT_OK) and, on failure, writes a message
 * naming the file into err (errlen bytes). Frames are 8-bit RGB, width * 3 bytes a row. */
typedef struct gcut__ffmpeg_api {
    int abi; /* GCUT__FFMPEG_ABI */
    /* Open a video file for decoding; count is -1 when the container does not say. */
    int (*source_open)(const char *path, void **out, int64_t *width, int64_t *height,
                       int64_t *count, double *fps, char *err, size_t errlen);
    /* Decode the next frame into rgb (width * height * 3 bytes); *done = 1 at the end. */
    int (*source_read)(void *source, uint8_t *rgb, int *done, char *err, size_t errlen);
    void (*source_close)(void *source);
    /* Open an MPEG-4 Part 2 video (.mp4, .avi, .mkv) for writing width x height frames. */
    int (*writer_open)(const char *path, int64_t width, int64_t height, double fps, void **out,
                       char *err, size_t errlen);
    int (*writer_write)(void *writer, const uint8_t *rgb, char *err, size_t errlen);
    /* Flush and close; returns the first error of the flush. */
    int (*writer_close)(void *writer, char *err, size_t errlen);
} gcut__ffmpeg_api;

typedef const gcut__ffmpeg_api *(*gcut__ffmpeg_entry_fn)(void);

/* In libgcut (src/io/ffmpeg_load.c): the module's table, loaded on the first call (once per
 * process, thread-safe); NULL when it cannot be loaded, with *why (if why is not NULL) set to a
 * sentence saying what was looked for and what to install. */
const gcut__ffmpeg_api *gcut__ffmpeg_module(const char **why);

#endif
