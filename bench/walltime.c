/* walltime.c - wall time of whole processes, the way a user's shell sees one (fork to reaped),
 * for the one-process bar of issue #17 (docs/CUDA-GRID.md, "Segmentation process time").
 * Runs several commands in turn (A B A B ...) and prints each run and the medians. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_COMMANDS = 16, MAX_RUNS = 1000 };

static void usage(FILE *out) {
    fputs(
        "usage: walltime [-n RUNS] [-o LOG_PREFIX] [-w WARMUP] -- CMD [ARGS] [:: CMD [ARGS]]...\n\n"
        "Run each command RUNS times (default 5), the commands in turn (A B A B ...), and print\n"
        "the wall time of every run (fork to reaped, CLOCK_MONOTONIC) and each command's\n"
        "median, smallest and largest. Each child gets GCUT_T0_NS, the CLOCK_MONOTONIC time in\n"
        "ns just before its fork, so it can print a timeline from its own start (GCUT_TIMELINE=1\n"
        "in `gcut segment`). With -o, command K's standard output and error are appended to\n"
        "LOG_PREFIX.K.log (else they go to /dev/null). WARMUP runs of each are made first and\n"
        "not counted (default 0). Exit status 1 if any run failed.\n",
        out);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One run of argv; its output appended to log (NULL: /dev/null). @return wall ms, < 0 failed. */
static double run_once(char **argv, const char *log, int *status_out) {
    const int64_t t0 = now_ns();
    char t0_text[32];
    snprintf(t0_text, sizeof t0_text, "%" PRId64, t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("walltime: fork");
        return -1;
    }
    if (pid == 0) {
        setenv("GCUT_T0_NS", t0_text, 1);
        int fd = open(log != NULL ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "walltime: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    const int64_t t1 = now_ns();
    *status_out = status;
    return (double)(t1 - t0) / 1e6;
}

int main(int argc, char **argv) {
    int runs = 5, warmup = 0;
    const char *prefix = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            usage(stderr);
            return 2;
        }
        if (strcmp(argv[i], "-n") == 0)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "-w") == 0)
            warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "-o") == 0)
            prefix = argv[++i];
        else {
            usage(stderr);
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || warmup < 0 || warmup > MAX_RUNS || i >= argc) {
        usage(stderr);
        return 2;
    }
    /* Split the rest at "::" into commands (argv is ours to cut). */
    char **cmd[MAX_COMMANDS];
    int num = 0;
    cmd[num++] = &argv[i];
    for (int k = i; k < argc; k++)
        if (strcmp(argv[k], "::") == 0) {
            argv[k] = NULL;
            if (num == MAX_COMMANDS || k + 1 >= argc) {
                usage(stderr);
                return 2;
            }
            cmd[num++] = &argv[k + 1];
        }
    static double wall[MAX_COMMANDS][MAX_RUNS];
    char logs[MAX_COMMANDS][4096];
    for (int c = 0; c < num; c++)
        if (prefix != NULL)
            snprintf(logs[c], sizeof logs[c], "%s.%c.log", prefix, 'A' + c);
    int failed = 0;
    for (int r = -warmup; r < runs; r++)
        for (int c = 0; c < num; c++) {
            int status = 0;
            const double ms = run_once(cmd[c], prefix != NULL ? logs[c] : NULL, &status);
            const int ok = ms >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
            failed += !ok;
            if (r < 0)
                continue;
            wall[c][r] = ms;
            printf("run %2d %c %8.1f ms%s\n", r + 1, 'A' + c, ms, ok ? "" : "  (FAILED)");
        }
    for (int c = 0; c < num; c++) {
        double sorted[MAX_RUNS];
        memcpy(sorted, wall[c], (size_t)runs * sizeof *sorted);
        qsort(sorted, (size_t)runs, sizeof *sorted, compare);
        const double median =
            runs % 2 ? sorted[runs / 2] : 0.5 * (sorted[runs / 2 - 1] + sorted[runs / 2]);
        printf("%c median %.1f ms (%.1f-%.1f, %d runs):", 'A' + c, median, sorted[0],
               sorted[runs - 1], runs);
        for (char **a = cmd[c]; *a != NULL; a++)
            printf(" %s", *a);
        printf("\n");
    }
    return failed ? 1 : 0;
}
