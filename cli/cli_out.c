/* cli_out.c - what every `gcut` command shares so that it never loses or clobbers data
 * (issue #10): outputs go to a temporary file in the destination's folder and are renamed
 * only when the whole command has succeeded; an output naming an input is refused before
 * anything is written; standard output is checked for write errors; and numbers from the
 * command line are parsed with their range checked and named in the message. */
#define _DEFAULT_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- outputs written through temporary files ---- */

#define MAX_OUTPUTS 16

typedef struct pending_output {
    char *temp;  /* the temporary file written now (cli_alloc) */
    char *final; /* the destination (a link resolved), renamed over at commit (cli_alloc) */
    mode_t mode; /* given to the file at commit: the old file's, or fopen's under the umask */
} pending_output;

static pending_output pending[MAX_OUTPUTS];
static volatile sig_atomic_t num_pending;
/* Threads of one command (gcut segment --batch --jobs) add and commit outputs at once. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

/* On SIGINT / SIGTERM / SIGHUP the temporary files go (unlink is async-signal-safe), then
 * the signal does what it would have done. */
static void on_signal(int sig) {
    for (sig_atomic_t i = 0; i < num_pending; i++)
        if (pending[i].temp != NULL)
            unlink(pending[i].temp);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void) {
    static bool installed;
    if (installed)
        return;
    installed = true;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_signal;
        sigemptyset(&action.sa_mask);
        sigaction(sigs[i], &action, NULL);
    }
}

/* An existing path that is not a regular file (/dev/null, a FIFO, a terminal) is written in
 * place: there is nothing to replace atomically. */
static bool write_in_place(const char *path) {
    struct stat info;
    return stat(path, &info) == 0 && !S_ISREG(info.st_mode);
}

const char *cli_out_path(const char *cmd, const char *given) {
    if (strcmp(given, "-") == 0 || write_in_place(given))
        return given;
    /* An existing output keeps its mode, and a symbolic link stays a link: the new file goes
     * beside, and replaces, the file the link points to. */
    struct stat old;
    bool exists = stat(given, &old) == 0;
    if (exists && access(given, W_OK) != 0) {
        /* What fopen(path, "w") would have said: a read-only file is not replaced. */
        cli_error(cmd, GCUT_OK, "cannot write '%s': %s", given, strerror(errno));
        return NULL;
    }
    char *resolved = exists ? realpath(given, NULL) : NULL;
    char *final = cli_alloc(strlen(resolved != NULL ? resolved : given) + 1, "output name");
    if (final == NULL) {
        free(resolved);
        cli_error(cmd, GCUT_ERR_NOMEM, "%s", given);
        return NULL;
    }
    strcpy(final, resolved != NULL ? resolved : given);
    free(resolved);
    const char *path = final;
    /* DIR/.BASE.XXXXXX.EXT: hidden, in the same folder (so rename is atomic), keeping the
     * extension that picks the image format. */
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (dot == NULL || dot == base)
        dot = base + strlen(base);
    size_t dir_len = (size_t)(base - path), stem_len = (size_t)(dot - base), ext_len = strlen(dot);
    if (*base == '\0') {
        cli_error(cmd, GCUT_OK, "'%s' names a folder, not an output file", given);
        gcut_free(final);
        return NULL;
    }
    size_t room = dir_len + 1 + stem_len + 8 + ext_len + 1;
    char *temp = cli_alloc(room, "temporary file name");
    if (temp == NULL) {
        cli_error(cmd, GCUT_ERR_NOMEM, "%s", given);
        gcut_free(final);
        return NULL;
    }
    snprintf(temp, room, "%.*s.%.*s.XXXXXX%s", (int)dir_len, path, (int)stem_len, base, dot);
    pthread_mutex_lock(&pending_lock);
    install_handlers();
    pthread_mutex_unlock(&pending_lock);
    int fd = mkstemps(temp, (int)ext_len);
    if (fd < 0) {
        cli_error(cmd, GCUT_OK, "cannot write '%s': %s", given, strerror(errno));
        gcut_free(temp);
        gcut_free(final);
        return NULL;
    }
    if (close(fd) != 0) {
        cli_error(cmd, GCUT_OK, "cannot write '%s': %s", given, strerror(errno));
        unlink(temp);
        gcut_free(temp);
        gcut_free(final);
        return NULL;
    }
    /* mkstemps makes the file 0600 (so it can be written whatever the final mode); at commit
     * it gets the mode the old file had, or the one a plain fopen gives a new file. */
    pthread_mutex_lock(&pending_lock);
    if (num_pending == MAX_OUTPUTS) {
        pthread_mutex_unlock(&pending_lock);
        cli_error(cmd, GCUT_OK, "more than %d output files pending", MAX_OUTPUTS);
        unlink(temp);
        gcut_free(temp);
        gcut_free(final);
        return NULL;
    }
    mode_t mask = umask(0);
    umask(mask);
    pending[num_pending].mode = exists ? (old.st_mode & 07777) : (0666 & ~mask);
    pending[num_pending].temp = temp;
    pending[num_pending].final = final;
    num_pending++;
    pthread_mutex_unlock(&pending_lock);
    return temp;
}

FILE *cli_out_open(const char *cmd, const char *path) {
    if (strcmp(path, "-") == 0)
        return stdout;
    const char *temp = cli_out_path(cmd, path);
    if (temp == NULL)
        return NULL;
    FILE *file = fopen(temp, "wb");
    if (file == NULL)
        cli_error(cmd, GCUT_OK, "cannot write '%s': %s", path, strerror(errno));
    return file;
}

int cli_out_close(const char *cmd, FILE *file, const char *path) {
    if (file == NULL)
        return 1;
    int failed = ferror(file) != 0;
    int err = errno;
    if ((file == stdout ? fflush(file) : fclose(file)) != 0) {
        failed = 1;
        err = errno;
    }
    if (failed) {
        if (strcmp(path, "-") == 0)
            cli_error(cmd, GCUT_OK, "error writing standard output: %s", strerror(err));
        else
            cli_error(cmd, GCUT_OK, "cannot write '%s': %s", path, strerror(err));
        return 1;
    }
    return 0;
}

int cli_out_commit_one(const char *cmd, const char *temp) {
    pthread_mutex_lock(&pending_lock);
    sig_atomic_t i = 0;
    while (i < num_pending && pending[i].temp != temp)
        i++;
    if (i == num_pending) { /* "-" or a device: written in place */
        pthread_mutex_unlock(&pending_lock);
        return 0;
    }
    pending_output done = pending[i];
    pending[i] = pending[num_pending - 1];
    num_pending--;
    pthread_mutex_unlock(&pending_lock);
    int rc = 0;
    if (chmod(done.temp, done.mode) != 0 || rename(done.temp, done.final) != 0) {
        cli_error(cmd, GCUT_OK, "cannot write '%s': %s", done.final, strerror(errno));
        unlink(done.temp);
        rc = 1;
    }
    gcut_free(done.temp);
    gcut_free(done.final);
    return rc;
}

void cli_out_discard(void) {
    sig_atomic_t count = num_pending;
    num_pending = 0;
    for (sig_atomic_t i = 0; i < count; i++) {
        unlink(pending[i].temp);
        gcut_free(pending[i].temp);
        gcut_free(pending[i].final);
        pending[i].temp = pending[i].final = NULL;
    }
}

int cli_out_commit(const char *cmd) {
    int rc = 0;
    sig_atomic_t i = 0;
    for (; i < num_pending; i++) {
        if (chmod(pending[i].temp, pending[i].mode) != 0 ||
            rename(pending[i].temp, pending[i].final) != 0) {
            cli_error(cmd, GCUT_OK, "cannot write '%s': %s", pending[i].final, strerror(errno));
            rc = 1;
            break;
        }
        gcut_free(pending[i].temp);
        gcut_free(pending[i].final);
        pending[i].temp = pending[i].final = NULL;
    }
    /* After a failed rename the remaining temporary files go; those renamed stay. */
    for (sig_atomic_t k = i; k < num_pending; k++) {
        unlink(pending[k].temp);
        gcut_free(pending[k].temp);
        gcut_free(pending[k].final);
        pending[k].temp = pending[k].final = NULL;
    }
    num_pending = 0;
    return rc;
}

/* ---- outputs that would overwrite inputs ---- */

/* The canonical name of a path that may not exist yet: the real path of its folder and its
 * own name. NULL where the folder does not resolve. */
static char *canonical(const char *path) {
    char *full = realpath(path, NULL);
    if (full != NULL)
        return full;
    const char *slash = strrchr(path, '/');
    char *dir_path = NULL;
    if (slash == NULL) {
        dir_path = realpath(".", NULL);
    } else if (slash == path) {
        dir_path = realpath("/", NULL);
    } else {
        char *dir = strndup(path, (size_t)(slash - path));
        dir_path = dir != NULL ? realpath(dir, NULL) : NULL;
        free(dir);
    }
    if (dir_path == NULL)
        return NULL;
    const char *base = slash != NULL ? slash + 1 : path;
    size_t len = strlen(dir_path) + 1 + strlen(base) + 1;
    char *result = malloc(len);
    if (result != NULL)
        snprintf(result, len, "%s/%s", dir_path, base);
    free(dir_path);
    return result;
}

bool cli_same_file(const char *a, const char *b) {
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return false;
    struct stat sa, sb;
    bool has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
    if (has_a && has_b)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (has_a != has_b)
        return false;
    /* Neither exists (two outputs): the same name after resolving their folders. */
    char *ca = canonical(a), *cb = canonical(b);
    bool same = ca != NULL && cb != NULL ? strcmp(ca, cb) == 0 : strcmp(a, b) == 0;
    free(ca);
    free(cb);
    return same;
}

int cli_check_paths(const char *cmd, const cli_path *inputs, int num_inputs,
                    const cli_path *outputs, int num_outputs) {
    for (int o = 0; o < num_outputs; o++) {
        if (outputs[o].path == NULL || write_in_place(outputs[o].path))
            continue;
        for (int i = 0; i < num_inputs; i++) {
            if (inputs[i].path != NULL && cli_same_file(outputs[o].path, inputs[i].path)) {
                cli_error(cmd, GCUT_OK,
                          "%s '%s' is the %s '%s': refusing to overwrite an input (nothing "
                          "written)",
                          outputs[o].what, outputs[o].path, inputs[i].what, inputs[i].path);
                return 2;
            }
        }
        for (int k = 0; k < o; k++) {
            if (outputs[k].path != NULL && strcmp(outputs[k].path, "-") != 0 &&
                cli_same_file(outputs[o].path, outputs[k].path)) {
                cli_error(cmd, GCUT_OK, "%s '%s' and %s '%s' are the same file (nothing written)",
                          outputs[k].what, outputs[k].path, outputs[o].what, outputs[o].path);
                return 2;
            }
        }
    }
    return 0;
}

/* ---- standard output ---- */

int cli_check_std_streams(void) {
    /* A closed descriptor 0 or 2 would be handed to the next file opened, and an output file
     * written there would collect prompts or messages: park /dev/null on them. A closed
     * standard output cannot take the command's results: that is an error. */
    if (fcntl(STDERR_FILENO, F_GETFD) < 0 && errno == EBADF) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0 && fd != STDERR_FILENO)
            close(fd);
    }
    if (fcntl(STDIN_FILENO, F_GETFD) < 0 && errno == EBADF) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd >= 0 && fd != STDIN_FILENO)
            close(fd);
    }
    if (fcntl(STDOUT_FILENO, F_GETFD) < 0 && errno == EBADF) {
        fprintf(stderr, "gcut: standard output is closed; nothing done\n");
        return 1;
    }
    return 0;
}

int cli_finish(const char *cmd, int rc) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int err = errno;
        if (rc == 0)
            cli_error(cmd, GCUT_OK, "error writing standard output: %s",
                      err != 0 ? strerror(err) : "write failed");
        rc = rc == 0 ? 1 : rc;
    }
    if (rc == 0)
        rc = cli_out_commit(cmd);
    else
        cli_out_discard();
    return rc;
}

/* ---- numbers ---- */

bool cli_parse_int64(const char *cmd, const char *name, const char *text, int64_t lo, int64_t hi,
                     int64_t *value) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0') {
        cli_error(cmd, GCUT_OK, "%s '%s' is not an integer", name, text);
        return false;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        cli_error(cmd, GCUT_OK, "%s '%s' is out of range (%" PRId64 " to %" PRId64 ")", name, text,
                  lo, hi);
        return false;
    }
    *value = (int64_t)v;
    return true;
}

bool cli_parse_int(const char *cmd, const char *name, const char *text, int lo, int hi,
                   int *value) {
    int64_t v = 0;
    if (!cli_parse_int64(cmd, name, text, lo, hi, &v))
        return false;
    *value = (int)v;
    return true;
}

bool cli_parse_double(const char *cmd, const char *name, const char *text, double lo, double hi,
                      bool zero_ok, double *value) {
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || isnan(v)) {
        cli_error(cmd, GCUT_OK, "%s '%s' is not a number", name, text);
        return false;
    }
    if (!(zero_ok && v == 0.0) && !(v >= lo && v <= hi)) {
        cli_error(cmd, GCUT_OK, "%s '%s' is out of range (%g to %g%s)", name, text, lo, hi,
                  zero_ok ? ", or 0" : "");
        return false;
    }
    *value = v;
    return true;
}

bool cli_parse_dims(const char *cmd, const char *name, const char *text, int min_dims, int max_dims,
                    int64_t max_side, int64_t max_product, int64_t *dims, int *num_dims) {
    const char *p = text;
    int count = 0;
    int64_t product = 1;
    for (;;) {
        if (count == max_dims) {
            cli_error(cmd, GCUT_OK, "%s '%s' has more than %d sizes", name, text, max_dims);
            return false;
        }
        char *end = NULL;
        errno = 0;
        if (*p < '0' || *p > '9') {
            cli_error(cmd, GCUT_OK, "%s '%s' is not sizes separated by 'x' (such as 640x480)", name,
                      text);
            return false;
        }
        long long v = strtoll(p, &end, 10);
        if (errno == ERANGE || v < 1 || v > max_side) {
            cli_error(cmd, GCUT_OK, "%s '%s': size %d is out of range (1 to %" PRId64 ")", name,
                      text, count + 1, max_side);
            return false;
        }
        dims[count++] = (int64_t)v;
        if (product > max_product / v) {
            cli_error(cmd, GCUT_OK, "%s '%s' makes more than %" PRId64 " pixels", name, text,
                      max_product);
            return false;
        }
        product *= v;
        if (*end == '\0')
            break;
        if (*end != 'x') {
            cli_error(cmd, GCUT_OK, "%s '%s' is not sizes separated by 'x' (such as 640x480)", name,
                      text);
            return false;
        }
        p = end + 1;
    }
    if (count < min_dims) {
        cli_error(cmd, GCUT_OK, "%s '%s' needs at least %d sizes", name, text, min_dims);
        return false;
    }
    *num_dims = count;
    return true;
}
