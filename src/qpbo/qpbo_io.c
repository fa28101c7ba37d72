/* qpbo_io.c - the QPBO text format of docs/FORMATS.md ("p qpbo N M", "u I E0 E1",
 * "e I J E00 E01 E10 E11", optional "b I BLOCK", "c ..."): a strict reader whose every error
 * names the line, as the DIMACS reader's do, and a writer. */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "qpbo_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct qpbo_reader {
    const char *name;
    int64_t line;
} qpbo_reader;

static gcut_status qpbo_parse_error(const qpbo_reader *r, const char *fmt, ...) GCUT__PRINTF(2, 3);

static gcut_status qpbo_parse_error(const qpbo_reader *r, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gcut__fail(GCUT_ERR_PARSE, "%s:%" PRId64 ": %s", r->name, r->line, what);
}

/* The next whitespace-separated token of *cursor, or NULL at the end of the line. */
static char *next_token(char **cursor) {
    char *s = *cursor;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    if (*s == '\0')
        return NULL;
    char *start = s;
    while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
        s++;
    if (*s != '\0')
        *s++ = '\0';
    *cursor = s;
    return start;
}

/* A decimal integer in [lo, hi]; what names the field in the message. */
static gcut_status parse_field(const qpbo_reader *r, char **cursor, const char *what, int64_t lo,
                               int64_t hi, int64_t *value) {
    char *t = next_token(cursor);
    if (t == NULL)
        return qpbo_parse_error(r, "missing %s", what);
    const char *digits = t + (*t == '-' || *t == '+');
    if (*digits == '\0' || strspn(digits, "0123456789") != strlen(digits))
        return qpbo_parse_error(r, "%s '%.40s' is not an integer", what, t);
    errno = 0;
    long long v = strtoll(t, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return qpbo_parse_error(r, "%s %.40s is outside [%" PRId64 ", %" PRId64 "]", what, t, lo,
                                hi);
    *value = (int64_t)v;
    return GCUT_OK;
}

static gcut_status end_of_line(const qpbo_reader *r, char **cursor) {
    char *t = next_token(cursor);
    if (t != NULL)
        return qpbo_parse_error(r, "unexpected '%.40s' after the last field", t);
    return GCUT_OK;
}

static gcut_status read_lines(FILE *file, qpbo_reader *r, gcut_qpbo **out) {
    char *buf = NULL;
    size_t room = 0;
    gcut_qpbo *q = NULL;
    int64_t declared_terms = 0, problem_line = 0;
    int32_t *blocks = NULL, num_blocks = 0;
    gcut_status st = GCUT_OK;
    for (;;) {
        errno = 0;
        ssize_t len = getline(&buf, &room, file);
        if (len < 0) {
            if (ferror(file))
                st = gcut__fail(GCUT_ERR_IO, "%s:%" PRId64 ": read error: %s", r->name, r->line + 1,
                                strerror(errno));
            break;
        }
        r->line++;
        if ((size_t)len != strlen(buf)) {
            st = qpbo_parse_error(r, "a NUL byte inside the line");
            break;
        }
        char *cursor = buf;
        char *kind = next_token(&cursor);
        if (kind == NULL || kind[0] == 'c')
            continue;
        int64_t v[6];
        if (strcmp(kind, "p") == 0) {
            if (q != NULL) {
                st = qpbo_parse_error(r, "second problem line (the first is line %" PRId64 ")",
                                      problem_line);
                break;
            }
            char *format = next_token(&cursor);
            if (format == NULL || strcmp(format, "qpbo") != 0) {
                st = qpbo_parse_error(r, "the problem line must read 'p qpbo N M' (got '%.40s')",
                                      format ? format : "");
                break;
            }
            if ((st = parse_field(r, &cursor, "node count N", 0, INT64_MAX / 4, &v[0])) ||
                (st = parse_field(r, &cursor, "term count M", 0, INT64_MAX / 4, &v[1])) ||
                (st = end_of_line(r, &cursor)))
                break;
            problem_line = r->line;
            declared_terms = v[1];
            st = gcut_qpbo_create(v[0], v[1] < (1 << 24) ? v[1] : (1 << 24), &q);
            if (st != GCUT_OK)
                break;
            continue;
        }
        bool unary = strcmp(kind, "u") == 0, block_line = strcmp(kind, "b") == 0;
        if (!unary && !block_line && strcmp(kind, "e") != 0) {
            st = qpbo_parse_error(r, "unknown line type '%.40s' (expected c, p, u, e or b)", kind);
            break;
        }
        if (q == NULL) {
            st = qpbo_parse_error(r, "'%s' line before the problem line 'p qpbo N M'", kind);
            break;
        }
        const int64_t n = gcut_qpbo_num_nodes(q);
        if (n == 0) {
            st = qpbo_parse_error(r, "'%s' line in a problem of 0 nodes", kind);
            break;
        }
        if (block_line) {
            if ((st = parse_field(r, &cursor, "node I", 1, n, &v[0])) ||
                (st = parse_field(r, &cursor, "block B", 0, (1 << 20) - 1, &v[1])) ||
                (st = end_of_line(r, &cursor)))
                break;
            if (blocks == NULL && (blocks = calloc((size_t)n, sizeof *blocks)) == NULL) {
                st = gcut__fail(GCUT_ERR_NOMEM, "%s: no memory for block ids", r->name);
                break;
            }
            blocks[v[0] - 1] = (int32_t)v[1];
            if (v[1] + 1 > num_blocks)
                num_blocks = (int32_t)v[1] + 1;
            continue;
        }
        if (unary) {
            if ((st = parse_field(r, &cursor, "node I", 1, n, &v[0])) ||
                (st = parse_field(r, &cursor, "E0", INT32_MIN, INT32_MAX, &v[1])) ||
                (st = parse_field(r, &cursor, "E1", INT32_MIN, INT32_MAX, &v[2])) ||
                (st = end_of_line(r, &cursor)))
                break;
            st = gcut_qpbo_add_unary(q, v[0] - 1, (int32_t)v[1], (int32_t)v[2]);
        } else {
            if ((st = parse_field(r, &cursor, "node I", 1, n, &v[0])) ||
                (st = parse_field(r, &cursor, "node J", 1, n, &v[1])) ||
                (st = parse_field(r, &cursor, "E00", INT32_MIN, INT32_MAX, &v[2])) ||
                (st = parse_field(r, &cursor, "E01", INT32_MIN, INT32_MAX, &v[3])) ||
                (st = parse_field(r, &cursor, "E10", INT32_MIN, INT32_MAX, &v[4])) ||
                (st = parse_field(r, &cursor, "E11", INT32_MIN, INT32_MAX, &v[5])) ||
                (st = end_of_line(r, &cursor)))
                break;
            if (v[0] == v[1]) {
                st = qpbo_parse_error(r, "term on node %" PRId64 " twice (I and J must differ)",
                                      v[0]);
                break;
            }
            if (gcut_qpbo_num_terms(q) == declared_terms) {
                st = qpbo_parse_error(r,
                                      "more term lines than the %" PRId64
                                      " of the problem line (line %" PRId64 ")",
                                      declared_terms, problem_line);
                break;
            }
            st = gcut_qpbo_add_pairwise(q, v[0] - 1, v[1] - 1, (int32_t)v[2], (int32_t)v[3],
                                        (int32_t)v[4], (int32_t)v[5], NULL);
        }
        if (st != GCUT_OK) {
            char detail[600];
            snprintf(detail, sizeof detail, "%s", gcut_last_error());
            st = gcut__fail(st, "%s:%" PRId64 ": %s", r->name, r->line, detail);
            break;
        }
    }
    free(buf);
    if (st == GCUT_OK && blocks != NULL)
        st = gcut_qpbo_set_blocks(q, blocks, num_blocks);
    free(blocks);
    if (st == GCUT_OK && q == NULL)
        st = gcut__fail(GCUT_ERR_PARSE, "%s: no problem line 'p qpbo N M'", r->name);
    if (st == GCUT_OK && gcut_qpbo_num_terms(q) != declared_terms)
        st = gcut__fail(GCUT_ERR_PARSE,
                        "%s:%" PRId64 ": the file ends after %" PRId64
                        " term lines, but the problem line (line %" PRId64 ") declares %" PRId64,
                        r->name, r->line, gcut_qpbo_num_terms(q), problem_line, declared_terms);
    if (st != GCUT_OK) {
        gcut_qpbo_free(q);
        return st;
    }
    *out = q;
    return GCUT_OK;
}

gcut_status gcut_qpbo_read(const char *path, gcut_qpbo **out) {
    if (path == NULL || out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_read: path or out is NULL");
    *out = NULL;
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *file = is_stdin ? stdin : fopen(path, "r");
    if (file == NULL)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    qpbo_reader r = {is_stdin ? "<stdin>" : path, 0};
    gcut_status st = read_lines(file, &r, out);
    if (!is_stdin)
        fclose(file);
    return st;
}

gcut_status gcut_qpbo_write(const gcut_qpbo *q, const char *path) {
    if (q == NULL || path == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_qpbo_write: energy or path is NULL");
    bool is_stdout = strcmp(path, "-") == 0;
    FILE *file = is_stdout ? stdout : fopen(path, "w");
    if (file == NULL)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    const int64_t n = gcut_qpbo_num_nodes(q), m = gcut_qpbo_num_terms(q);
    fprintf(file, "p qpbo %" PRId64 " %" PRId64 "\n", n, m);
    for (int64_t p = 0; p < n; p++) {
        int64_t e0, e1;
        gcut__qpbo_unary(q, p, &e0, &e1);
        /* Sums past int32 become several lines (repeated lines add up). */
        while (e0 != 0 || e1 != 0) {
            int64_t a = e0 > INT32_MAX ? INT32_MAX : e0 < INT32_MIN ? INT32_MIN : e0;
            int64_t b = e1 > INT32_MAX ? INT32_MAX : e1 < INT32_MIN ? INT32_MIN : e1;
            fprintf(file, "u %" PRId64 " %" PRId64 " %" PRId64 "\n", p + 1, a, b);
            e0 -= a;
            e1 -= b;
        }
    }
    const int32_t *blocks = gcut__qpbo_blocks(q);
    for (int64_t p = 0; p < n && blocks != NULL; p++)
        fprintf(file, "b %" PRId64 " %d\n", p + 1, blocks[p]);
    for (int64_t t = 0; t < m; t++) {
        int64_t i, j;
        int32_t e[4];
        gcut__qpbo_term(q, t, &i, &j, e);
        fprintf(file, "e %" PRId64 " %" PRId64 " %d %d %d %d\n", i + 1, j + 1, e[0], e[1], e[2],
                e[3]);
    }
    bool failed = ferror(file) != 0;
    if (!is_stdout)
        failed = fclose(file) != 0 || failed;
    else
        failed = fflush(file) != 0 || failed;
    if (failed)
        return gcut__fail(GCUT_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return GCUT_OK;
}
