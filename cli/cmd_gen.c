/* cmd_gen.c - placeholder for `gcut gen` until it lands. */
#include "cli.h"

int cli_cmd_gen(int argc, char **argv) {
    (void)argc, (void)argv;
    cli_error("gen", GCUT_OK, "not built yet");
    return 1;
}
