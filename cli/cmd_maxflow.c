/* cmd_maxflow.c - placeholder for `gcut maxflow` until it lands. */
#include "cli.h"

int cli_cmd_maxflow(int argc, char **argv) {
    (void)argc, (void)argv;
    cli_error("maxflow", GCUT_OK, "not built yet");
    return 1;
}
