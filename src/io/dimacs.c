/* dimacs.c - the DIMACS max-flow format of the first DIMACS Implementation Challenge
 * ("p max N M", "n ID s|t", "a U V CAP", "c ..."): a strict streaming reader with its own
 * tokenizer over large buffered reads, and the writer. docs/FORMATS.md gives every rule. */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Reads go through one buffer this large; a line that does not fit is an error, except a
 * comment, which is skipped however long it is. */
#define BUFFER_BYTES ((size_t)1 << 20)

typedef struct line_reader {
    FILE *file;
    const char *name; /* for messages */
    char *buf;
    size_t start, end; /* unread bytes are buf[start, end) */
    bool eof;
    int64_t line;       /* number of the line last returned, 1-based */
    int64_t file_bytes; /* size of a regular file, -1 for pipes */
} line_reader;

/* A token is a run of non-blank bytes; NUL and other control bytes are not blank, so binary
 * garbage ends up inside a token and is rejected there. */
static bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

typedef struct token {
    const char *text;
    size_t len;
} token;

typedef struct cursor {
    const char *p, *end;
} cursor;

static bool next_token(cursor *c, token *t) {
    while (c->p < c->end && is_blank(*c->p))
        c->p++;
    if (c->p == c->end)
        return false;
    t->text = c->p;
    while (c->p < c->end && !is_blank(*c->p))
        c->p++;
    t->len = (size_t)(c->p - t->text);
    return true;
}

static bool token_is(token t, const char *word) {
    return t.len == strlen(word) && memcmp(t.text, word, t.len) == 0;
}

/* Quote a token for a message: at most 24 bytes, non-printable bytes as \xNN. */
static const char *quote(token t, char *out, size_t room) {
    size_t k = 0;
    for (size_t i = 0; i < t.len && k + 8 < room; i++) {
        unsigned char ch = (unsigned char)t.text[i];
        if (i == 24) {
            k += (size_t)snprintf(out + k, room - k, "...");
            break;
        }
        if (ch >= 0x20 && ch < 0x7f)
            out[k++] = (char)ch;
        else
            k += (size_t)snprintf(out + k, room - k, "\\x%02x", ch);
    }
    out[k] = '\0';
    return out;
}

static gcut_status parse_error(const line_reader *r, const char *fmt, ...) GCUT__PRINTF(2, 3);

static gcut_status parse_error(const line_reader *r, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gcut__fail(GCUT_ERR_PARSE, "%s:%" PRId64 ": %s", r->name, r->line, what);
}

/* Put "FILE:LINE: " in front of the message a failed core call left. */
static gcut_status with_location(const line_reader *r, gcut_status status) {
    char detail[768];
    snprintf(detail, sizeof detail, "%s", gcut_last_error());
    return gcut__fail(status, "%s:%" PRId64 ": %s", r->name, r->line, detail);
}

/* Parse a decimal integer with optional sign. Values beyond +-10^18 are reported as too
 * large rather than wrapped. */
static gcut_status parse_int(const line_reader *r, token t, const char *what, int64_t *value) {
    char shown[128];
    size_t i = 0;
    bool negative = false;
    if (t.len > 0 && (t.text[0] == '-' || t.text[0] == '+')) {
        negative = t.text[0] == '-';
        i = 1;
    }
    if (i == t.len)
        return parse_error(r, "%s '%s' is not an integer", what, quote(t, shown, sizeof shown));
    int64_t v = 0;
    for (; i < t.len; i++) {
        char ch = t.text[i];
        if (ch < '0' || ch > '9')
            return parse_error(r, "%s '%s' is not an integer", what, quote(t, shown, sizeof shown));
        if (v > 100000000000000000) /* 10^17: one more digit could pass 10^18 */
            return parse_error(r, "%s '%s' is too large", what, quote(t, shown, sizeof shown));
        v = v * 10 + (ch - '0');
    }
    *value = negative ? -v : v;
    return GCUT_OK;
}

static gcut_status read_more(line_reader *r) {
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    size_t got = fread(r->buf + r->end, 1, BUFFER_BYTES - r->end, r->file);
    r->end += got;
    if (got == 0) {
        if (ferror(r->file))
            return gcut__fail(GCUT_ERR_IO, "%s:%" PRId64 ": read error: %s", r->name, r->line + 1,
                              strerror(errno));
        r->eof = true;
    }
    return GCUT_OK;
}

/* Drop the rest of a line too long for the buffer (a comment). */
static gcut_status skip_long_line(line_reader *r) {
    for (;;) {
        r->start = r->end = 0;
        gcut_status st = read_more(r);
        if (st != GCUT_OK || r->eof)
            return st;
        char *newline = memchr(r->buf, '\n', r->end);
        if (newline != NULL) {
            r->start = (size_t)(newline - r->buf) + 1;
            return GCUT_OK;
        }
    }
}

/* Next line without its newline into *c; c->p == NULL at the end of the input. */
static gcut_status next_line(line_reader *r, cursor *c) {
    for (;;) {
        char *begin = r->buf + r->start;
        size_t avail = r->end - r->start;
        char *newline = avail ? memchr(begin, '\n', avail) : NULL;
        if (newline != NULL) {
            c->p = begin;
            c->end = newline;
            r->start += (size_t)(newline - begin) + 1;
            r->line++;
            return GCUT_OK;
        }
        if (r->eof) {
            c->p = avail ? begin : NULL;
            c->end = begin + avail;
            r->start = r->end;
            if (avail)
                r->line++;
            return GCUT_OK;
        }
        if (avail == BUFFER_BYTES) {
            r->line++;
            cursor whole = {begin, begin + avail};
            token first;
            if (next_token(&whole, &first) && first.text[0] == 'c') {
                gcut_status st = skip_long_line(r);
                if (st != GCUT_OK)
                    return st;
                continue;
            }
            return parse_error(r, "line longer than %zu bytes", BUFFER_BYTES);
        }
        gcut_status st = read_more(r);
        if (st != GCUT_OK)
            return st;
    }
}

/* What the reader knows so far. */
typedef struct dimacs_problem {
    int64_t num_nodes, num_arcs; /* from the problem line; num_nodes 0 before it */
    int64_t problem_line;
    int64_t source, sink; /* DIMACS ids, 0 until declared */
    int64_t source_line, sink_line;
    int64_t arcs_seen;
    bool open_edge; /* the previous arc line made the last edge, whose reverse is still 0 */
    gcut_graph *graph;
} dimacs_problem;

/* Bytes the graph of a header can need: terminal sums and node ids per node, endpoints and
 * capacities per arc (every arc may become an edge). Computed in floating point so that
 * absurd headers cannot overflow the estimate. */
static uint64_t header_bytes(int64_t num_nodes, int64_t num_arcs) {
    double nodes = (double)(num_nodes - 2);
    double id_bytes = num_nodes - 2 <= (int64_t)UINT32_MAX ? 4.0 : 8.0;
    double bytes = nodes * (2 * sizeof(int64_t) + sizeof(int64_t)) +
                   (double)num_arcs * (2 * id_bytes + 2 * sizeof(int32_t));
    return bytes >= 1.8e19 ? UINT64_MAX : (uint64_t)bytes;
}

static gcut_status expect_end(const line_reader *r, cursor *c, const char *what) {
    token extra;
    char shown[128];
    if (next_token(c, &extra))
        return parse_error(r, "unexpected '%s' after the %s", quote(extra, shown, sizeof shown),
                           what);
    return GCUT_OK;
}

static gcut_status problem_line(const line_reader *r, cursor *c, dimacs_problem *p) {
    if (p->num_nodes > 0)
        return parse_error(r, "second problem line (the first is line %" PRId64 ")",
                           p->problem_line);
    token kind, nodes, arcs;
    char shown[128];
    if (!next_token(c, &kind))
        return parse_error(r, "truncated problem line: expected 'p max NODES ARCS'");
    if (!token_is(kind, "max"))
        return parse_error(r, "problem type '%s' is not 'max' (gcut reads max-flow problems)",
                           quote(kind, shown, sizeof shown));
    if (!next_token(c, &nodes) || !next_token(c, &arcs))
        return parse_error(r, "truncated problem line: expected 'p max NODES ARCS'");
    int64_t n, m;
    gcut_status st = parse_int(r, nodes, "node count", &n);
    if (st == GCUT_OK)
        st = parse_int(r, arcs, "arc count", &m);
    if (st == GCUT_OK)
        st = expect_end(r, c, "problem line");
    if (st != GCUT_OK)
        return st;
    if (n < 2)
        return parse_error(r, "node count %" PRId64 " is below 2 (source and sink)", n);
    if (m < 0)
        return parse_error(r, "arc count %" PRId64 " is negative", m);
    /* An arc line takes at least 8 bytes ("a 1 2 0\n"): a small file claiming many arcs is
     * caught here rather than after sizing the graph for them. */
    if (r->file_bytes >= 0 && m > r->file_bytes / 8)
        return parse_error(r,
                           "the problem line declares %" PRId64
                           " arcs, more than a file of %" PRId64 " bytes can hold",
                           m, r->file_bytes);
    /* Fail before allocating anything when the header alone passes the memory cap. */
    uint64_t need = header_bytes(n, m);
    char what[96];
    snprintf(what, sizeof what, "a DIMACS problem of %" PRId64 " nodes and %" PRId64 " arcs", n, m);
    if (gcut__reserve(need, what) != 0)
        return with_location(r, GCUT_ERR_NOMEM);
    gcut__unreserve(need);
    /* The graph is made at the first arc line (or at the end of a file without arcs), once
     * the source and sink are known: a small malformed file never sizes nodes (issue #10). */
    p->num_nodes = n;
    p->num_arcs = m;
    p->problem_line = r->line;
    return GCUT_OK;
}

static gcut_status node_id(const line_reader *r, token t, const dimacs_problem *p, const char *what,
                           int64_t *id) {
    gcut_status st = parse_int(r, t, what, id);
    if (st != GCUT_OK)
        return st;
    if (*id < 1 || *id > p->num_nodes)
        return parse_error(r, "%s %" PRId64 " out of range 1..%" PRId64, what, *id, p->num_nodes);
    return GCUT_OK;
}

static gcut_status node_line(const line_reader *r, cursor *c, dimacs_problem *p) {
    if (p->num_nodes == 0)
        return parse_error(r, "node line before the problem line 'p max NODES ARCS'");
    token id_token, kind;
    char shown[128];
    if (!next_token(c, &id_token) || !next_token(c, &kind))
        return parse_error(r, "truncated node line: expected 'n ID s' or 'n ID t'");
    int64_t id;
    gcut_status st = node_id(r, id_token, p, "node id", &id);
    if (st != GCUT_OK)
        return st;
    bool is_source = token_is(kind, "s");
    if (!is_source && !token_is(kind, "t"))
        return parse_error(r, "node kind '%s' is not 's' or 't'", quote(kind, shown, sizeof shown));
    if ((st = expect_end(r, c, "node line")) != GCUT_OK)
        return st;
    int64_t *slot = is_source ? &p->source : &p->sink;
    int64_t *slot_line = is_source ? &p->source_line : &p->sink_line;
    if (*slot != 0)
        return parse_error(r, "second %s line (the first is line %" PRId64 ")",
                           is_source ? "source" : "sink", *slot_line);
    if (id == (is_source ? p->sink : p->source))
        return parse_error(r, "node %" PRId64 " is both the source and the sink", id);
    *slot = id;
    *slot_line = r->line;
    return GCUT_OK;
}

/* Graph node of an ordinary DIMACS id: the ids with the source and sink taken out. */
static int64_t graph_node(const dimacs_problem *p, int64_t id) {
    return id - 1 - (id > p->source) - (id > p->sink);
}

static gcut_status arc_line(const line_reader *r, cursor *c, dimacs_problem *p) {
    if (p->num_nodes == 0)
        return parse_error(r, "arc line before the problem line 'p max NODES ARCS'");
    if (p->source == 0 || p->sink == 0)
        return parse_error(r,
                           "arc line before the %s is declared (node lines 'n ID s' and "
                           "'n ID t' come before the arcs)",
                           p->source == 0 ? "source" : "sink");
    token tu, tv, tcap;
    if (!next_token(c, &tu) || !next_token(c, &tv) || !next_token(c, &tcap))
        return parse_error(r, "truncated arc line: expected 'a FROM TO CAPACITY'");
    int64_t u, v, cap;
    gcut_status st = node_id(r, tu, p, "arc tail", &u);
    if (st == GCUT_OK)
        st = node_id(r, tv, p, "arc head", &v);
    if (st == GCUT_OK)
        st = parse_int(r, tcap, "capacity", &cap);
    if (st == GCUT_OK)
        st = expect_end(r, c, "arc line");
    if (st != GCUT_OK)
        return st;
    if (cap < 0)
        return parse_error(r, "negative capacity %" PRId64, cap);
    if (cap > INT32_MAX)
        return parse_error(r,
                           "capacity %" PRId64 " above %d, the largest gcut takes (split it "
                           "into parallel arcs)",
                           cap, INT32_MAX);
    if (++p->arcs_seen > p->num_arcs)
        return parse_error(
            r, "more arc lines than the %" PRId64 " of the problem line (line %" PRId64 ")",
            p->num_arcs, p->problem_line);
    if (p->graph == NULL &&
        (st = gcut_graph_create(p->num_nodes - 2, p->num_arcs, &p->graph)) != GCUT_OK)
        return with_location(r, st);
    gcut_graph *g = p->graph;
    bool from_source = u == p->source, to_sink = v == p->sink;
    bool open_edge = p->open_edge;
    p->open_edge = false;
    /* Arcs into the source or out of the sink carry no s-t flow: dropped. */
    if (v == p->source || u == p->sink)
        return GCUT_OK;
    if (from_source && to_sink) {
        if (g->flow_offset > INT64_MAX - cap)
            return parse_error(r, "source-to-sink capacity overflows 64 bits");
        gcut__graph_add_flow_offset(g, cap);
        return GCUT_OK;
    }
    if (from_source)
        st = gcut_graph_add_tweights(g, graph_node(p, v), (int32_t)cap, 0);
    else if (to_sink)
        st = gcut_graph_add_tweights(g, graph_node(p, u), 0, (int32_t)cap);
    else {
        int64_t gu = graph_node(p, u), gv = graph_node(p, v), last = g->num_edges - 1;
        /* Files list an arc and its reverse one after the other (vision graphs, our writer):
         * the reverse joins the edge just made, which halves the edges of such graphs. */
        if (open_edge && gcut__edge_u(g, last) == gv && gcut__edge_v(g, last) == gu) {
            g->edge_rev[last] = (int32_t)cap;
            return GCUT_OK;
        }
        st = gcut_graph_add_edge(g, gu, gv, (int32_t)cap, 0);
        p->open_edge = st == GCUT_OK && gu != gv;
    }
    return st == GCUT_OK ? GCUT_OK : with_location(r, st);
}

/* The graph was sized for every arc to be an edge; give back what terminal arcs left unused. */
static void shrink_edges(gcut_graph *g) {
    if (g->edge_room == g->num_edges || g->num_edges == 0)
        return;
    size_t n = (size_t)g->num_edges;
    size_t id_size = g->ids32 ? sizeof(uint32_t) : sizeof(int64_t);
    void **ends[2] = {g->ids32 ? (void **)&g->edge_u32 : (void **)&g->edge_u64,
                      g->ids32 ? (void **)&g->edge_v32 : (void **)&g->edge_v64};
    for (int k = 0; k < 2; k++) {
        void *smaller = gcut__realloc(*ends[k], n * id_size, "graph edges");
        if (smaller == NULL)
            goto keep;
        *ends[k] = smaller;
    }
    int32_t **caps[2] = {&g->edge_cap, &g->edge_rev};
    for (int k = 0; k < 2; k++) {
        int32_t *smaller = gcut__realloc(*caps[k], n * sizeof(int32_t), "graph edges");
        if (smaller == NULL)
            goto keep;
        *caps[k] = smaller;
    }
    g->edge_room = g->num_edges;
    return;
keep:
    /* A shrink that fails leaves a larger, still valid block behind: not an error. Arrays
     * already shrunk hold at least num_edges entries, so the smallest room is num_edges. */
    g->edge_room = g->num_edges;
    gcut__clear_error();
}

static gcut_status read_lines(line_reader *r, dimacs_problem *p) {
    for (;;) {
        cursor c = {NULL, NULL};
        gcut_status st = next_line(r, &c);
        if (st != GCUT_OK)
            return st;
        if (c.p == NULL)
            return GCUT_OK;
        token kind;
        char shown[128];
        if (!next_token(&c, &kind))
            continue; /* blank line */
        if (kind.len == 1 && kind.text[0] == 'a')
            st = arc_line(r, &c, p);
        else if (kind.text[0] == 'c')
            st = GCUT_OK; /* comments: "c text", and also "c----" as some generators write */
        else if (kind.len == 1 && kind.text[0] == 'n')
            st = node_line(r, &c, p);
        else if (kind.len == 1 && kind.text[0] == 'p')
            st = problem_line(r, &c, p);
        else
            st = parse_error(r, "unknown line type '%s' (expected c, p, n or a)",
                             quote(kind, shown, sizeof shown));
        if (st != GCUT_OK)
            return st;
    }
}

static gcut_status check_complete(const line_reader *r, const dimacs_problem *p) {
    int64_t line = r->line == 0 ? 1 : r->line;
    if (r->line == 0)
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s:1: empty file (expected a problem line 'p max NODES ARCS')", r->name);
    if (p->num_nodes == 0)
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s:%" PRId64 ": end of file without a problem line 'p max NODES ARCS'",
                          r->name, line);
    if (p->source == 0 || p->sink == 0)
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s:%" PRId64 ": end of file without a %s line ('n ID %s')", r->name,
                          line, p->source == 0 ? "source" : "sink", p->source == 0 ? "s" : "t");
    if (p->arcs_seen < p->num_arcs)
        return gcut__fail(GCUT_ERR_PARSE,
                          "%s:%" PRId64 ": end of file after %" PRId64
                          " arc lines, but the problem line (line %" PRId64 ") declares %" PRId64,
                          r->name, line, p->arcs_seen, p->problem_line, p->num_arcs);
    return GCUT_OK;
}

static gcut_status make_node_ids(const dimacs_problem *p, int64_t **node_ids) {
    size_t count = (size_t)p->num_nodes;
    int64_t *ids = gcut__malloc(gcut__mul_size(count, sizeof(int64_t)), "DIMACS node ids");
    if (ids == NULL)
        return GCUT_ERR_NOMEM;
    size_t j = 0;
    for (int64_t id = 1; id <= p->num_nodes; id++)
        if (id != p->source && id != p->sink)
            ids[j++] = id;
    ids[count - 2] = p->source;
    ids[count - 1] = p->sink;
    *node_ids = ids;
    return GCUT_OK;
}

gcut_status gcut_dimacs_read(const char *path, gcut_graph **out, int64_t **node_ids) {
    if (out != NULL)
        *out = NULL;
    if (node_ids != NULL)
        *node_ids = NULL;
    if (path == NULL || out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_dimacs_read: path or out is NULL");
    bool from_stdin = strcmp(path, "-") == 0;
    line_reader r = {.name = from_stdin ? "<stdin>" : path};
    r.file = from_stdin ? stdin : fopen(path, "rb");
    if (r.file == NULL)
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    r.file_bytes = -1;
    if (!from_stdin && fseek(r.file, 0, SEEK_END) == 0) {
        long size = ftell(r.file);
        if (size >= 0 && fseek(r.file, 0, SEEK_SET) == 0)
            r.file_bytes = size;
        else
            rewind(r.file);
    }
    dimacs_problem p = {0};
    gcut_status st = GCUT_OK;
    r.buf = gcut__malloc(BUFFER_BYTES, "DIMACS read buffer");
    if (r.buf == NULL)
        st = GCUT_ERR_NOMEM;
    if (st == GCUT_OK)
        st = read_lines(&r, &p);
    if (st == GCUT_OK)
        st = check_complete(&r, &p);
    if (st == GCUT_OK && p.graph == NULL)
        st = gcut_graph_create(p.num_nodes - 2, 0, &p.graph);
    if (st == GCUT_OK && node_ids != NULL)
        st = make_node_ids(&p, node_ids);
    gcut__free(r.buf);
    if (!from_stdin)
        fclose(r.file);
    if (st != GCUT_OK) {
        gcut_graph_free(p.graph);
        return st;
    }
    shrink_edges(p.graph);
    *out = p.graph;
    return GCUT_OK;
}

/* ---- writer ---- */

typedef struct writer {
    FILE *file;
    const char *name;
    char *buf;
    size_t used;
    gcut_status status; /* first failure; later writes are skipped */
} writer;

static void flush(writer *w) {
    if (w->status == GCUT_OK && w->used > 0 && fwrite(w->buf, 1, w->used, w->file) != w->used)
        w->status = gcut__fail(GCUT_ERR_IO, "%s: write failed: %s", w->name, strerror(errno));
    w->used = 0;
}

/* Room for one arc line of three 64-bit numbers. */
#define MAX_LINE_BYTES 80

static void put_text(writer *w, const char *text) {
    size_t len = strlen(text);
    if (w->used + len > BUFFER_BYTES)
        flush(w);
    memcpy(w->buf + w->used, text, len);
    w->used += len;
}

static void put_number(writer *w, int64_t value) {
    char digits[24];
    int k = 0;
    uint64_t v = (uint64_t)value; /* callers pass values >= 0 */
    do {
        digits[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (k > 0)
        w->buf[w->used++] = digits[--k];
}

static void put_arc(writer *w, int64_t u, int64_t v, int64_t cap) {
    if (w->used + MAX_LINE_BYTES > BUFFER_BYTES)
        flush(w);
    w->buf[w->used++] = 'a';
    w->buf[w->used++] = ' ';
    put_number(w, u);
    w->buf[w->used++] = ' ';
    put_number(w, v);
    w->buf[w->used++] = ' ';
    put_number(w, cap);
    w->buf[w->used++] = '\n';
}

/* Capacities above INT32_MAX (terminal sums, the source-sink offset) become parallel arcs. */
static int64_t split_count(int64_t cap) {
    return cap <= 0 ? 0 : (cap + INT32_MAX - 1) / INT32_MAX;
}

static void put_split_arc(writer *w, int64_t u, int64_t v, int64_t cap) {
    for (; cap > INT32_MAX; cap -= INT32_MAX)
        put_arc(w, u, v, INT32_MAX);
    if (cap > 0)
        put_arc(w, u, v, cap);
}

gcut_status gcut_dimacs_write(const gcut_graph *graph, const char *path) {
    if (graph == NULL || path == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_dimacs_write: graph or path is NULL");
    int64_t n = graph->num_nodes, source = n + 1, sink = n + 2;
    int64_t arcs = split_count(graph->flow_offset);
    for (int64_t i = 0; i < n; i++)
        arcs += split_count(graph->tw_source[i]) + split_count(graph->tw_sink[i]);
    for (int64_t e = 0; e < graph->num_edges; e++)
        arcs += (graph->edge_cap[e] > 0) + (graph->edge_rev[e] > 0);

    bool to_stdout = strcmp(path, "-") == 0;
    writer w = {.name = to_stdout ? "<stdout>" : path};
    w.buf = gcut__malloc(BUFFER_BYTES, "DIMACS write buffer");
    if (w.buf == NULL)
        return GCUT_ERR_NOMEM;
    w.file = to_stdout ? stdout : fopen(path, "wb");
    if (w.file == NULL) {
        gcut__free(w.buf);
        return gcut__fail(GCUT_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    }
    char header[512];
    snprintf(header, sizeof header,
             "c written by gcut %s: graph nodes 1..%" PRId64 ", source %" PRId64 ", sink %" PRId64
             "\np max %" PRId64 " %" PRId64 "\nn %" PRId64 " s\nn %" PRId64 " t\n",
             gcut_version_string(), n, source, sink, n + 2, arcs, source, sink);
    put_text(&w, header);
    put_split_arc(&w, source, sink, graph->flow_offset);
    for (int64_t i = 0; i < n; i++) {
        put_split_arc(&w, source, i + 1, graph->tw_source[i]);
        put_split_arc(&w, i + 1, sink, graph->tw_sink[i]);
    }
    for (int64_t e = 0; e < graph->num_edges; e++) {
        int64_t u = gcut__edge_u(graph, e) + 1, v = gcut__edge_v(graph, e) + 1;
        if (graph->edge_cap[e] > 0)
            put_arc(&w, u, v, graph->edge_cap[e]);
        if (graph->edge_rev[e] > 0)
            put_arc(&w, v, u, graph->edge_rev[e]);
    }
    flush(&w);
    gcut__free(w.buf);
    int closed = to_stdout ? fflush(w.file) : fclose(w.file);
    if (closed != 0 && w.status == GCUT_OK)
        w.status = gcut__fail(GCUT_ERR_IO, "%s: write failed: %s", w.name, strerror(errno));
    return w.status;
}
