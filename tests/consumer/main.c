/* main.c - a program outside the gcut tree, built against an installed gcut (pkg-config and
 * find_package(gcut)) by tests/install_consumer.sh: solves a 2-node graph and checks the
 * flow with the cut certificate and by hand (min(5, 1+3, ...) worked out below). */
#include <gcut.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    gcut_graph *g = NULL;
    if (gcut_graph_create(2, 1, &g) != GCUT_OK)
        return 1;
    gcut_graph_add_tweights(g, 0, 5, 1); /* s->0: 5, 0->t: 1 */
    gcut_graph_add_tweights(g, 1, 2, 4); /* s->1: 2, 1->t: 4 */
    gcut_graph_add_edge(g, 0, 1, 3, 1);  /* 0->1: 3, 1->0: 1 */
    gcut_options opt;
    gcut_options_init(&opt);
    int64_t flow = -1;
    uint8_t labels[2];
    gcut_status st = gcut_graph_solve(g, &opt, &flow, labels, NULL);
    /* Cuts: {s}: 5+2=7; {s,0}: 1+3+2=6; {s,1}: 5+4+1=10; {s,0,1}: 1+4=5. Minimum 5. */
    int ok = st == GCUT_OK && flow == 5 && gcut_graph_verify(g, labels, flow, NULL) == GCUT_OK;
    gcut_graph_free(g);
    /* The library linked is the version of the header compiled against. */
    ok = ok && strcmp(gcut_version_string(), GCUT_VERSION_STRING) == 0;
    printf("gcut %s: flow %lld %s\n", gcut_version_string(), (long long)flow, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
