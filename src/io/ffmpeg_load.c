/* ffmpeg_load.c - finds and loads gcut's FFmpeg module (libgcut_ffmpeg.so, src/ffmpeg/) with
 * dlopen the first time a video file is opened, so that commands and programs that never decode
 * video (gcut segment: GrabCut, Rother et al. 2004) do not pay for loading FFmpeg's libraries. */
#define _GNU_SOURCE /* dladdr */
#include "internal.h"

#include "ffmpeg_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODULE_NAME "libgcut_ffmpeg.so"
/* Set by the build: where `cmake --install` puts the module, absolute and relative to the
 * installed gcut binary; whether this build made one at all. */
#ifndef GCUT_MODULE_DIR
#define GCUT_MODULE_DIR "/usr/local/lib/gcut"
#endif
#ifndef GCUT_MODULE_FROM_BIN
#define GCUT_MODULE_FROM_BIN "../lib/gcut"
#endif
#ifndef GCUT_FFMPEG_MODULE_BUILT
#define GCUT_FFMPEG_MODULE_BUILT 0
#endif

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const gcut__ffmpeg_api *loaded;
static char reason[3072];
static char tried[2048];

/* Append text to the string in buf (room bytes), cutting it where it does not fit. */
static void cat(char *buf, size_t room, const char *text) {
    const size_t used = strnlen(buf, room - 1);
    size_t n = strlen(text);
    if (n > room - 1 - used)
        n = room - 1 - used;
    memcpy(buf + used, text, n);
    buf[used + n] = '\0';
}

static void add_tried(const char *path) {
    if (tried[0] != '\0')
        cat(tried, sizeof tried, ", ");
    cat(tried, sizeof tried, path);
}

/* 1 loaded, 0 no file there (keep looking), -1 a file that would not load (reason set). */
static int try_path(const char *path) {
    if (access(path, F_OK) != 0) {
        add_tried(path);
        return 0;
    }
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *e = dlerror();
        reason[0] = '\0';
        cat(reason, sizeof reason, "gcut's FFmpeg module ");
        cat(reason, sizeof reason, path);
        cat(reason, sizeof reason, " cannot be loaded: ");
        cat(reason, sizeof reason, e != NULL ? e : "unknown error");
        cat(reason, sizeof reason,
            " (it needs FFmpeg's shared libraries libavformat, libavcodec, libswscale and "
            "libavutil of the version it was built with; Debian: apt-get install ffmpeg)");
        return -1;
    }
    gcut__ffmpeg_entry_fn entry;
    void *sym = dlsym(handle, GCUT__FFMPEG_ENTRY);
    memcpy(&entry, &sym, sizeof entry); /* object to function pointer, without a cast warning */
    const gcut__ffmpeg_api *api = sym != NULL ? entry() : NULL;
    if (api == NULL || api->abi != GCUT__FFMPEG_ABI) {
        char version[96];
        if (api == NULL)
            snprintf(version, sizeof version, " (it has no %s)", GCUT__FFMPEG_ENTRY);
        else
            snprintf(version, sizeof version, " (interface %d, wanted %d)", api->abi,
                     GCUT__FFMPEG_ABI);
        reason[0] = '\0';
        cat(reason, sizeof reason, path);
        cat(reason, sizeof reason, " is not a gcut FFmpeg module of this version");
        cat(reason, sizeof reason, version);
        cat(reason, sizeof reason, ": install the module built with this gcut");
        dlclose(handle);
        return -1;
    }
    loaded = api; /* the handle stays open for the life of the process */
    return 1;
}

/* dir + "/" + rest into out; false when it does not fit. */
static bool join_path(char *out, size_t room, const char *dir, const char *rest) {
    const int n = snprintf(out, room, "%s/%s", dir, rest);
    return n > 0 && (size_t)n < room;
}

static void load(void) {
    const char *env = getenv("GCUT_FFMPEG_MODULE");
    if (env != NULL && env[0] != '\0') {
        if (try_path(env) == 0) {
            reason[0] = '\0';
            cat(reason, sizeof reason, "GCUT_FFMPEG_MODULE names ");
            cat(reason, sizeof reason, env);
            cat(reason, sizeof reason,
                ", which does not exist (it should name gcut's FFmpeg module, " MODULE_NAME ")");
        }
        return;
    }
    char dirs[3][PATH_MAX];
    int ndirs = 0;
    /* Beside the executable (a build tree), and where `cmake --install` puts it relative to
     * the installed gcut binary. */
    char exe[PATH_MAX];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            dirs[ndirs][0] = '\0';
            cat(dirs[ndirs++], PATH_MAX, exe);
            if (join_path(dirs[ndirs], PATH_MAX, exe, GCUT_MODULE_FROM_BIN))
                ndirs++;
        }
    }
    /* Beside the shared libgcut this code is in (its gcut/ folder), for programs linking it. */
    Dl_info info;
    if (dladdr((void *)&load_once, &info) != 0 && info.dli_fname != NULL) {
        char lib[PATH_MAX];
        lib[0] = '\0';
        cat(lib, sizeof lib, info.dli_fname);
        char *slash = strrchr(lib, '/');
        if (slash != NULL && strstr(info.dli_fname, "libgcut") != NULL) {
            *slash = '\0';
            if (join_path(dirs[ndirs], PATH_MAX, lib, "gcut"))
                ndirs++;
        }
    }
    char path[PATH_MAX];
    for (int k = 0; k < ndirs; k++) {
        if (!join_path(path, sizeof path, dirs[k], MODULE_NAME))
            continue;
        const int got = try_path(path);
        if (got != 0)
            return;
    }
    if (join_path(path, sizeof path, GCUT_MODULE_DIR, MODULE_NAME) && try_path(path) != 0)
        return;
    reason[0] = '\0';
    cat(reason, sizeof reason,
        "video files need gcut's FFmpeg module " MODULE_NAME ", which was not found (looked for ");
    cat(reason, sizeof reason, tried);
    cat(reason, sizeof reason, ")");
    cat(reason, sizeof reason,
        GCUT_FFMPEG_MODULE_BUILT
            ? ": install it with `cmake --install` (it goes to " GCUT_MODULE_DIR ") or set "
              "GCUT_FFMPEG_MODULE to its path"
            : ": this build did not find FFmpeg's development libraries, so it made no "
              "module (Debian: apt-get install libavformat-dev libavcodec-dev "
              "libswscale-dev libavutil-dev, then build gcut again), or set "
              "GCUT_FFMPEG_MODULE to a module's path");
    cat(reason, sizeof reason, "; or give a folder or list of frames");
}

const gcut__ffmpeg_api *gcut__ffmpeg_module(const char **why) {
    pthread_once(&load_once, load);
    if (why != NULL)
        *why = loaded != NULL ? NULL : reason;
    return loaded;
}
