/* cmd_segment.c - placeholder for `gcut segment` until it lands. */
#include "cli.h"

int cli_cmd_segment(int argc, char **argv) {
    (void)argc, (void)argv;
    cli_error("segment", GCUT_OK, "not built yet");
    return 1;
}
