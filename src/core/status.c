/* status.c - the status table (names and messages from GCUT_STATUS_MAP), the per-thread
 * last-error message, the version calls and the monotonic clock. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdio.h>
#include <time.h>

static _Thread_local char last_error[1024];

unsigned gcut_version(void) {
    return GCUT_VERSION_NUMBER;
}

const char *gcut_version_string(void) {
    return GCUT_VERSION_STRING;
}

const char *gcut_status_name(gcut_status status) {
    switch (status) {
#define GCUT__STATUS_NAME(name, value, msg)                                                        \
    case GCUT_##name:                                                                              \
        return #name;
        GCUT_STATUS_MAP(GCUT__STATUS_NAME)
#undef GCUT__STATUS_NAME
    }
    return "UNKNOWN";
}

const char *gcut_strerror(gcut_status status) {
    switch (status) {
#define GCUT__STATUS_MSG(name, value, msg)                                                         \
    case GCUT_##name:                                                                              \
        return msg;
        GCUT_STATUS_MAP(GCUT__STATUS_MSG)
#undef GCUT__STATUS_MSG
    }
    return "unknown status";
}

const char *gcut_last_error(void) {
    return last_error;
}

gcut_status gcut__failv(gcut_status status, const char *fmt, va_list ap) {
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    return status;
}

gcut_status gcut__fail(gcut_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gcut__failv(status, fmt, ap);
    va_end(ap);
    return status;
}

void gcut__clear_error(void) {
    last_error[0] = '\0';
}

double gcut__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
