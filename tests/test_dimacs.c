/* test_dimacs.c - the DIMACS max-flow and gcut grid file formats (docs/FORMATS.md): every
 * malformed case gives its status and a message naming FILE:LINE (or FILE: byte N), flow
 * values match hand-derived ones and an oracle run on the raw arc list, round trips keep them. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "util_common.h"
#include "util_oracle.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed = 0;

#define PASS_IF(cond)                                                                              \
    do {                                                                                           \
        int before_ = test_failures;                                                               \
        CHECK(cond);                                                                               \
        if (test_failures == before_)                                                              \
            passed++;                                                                              \
    } while (0)

static char temp_dir[256];
static int temp_count = 0;

/* A fresh path in the test's own temporary folder. */
static const char *temp_path(const char *suffix) {
    static char path[512];
    snprintf(path, sizeof path, "%s/f%d%s", temp_dir, temp_count++, suffix);
    return path;
}

static void write_bytes(const char *path, const void *bytes, size_t len) {
    FILE *file = fopen(path, "wb");
    if (file == NULL || fwrite(bytes, 1, len, file) != len) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(file);
}

static void *read_bytes(const char *path, size_t *len) {
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *bytes = malloc((size_t)size + 1);
    *len = fread(bytes, 1, (size_t)size, file);
    fclose(file);
    return bytes;
}

/* ---- an oracle on the raw DIMACS arc list: Edmonds-Karp on a dense matrix ---- */

#define RAW_MAX_NODES 24

typedef struct raw_problem {
    int n; /* DIMACS nodes 1..n */
    int source, sink;
    int64_t cap[RAW_MAX_NODES + 1][RAW_MAX_NODES + 1];
} raw_problem;

static int64_t raw_max_flow(const raw_problem *p) {
    static int64_t residual[RAW_MAX_NODES + 1][RAW_MAX_NODES + 1];
    memcpy(residual, p->cap, sizeof residual);
    for (int i = 1; i <= p->n; i++)
        residual[i][i] = 0;
    int64_t flow = 0;
    for (;;) {
        int parent[RAW_MAX_NODES + 1], queue[RAW_MAX_NODES + 1], head = 0, tail = 0;
        for (int i = 0; i <= p->n; i++)
            parent[i] = 0;
        parent[p->source] = p->source;
        queue[tail++] = p->source;
        while (head < tail && parent[p->sink] == 0) {
            int u = queue[head++];
            for (int v = 1; v <= p->n; v++)
                if (parent[v] == 0 && residual[u][v] > 0) {
                    parent[v] = u;
                    queue[tail++] = v;
                }
        }
        if (parent[p->sink] == 0)
            return flow;
        int64_t push = INT64_MAX;
        for (int v = p->sink; v != p->source; v = parent[v])
            if (residual[parent[v]][v] < push)
                push = residual[parent[v]][v];
        for (int v = p->sink; v != p->source; v = parent[v]) {
            residual[parent[v]][v] -= push;
            residual[v][parent[v]] += push;
        }
        flow += push;
    }
}

/* Flow of a read graph by the test oracle (its getters do not see source->sink arcs). */
static int64_t graph_oracle(const gcut_graph *g) {
    return oracle_dinic(g) + g->flow_offset;
}

/* Read text as a DIMACS file; check the flow against expected (oracle and bk). */
static void check_flow(const char *text, int64_t expected, const char *what) {
    const char *path = temp_path(".max");
    write_bytes(path, text, strlen(text));
    gcut_graph *g = NULL;
    gcut_status st = gcut_dimacs_read(path, &g, NULL);
    if (st != GCUT_OK) {
        fprintf(stderr, "%s: read failed: %s\n", what, gcut_last_error());
        test_failures++;
        return;
    }
    int64_t got = graph_oracle(g);
    if (got != expected)
        fprintf(stderr, "%s: oracle flow %" PRId64 ", expected %" PRId64 "\n", what, got, expected);
    PASS_IF(got == expected);
    PASS_IF(oracle_check_graph(g, "bk", 0, expected, what));
    gcut_graph_free(g);
}

/* Read text; it must fail with status and a message naming PATH:LINE: and containing needle. */
static void check_error_bytes(const void *bytes, size_t len, gcut_status status, int64_t line,
                              const char *needle, const char *what) {
    const char *path = temp_path(".max");
    write_bytes(path, bytes, len);
    gcut_graph *g = (gcut_graph *)&g; /* must come back NULL */
    int64_t *ids = (int64_t *)&ids;
    gcut_status st = gcut_dimacs_read(path, &g, &ids);
    char location[600];
    snprintf(location, sizeof location, "%s:%" PRId64 ": ", path, line);
    const char *message = gcut_last_error();
    int ok = st == status && g == NULL && ids == NULL && strstr(message, location) == message &&
             (needle == NULL || strstr(message, needle) != NULL);
    if (!ok)
        fprintf(stderr, "%s: got %s '%s', want %s at line %" PRId64 " with '%s'\n", what,
                gcut_status_name(st), message, gcut_status_name(status), line,
                needle ? needle : "");
    PASS_IF(ok);
    if (st == GCUT_OK)
        gcut_graph_free(g);
}

static void check_error(const char *text, int64_t line, const char *needle, const char *what) {
    check_error_bytes(text, strlen(text), GCUT_ERR_PARSE, line, needle, what);
}

#define HEAD "p max 4 1\nn 1 s\nn 4 t\n"

static void test_malformed(void) {
    check_error("", 1, "empty file", "empty file");
    check_error("\n\n  \n", 3, "without a problem line", "blank lines only");
    check_error("c just a comment\n", 1, "without a problem line", "no problem line");
    check_error(HEAD "a 1 2 -3\n", 4, "negative capacity -3", "negative capacity");
    check_error(HEAD "a 1 2 2147483648\n", 4, "above 2147483647", "capacity above INT32_MAX");
    check_error(HEAD "a 1 2 99999999999999999999\n", 4, "too large", "20-digit capacity");
    check_error(HEAD "a 1 2 3.5\n", 4, "'3.5' is not an integer", "fractional capacity");
    check_error(HEAD "a 1 2 0x10\n", 4, "not an integer", "hex capacity");
    check_error(HEAD "a 1 2 -\n", 4, "not an integer", "lone minus");
    check_error(HEAD "a 1 2 3 4\n", 4, "unexpected '4'", "trailing garbage on an arc");
    check_error(HEAD "a 1 2\n", 4, "truncated arc line", "truncated arc line");
    check_error(HEAD "a\n", 4, "truncated arc line", "bare a");
    check_error(HEAD "a 0 2 3\n", 4, "arc tail 0 out of range 1..4", "tail 0");
    check_error(HEAD "a 1 5 3\n", 4, "arc head 5 out of range", "head past N");
    check_error(HEAD "a -1 2 3\n", 4, "out of range", "negative id");
    check_error(HEAD "a x 2 3\n", 4, "arc tail 'x' is not an integer", "garbage id");
    check_error("p max 4 0\nn 5 s\n", 2, "node id 5 out of range", "source id past N");
    check_error("p max 4 0\nn 0 t\n", 2, "out of range", "sink id 0");
    check_error("p max 4 0\nn 1 x\n", 2, "'x' is not 's' or 't'", "bad node kind");
    check_error("p max 4 0\nn 1\n", 2, "truncated node line", "truncated node line");
    check_error("p max 4 0\nn 1 s extra\n", 2, "unexpected 'extra'", "node trailing garbage");
    check_error("p max 4 0\nn 1 s\nn 2 s\n", 3, "second source line (the first is line 2)",
                "two sources");
    check_error("p max 4 0\nn 1 t\nn 2 t\n", 3, "second sink line", "two sinks");
    check_error("p max 4 0\nn 2 s\nn 2 t\n", 3, "both the source and the sink", "s == t");
    check_error("p max 4 0\nn 1 s\n", 2, "without a sink line", "no sink");
    check_error("p max 4 0\nn 4 t\n", 2, "without a source line", "no source");
    check_error("n 1 s\np max 4 0\n", 1, "before the problem line", "n before p");
    check_error("a 1 2 3\np max 4 1\n", 1, "before the problem line", "a before p");
    check_error("p max 4 1\nn 1 s\na 1 2 3\nn 4 t\n", 3, "before the sink is declared",
                "a before n t");
    check_error("p max 4 0\np max 4 0\n", 2, "second problem line (the first is line 1)",
                "two problem lines");
    check_error("p min 4 0\n", 1, "problem type 'min' is not 'max'", "min-cost problem");
    check_error("p max 4\n", 1, "truncated problem line", "p without M");
    check_error("p\n", 1, "truncated problem line", "bare p");
    check_error("p max 4 0 7\n", 1, "unexpected '7'", "p trailing garbage");
    check_error("p max 1 0\n", 1, "below 2", "one node");
    check_error("p max 4 -1\n", 1, "negative", "negative M");
    check_error("p max 99999999999999999999 1\n", 1, "too large", "N beyond 10^18");
    check_error(HEAD "a 1 2 3\na 2 4 3\n", 5, "more arc lines than the 1", "too many arcs");
    check_error("p max 4 3\nn 1 s\nn 4 t\na 1 2 3\na 2 4 1\nc end\n", 6,
                "after 2 arc lines, but the problem line (line 1) declares 3", "too few arcs");
    check_error("p max 4 1000\nn 1 s\nn 4 t\n", 1, "more than a file of", "M beyond file size");
    check_error(HEAD "x 1 2 3\n", 4, "unknown line type 'x'", "unknown line type");
    check_error("pmax 4 0\n", 1, "unknown line type 'pmax'", "glued p");
    check_error(HEAD "a 1 2 3\n\x01\x02\x03\n", 5, "unknown line type '\\x01\\x02\\x03'",
                "control bytes");
    const char nul_cap[] = HEAD "a 1 2 3\0\n";
    check_error_bytes(nul_cap, sizeof nul_cap - 1, GCUT_ERR_PARSE, 4, "'3\\x00'", "NUL in token");
    const char elf[] = "\x7f"
                       "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0";
    check_error_bytes(elf, sizeof elf - 1, GCUT_ERR_PARSE, 1, "unknown line type", "ELF binary");

    /* Random binary garbage: always a parse error, never a crash. */
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xb1a5);
    for (int round = 0; round < 20; round++) {
        unsigned char blob[512];
        size_t len = (size_t)test_rng_range(&rng, 1, sizeof blob);
        for (size_t i = 0; i < len; i++)
            blob[i] = (unsigned char)test_rng_next(&rng);
        blob[0] = (unsigned char)(0x80 | blob[0]); /* not a comment line */
        check_error_bytes(blob, len, GCUT_ERR_PARSE, 1, NULL, "random binary");
    }

    /* A 2 MiB arc line is refused; a 3 MiB comment line is skipped. */
    size_t big = 3u << 20;
    char *text = malloc(big + 512); /* room for the 256 bytes each snprintf below may use */
    PASS_IF(text != NULL);
    if (text == NULL)
        return;
    size_t len = (size_t)snprintf(text, 256, HEAD "a 1 2");
    memset(text + len, ' ', 2u << 20);
    len += 2u << 20;
    len += (size_t)snprintf(text + len, 64, " 3\n");
    check_error_bytes(text, len, GCUT_ERR_PARSE, 4, "line longer than", "2 MiB arc line");
    len = (size_t)snprintf(text, 256, "c");
    memset(text + len, 'x', big);
    len += big;
    len += (size_t)snprintf(text + len, 256, "\np max 3 1\nn 1 s\nn 3 t\na 1 2 5\n");
    const char *path = temp_path(".max");
    write_bytes(path, text, len);
    gcut_graph *g = NULL;
    PASS_IF(gcut_dimacs_read(path, &g, NULL) == GCUT_OK && g != NULL &&
            gcut_graph_num_nodes(g) == 1);
    gcut_graph_free(g);
    /* ...and the line numbers after it are still right. */
    len = (size_t)snprintf(text, 256, "c");
    memset(text + len, 'x', big);
    len += big;
    len += (size_t)snprintf(text + len, 256, "\np max 3 1\nn 1 s\nn 3 t\na 1 2 -5\n");
    check_error_bytes(text, len, GCUT_ERR_PARSE, 5, "negative capacity", "error after long c");
    free(text);

    /* Headers beyond the memory cap fail at once with GCUT_ERR_NOMEM, naming the line. */
    gcut_set_memory_limit((uint64_t)64 << 20);
    check_error_bytes("c big\np max 100000000 0\n", 24, GCUT_ERR_NOMEM, 2, "out of memory",
                      "10^8 nodes over a 64 MiB cap");
    check_error_bytes("p max 100000000000000000 0\n", 27, GCUT_ERR_NOMEM, 1, "out of memory",
                      "10^17 nodes");
    gcut_set_memory_limit(0);

    gcut_graph *none = NULL;
    PASS_IF(gcut_dimacs_read("/nonexistent/dir/x.max", &none, NULL) == GCUT_ERR_IO &&
            none == NULL && strstr(gcut_last_error(), "/nonexistent/dir/x.max") != NULL);
    PASS_IF(gcut_dimacs_read(NULL, &none, NULL) == GCUT_ERR_INVALID_ARG);
}

static void test_hand_made(void) {
    /* The flow network of Cormen et al., Introduction to Algorithms, fig. 26.1: value 23. */
    check_flow("c CLRS 26.1\np max 6 9\nn 1 s\nn 6 t\na 1 2 16\na 1 3 13\na 2 4 12\na 3 2 4\n"
               "a 3 5 14\na 4 3 9\na 4 6 20\na 5 4 7\na 5 6 4\n",
               23, "CLRS 26.1");
    /* Source and sink in the middle of the id range, listed in the other order, with CRLF line
     * ends, tabs, blank lines and no final newline. Direct s->t arcs add 7 + 5; the arcs into
     * the source (2->3) and out of the sink (1->4) carry nothing. Paths: 3->4->1 bounded by
     * 4->1 = 6. Total 18. */
    check_flow("c mixed\r\n\r\np max 4 6\r\nn 1 t\r\nn\t3  s\r\na 3 1 7\r\na 3 1 5\r\n"
               "a 2 3 100\r\na 1 4 100\r\na 3 4 9\r\na 4 1 6",
               18, "terminals in the middle, CRLF, s->t arcs");
    /* Capacities summing past 2^31: three parallel INT32_MAX arcs each way. */
    check_flow("p max 3 6\nn 1 s\nn 3 t\na 1 2 2147483647\na 1 2 2147483647\na 1 2 2147483647\n"
               "a 2 3 2147483647\na 2 3 2147483647\na 2 3 2147483647\n",
               3 * (int64_t)INT32_MAX, "sums above 2^31");
    check_flow("p max 2 3\nn 2 s\nn 1 t\na 2 1 2147483647\na 2 1 2147483647\na 1 2 5\n",
               2 * (int64_t)INT32_MAX, "s->t only, above 2^31");
    check_flow("p max 5 0\nn 1 s\nn 5 t\n", 0, "no arcs");
    check_flow("c-----\n  c indented\ncomment\np max 3 1\nn 1 s\nc\nn 3 t\na 1 3 4\n", 4,
               "comment forms");
    check_flow("p max 4 2\nn 1 s\nn 4 t\na 2 2 9\na 1 2 0\n", 0, "self-loop and zero arc");

    /* node_ids: ordinary ids in order, then the source and the sink. */
    const char *text = "p max 5 1\nn 4 s\nn 2 t\na 4 1 3\n";
    const char *path = temp_path(".max");
    write_bytes(path, text, strlen(text));
    gcut_graph *g = NULL;
    int64_t *ids = NULL;
    PASS_IF(gcut_dimacs_read(path, &g, &ids) == GCUT_OK);
    if (g != NULL && ids != NULL) {
        PASS_IF(gcut_graph_num_nodes(g) == 3);
        PASS_IF(ids[0] == 1 && ids[1] == 3 && ids[2] == 5 && ids[3] == 4 && ids[4] == 2);
        int64_t cs = 0, ct = 0;
        PASS_IF(gcut_graph_get_tweights(g, 0, &cs, &ct) == GCUT_OK && cs == 3 && ct == 0);
    }
    gcut_free(ids);
    gcut_graph_free(g);
}

/* Random DIMACS text (arcs of every kind, noise lines) against the raw-arc oracle. */
static void test_random_files(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xd1ac5);
    char *text = malloc(1 << 16);
    for (int round = 0; round < 200; round++) {
        raw_problem p;
        memset(&p, 0, sizeof p);
        p.n = (int)test_rng_range(&rng, 2, RAW_MAX_NODES);
        p.source = (int)test_rng_range(&rng, 1, p.n);
        do
            p.sink = (int)test_rng_range(&rng, 1, p.n);
        while (p.sink == p.source);
        int m = (int)test_rng_range(&rng, 0, 4 * p.n);
        int huge = round % 5 == 0;
        size_t len = (size_t)sprintf(text, "c random %d\np max %d %d\n", round, p.n, m);
        if (test_rng_range(&rng, 0, 1))
            len += (size_t)sprintf(text + len, "n %d s\nn %d t\n", p.source, p.sink);
        else
            len += (size_t)sprintf(text + len, "n %d t\nc x\nn %d s\n", p.sink, p.source);
        for (int a = 0; a < m; a++) {
            int u = (int)test_rng_range(&rng, 1, p.n), v = (int)test_rng_range(&rng, 1, p.n);
            if (test_rng_range(&rng, 0, 5) == 0)
                u = p.source;
            if (test_rng_range(&rng, 0, 5) == 0)
                v = p.sink;
            int64_t cap = huge ? test_rng_range(&rng, INT32_MAX - 1000, INT32_MAX)
                               : test_rng_range(&rng, 0, 50);
            p.cap[u][v] += cap;
            len += (size_t)sprintf(text + len, "%sa %d %d %" PRId64 "\n",
                                   test_rng_range(&rng, 0, 9) == 0 ? "\n  " : "", u, v, cap);
        }
        int64_t expected = raw_max_flow(&p);
        char what[64];
        snprintf(what, sizeof what, "random file %d", round);
        text[len] = '\0';
        check_flow(text, expected, what);
    }
    free(text);
}

/* write -> read keeps the flow and the terminal sums; a second round writes the same bytes. */
static void test_round_trip(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x7217);
    for (int round = 0; round < 30; round++) {
        oracle_caps caps = oracle_caps_default();
        caps.huge = round % 3 == 0;
        caps.parallel_percent = 10;
        caps.self_loop_percent = 5;
        caps.one_way_percent = 30;
        caps.zero_percent = 10;
        int64_t n = test_rng_range(&rng, 0, 40);
        gcut_graph *g = NULL;
        CHECK_OK(
            oracle_make_random(&rng, n, n == 0 ? 0 : test_rng_range(&rng, 0, 3 * n), &caps, &g));
        if (g == NULL)
            continue;
        /* Terminal sums past INT32_MAX and a source->sink offset must be split on writing. */
        for (int k = 0; n > 0 && k < 3; k++)
            CHECK_OK(gcut_graph_add_tweights(g, test_rng_range(&rng, 0, n - 1), INT32_MAX,
                                             INT32_MAX - 1));
        if (round % 2 == 0)
            gcut__graph_add_flow_offset(g, 5 * (int64_t)INT32_MAX + 3);
        const char *first = temp_path(".max");
        char first_path[600];
        snprintf(first_path, sizeof first_path, "%s", first);
        PASS_IF(gcut_dimacs_write(g, first_path) == GCUT_OK);
        gcut_graph *back = NULL;
        int64_t *ids = NULL;
        gcut_status st = gcut_dimacs_read(first_path, &back, &ids);
        PASS_IF(st == GCUT_OK);
        if (st != GCUT_OK) {
            fprintf(stderr, "round %d: %s\n", round, gcut_last_error());
            gcut_graph_free(g);
            continue;
        }
        PASS_IF(gcut_graph_num_nodes(back) == n);
        PASS_IF(ids[n] == n + 1 && ids[n + 1] == n + 2);
        PASS_IF(back->flow_offset == g->flow_offset);
        int same_terminals = 1;
        for (int64_t i = 0; i < n; i++)
            same_terminals &= ids[i] == i + 1 && back->tw_source[i] == g->tw_source[i] &&
                              back->tw_sink[i] == g->tw_sink[i];
        PASS_IF(same_terminals);
        int64_t expected = graph_oracle(g);
        PASS_IF(graph_oracle(back) == expected);
        PASS_IF(oracle_check_graph(back, "bk", 0, expected, "round trip"));
        const char *second = temp_path(".max");
        char second_path[600];
        snprintf(second_path, sizeof second_path, "%s", second);
        PASS_IF(gcut_dimacs_write(back, second_path) == GCUT_OK);
        gcut_graph *again = NULL;
        PASS_IF(gcut_dimacs_read(second_path, &again, NULL) == GCUT_OK);
        const char *third = temp_path(".max");
        PASS_IF(again != NULL && gcut_dimacs_write(again, third) == GCUT_OK);
        size_t len2 = 0, len3 = 0;
        char *bytes2 = read_bytes(second_path, &len2), *bytes3 = read_bytes(third, &len3);
        PASS_IF(bytes2 != NULL && bytes3 != NULL && len2 == len3 &&
                memcmp(bytes2, bytes3, len2) == 0);
        free(bytes2);
        free(bytes3);
        gcut_graph_free(again);
        gcut_free(ids);
        gcut_graph_free(back);
        gcut_graph_free(g);
    }
    gcut_graph *g = NULL;
    CHECK_OK(gcut_graph_create(2, 0, &g));
    PASS_IF(gcut_dimacs_write(g, "/nonexistent/dir/out.max") == GCUT_ERR_IO &&
            strstr(gcut_last_error(), "/nonexistent/dir/out.max") != NULL);
    gcut_graph_free(g);
}

/* Edges with both capacities set survive a round trip as the same edges (the reader joins an
 * arc with the reverse that follows it). */
static void test_edge_layout(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0xed9e);
    gcut_graph *g = NULL;
    CHECK_OK(gcut_graph_create(30, 0, &g));
    for (int e = 0; g != NULL && e < 80; e++) {
        int64_t u = test_rng_range(&rng, 0, 29), v = test_rng_range(&rng, 0, 28);
        v += v >= u; /* no self-loops */
        CHECK_OK(gcut_graph_add_edge(g, u, v, (int32_t)test_rng_range(&rng, 1, INT32_MAX),
                                     (int32_t)test_rng_range(&rng, 1, 1000)));
    }
    const char *path = temp_path(".max");
    PASS_IF(gcut_dimacs_write(g, path) == GCUT_OK);
    gcut_graph *back = NULL;
    PASS_IF(gcut_dimacs_read(path, &back, NULL) == GCUT_OK);
    int same = back != NULL && gcut_graph_num_edges(back) == 80;
    for (int64_t e = 0; same && e < 80; e++) {
        int64_t u1, v1, u2, v2;
        int32_t c1, r1, c2, r2;
        gcut_graph_get_edge(g, e, &u1, &v1, &c1, &r1);
        gcut_graph_get_edge(back, e, &u2, &v2, &c2, &r2);
        same = u1 == u2 && v1 == v2 && c1 == c2 && r1 == r2;
    }
    PASS_IF(same);
    gcut_graph_free(back);
    gcut_graph_free(g);

    /* Only the arc right after is joined: a reverse further on is an edge of its own, and a
     * second reverse does not overwrite the first. */
    const char *text = "p max 4 5\nn 1 s\nn 4 t\na 2 3 5\na 1 2 9\na 3 2 7\na 3 2 1\n"
                       "a 2 3 4\n";
    path = temp_path(".max");
    write_bytes(path, text, strlen(text));
    PASS_IF(gcut_dimacs_read(path, &g, NULL) == GCUT_OK);
    if (g != NULL) {
        int64_t u, v;
        int32_t cap, rev;
        PASS_IF(gcut_graph_num_edges(g) == 3);
        PASS_IF(gcut_graph_get_edge(g, 0, &u, &v, &cap, &rev) == GCUT_OK && u == 0 && v == 1 &&
                cap == 5 && rev == 0);
        PASS_IF(gcut_graph_get_edge(g, 1, &u, &v, &cap, &rev) == GCUT_OK && u == 1 && v == 0 &&
                cap == 7 && rev == 0);
        PASS_IF(gcut_graph_get_edge(g, 2, &u, &v, &cap, &rev) == GCUT_OK && u == 1 && v == 0 &&
                cap == 1 && rev == 4);
    }
    gcut_graph_free(g);
}

/* Valid files with random bytes changed, cut short or with lines swapped: whatever comes out,
 * it is a clean status (an error names the file and a line) and never a crash. */
static void test_mutations(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x3a7e);
    static const char base[] = "c mutated\np max 6 9\nn 1 s\nn 6 t\na 1 2 16\na 1 3 13\n"
                               "a 2 4 12\na 3 2 4\na 3 5 14\na 4 3 9\na 4 6 20\na 5 4 7\n"
                               "a 5 6 4\n";
    static const char alphabet[] = "0123456789 -+\n\tacnpstx\r\x00\xff";
    for (int round = 0; round < 300; round++) {
        char text[sizeof base];
        memcpy(text, base, sizeof base);
        size_t len = sizeof base - 1;
        int edits = (int)test_rng_range(&rng, 1, 4);
        for (int k = 0; k < edits; k++)
            text[test_rng_range(&rng, 0, (int64_t)len - 1)] =
                alphabet[test_rng_range(&rng, 0, sizeof alphabet - 2)];
        if (round % 4 == 0)
            len = (size_t)test_rng_range(&rng, 0, (int64_t)len);
        const char *path = temp_path(".max");
        write_bytes(path, text, len);
        gcut_graph *g = NULL;
        gcut_status st = gcut_dimacs_read(path, &g, NULL);
        if (st == GCUT_OK) {
            /* Still a valid problem: bk and the oracle agree on it. */
            PASS_IF(oracle_check_graph(g, "bk", 0, graph_oracle(g), "mutated file"));
        } else {
            char prefix[600];
            snprintf(prefix, sizeof prefix, "%s:", path);
            int named = g == NULL && strstr(gcut_last_error(), prefix) == gcut_last_error();
            if (!named)
                fprintf(stderr, "mutation %d: %s '%s'\n", round, gcut_status_name(st),
                        gcut_last_error());
            PASS_IF(named);
        }
        gcut_graph_free(g);
    }
}

/* ---- grid files ---- */

static int same_grid(const gcut_grid *a, const gcut_grid *b) {
    if (a->ndim != b->ndim || a->connectivity != b->connectivity || a->num_nodes != b->num_nodes)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    size_t bytes = (size_t)a->num_nodes * sizeof(int32_t);
    for (int t = 0; t < 2; t++)
        if (memcmp(a->terminal[t], b->terminal[t], bytes) != 0)
            return 0;
    for (int d = 0; d < a->num_dirs; d++)
        if (memcmp(a->cap[d], b->cap[d], bytes) != 0)
            return 0;
    return 1;
}

static void check_grid_error(const void *bytes, size_t len, gcut_status status,
                             const char *location, const char *needle, const char *what) {
    const char *path = temp_path(".grid");
    write_bytes(path, bytes, len);
    gcut_grid *grid = (gcut_grid *)&grid;
    gcut_status st = gcut_grid_read(path, &grid);
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s%s", path, location);
    const char *message = gcut_last_error();
    int ok = st == status && grid == NULL && strstr(message, prefix) == message &&
             strstr(message, needle) != NULL;
    if (!ok)
        fprintf(stderr, "%s: got %s '%s', want %s '%s...%s'\n", what, gcut_status_name(st), message,
                gcut_status_name(status), prefix, needle);
    PASS_IF(ok);
    if (st == GCUT_OK)
        gcut_grid_free(grid);
}

static void check_grid_text(const char *text, gcut_status status, const char *location,
                            const char *needle, const char *what) {
    check_grid_error(text, strlen(text), status, location, needle, what);
}

static void test_grid_files(void) {
    test_rng rng;
    test_rng_init(&rng, test_seed() ^ 0x961d);
    static const struct {
        int ndim, conn;
        int64_t shape[3];
    } cases[] = {{2, 4, {7, 9, 0}}, {2, 8, {1, 13, 0}}, {3, 6, {3, 4, 5}}, {3, 26, {2, 3, 4}}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        oracle_caps caps = oracle_caps_default();
        caps.huge = c == 1;
        gcut_grid *grid = NULL;
        CHECK_OK(
            oracle_make_grid(&rng, cases[c].ndim, cases[c].shape, cases[c].conn, &caps, &grid));
        if (grid == NULL)
            continue;
        const char *path = temp_path(".grid");
        PASS_IF(gcut_grid_write(grid, path) == GCUT_OK);
        gcut_grid *back = NULL;
        CHECK_OK(gcut_grid_read(path, &back));
        PASS_IF(back != NULL && same_grid(grid, back));
        if (back != NULL)
            PASS_IF(oracle_check_grid(back, "bk", oracle_dinic_grid(grid), "grid round trip"));
        gcut_grid_free(back);
        gcut_grid_free(grid);
    }

    /* A valid 2x3 4-connected file to corrupt: header + 6 arrays of 6 int32. */
    const char header[] = "gcut-grid 1 ndim 2 shape 2 3 conn 4\n";
    size_t hlen = sizeof header - 1, data = 6 * 6 * 4;
    unsigned char good[256];
    memcpy(good, header, hlen);
    for (size_t i = 0; i < data; i++)
        good[hlen + i] = i % 4 == 0 ? (unsigned char)(i / 4) : 0; /* little-endian 0..35 */
    size_t total = hlen + data;
    const char *path = temp_path(".grid");
    write_bytes(path, good, total);
    gcut_grid *grid = NULL;
    PASS_IF(gcut_grid_read(path, &grid) == GCUT_OK && grid != NULL &&
            gcut_grid_terminal_cdata(grid, GCUT_SINK)[2] == 8 &&
            gcut_grid_dir_cdata(grid, 3)[5] == 35);
    gcut_grid_free(grid);

    check_grid_error(good, total - 1, GCUT_ERR_PARSE, ": truncated", "needs 180 bytes",
                     "one byte short");
    check_grid_error(good, hlen + 10, GCUT_ERR_PARSE, ": truncated", "the file has 46",
                     "cut in the source array");
    unsigned char longer[300];
    memcpy(longer, good, total);
    longer[total] = 0;
    check_grid_error(longer, total + 1, GCUT_ERR_PARSE, ": byte 180: ", "data after the last",
                     "trailing byte");
    unsigned char negative[256];
    memcpy(negative, good, total);
    negative[hlen + 4 * 24 + 4 * 2 + 3] = 0x80; /* direction 2 (dy,dx)=(+1,+0), node 2 */
    check_grid_error(negative, total, GCUT_ERR_PARSE, ": byte 140: ",
                     "negative capacity -2147483622 in the direction 2 (dy,dx)=(+1,+0) array at "
                     "node 2",
                     "negative capacity");
    check_grid_text("", GCUT_ERR_PARSE, ":1: ", "empty file", "empty grid file");
    check_grid_text("gcut-grud 1\n", GCUT_ERR_PARSE, ":1: ", "not a gcut grid file", "bad magic");
    check_grid_text("P5\n2 3\n255\n", GCUT_ERR_PARSE, ":1: ", "not a gcut grid file",
                    "a PGM picture");
    check_grid_text("gcut-grid 1 ndim 2 shape 2 3 conn 4", GCUT_ERR_PARSE,
                    ":1: ", "truncated header", "no newline");
    check_grid_text("gcut-grid 2 ndim 2 shape 2 3 conn 4\n", GCUT_ERR_UNSUPPORTED,
                    ":1: ", "version '2'", "version 2");
    check_grid_text("gcut-grid 1 ndim 4 shape 2 3 4 5 conn 4\n", GCUT_ERR_PARSE, ":1: ", "ndim '4'",
                    "4D");
    check_grid_text("gcut-grid 1 ndim 2 shape 0 3 conn 4\n", GCUT_ERR_PARSE, ":1: ", "shape[0] '0'",
                    "zero height");
    check_grid_text("gcut-grid 1 ndim 2 shape 2 -3 conn 4\n", GCUT_ERR_PARSE,
                    ":1: ", "shape[1] '-3'", "negative width");
    check_grid_text("gcut-grid 1 ndim 2 shape 2 x conn 4\n", GCUT_ERR_PARSE, ":1: ", "shape[1] 'x'",
                    "garbage width");
    check_grid_text("gcut-grid 1 ndim 2 shape 2 3 conn 6\n", GCUT_ERR_PARSE,
                    ":1: ", "connectivity '6' is not valid in 2D", "conn 6 in 2D");
    check_grid_text("gcut-grid 1 ndim 3 shape 2 3 conn 6\n", GCUT_ERR_PARSE, ":1: ", "bad header",
                    "3D with two sizes");
    check_grid_text("gcut-grid 1 ndim 2 shape 2 3 conn 4 extra\n", GCUT_ERR_PARSE,
                    ":1: ", "bad header", "trailing header word");
    char long_header[400];
    memset(long_header, ' ', sizeof long_header);
    memcpy(long_header, "gcut-grid 1", 11);
    long_header[399] = '\n';
    check_grid_error(long_header, sizeof long_header, GCUT_ERR_PARSE, ":1: ", "longer than 256",
                     "header too long");
    gcut_set_memory_limit((uint64_t)64 << 20);
    check_grid_text("gcut-grid 1 ndim 3 shape 1000 1000 1000 conn 26\n", GCUT_ERR_NOMEM,
                    ":1: ", "out of memory", "10^9 voxels over a 64 MiB cap");
    gcut_set_memory_limit(0);
    check_grid_text("gcut-grid 1 ndim 2 shape 1000 1000 conn 8\n", GCUT_ERR_PARSE, ": truncated",
                    "needs 40000042 bytes", "big header, tiny file");
    gcut_grid *none = NULL;
    PASS_IF(gcut_grid_read("/nonexistent/g.grid", &none) == GCUT_ERR_IO && none == NULL);
}

int main(void) {
    test_seed();
    char pattern[] = "/tmp/gcut-test-dimacs-XXXXXX";
    const char *tmp = getenv("TMPDIR");
    snprintf(temp_dir, sizeof temp_dir, "%s/gcut-test-dimacs-XXXXXX",
             tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    if (mkdtemp(temp_dir) == NULL && mkdtemp(strcpy(temp_dir, pattern)) == NULL) {
        fprintf(stderr, "cannot make a temporary folder\n");
        return 1;
    }
    test_malformed();
    test_hand_made();
    test_random_files();
    test_round_trip();
    test_edge_layout();
    test_mutations();
    test_grid_files();
    for (int i = 0; i < temp_count; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/f%d.max", temp_dir, i);
        remove(path);
        snprintf(path, sizeof path, "%s/f%d.grid", temp_dir, i);
        remove(path);
    }
    rmdir(temp_dir);
    return test_finish("test_dimacs", passed);
}
