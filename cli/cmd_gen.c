/* cmd_gen.c - `gcut gen synth`: the synthetic segmentation benchmark of Hussein et al. 2007,
 * section VII, written as an image, its ground truth, its seeds and the grid problem (the
 * benchmark energy with the known mixtures), 3D volumes as raw 8-bit files; `gcut gen video`: the
 * synthetic test videos of docs/VIDEO.md with ground truth; `gcut gen qpbo-random` /
 * `qpbo-objects`: QPBO energies (Jeppesen et al. 2021, section 4). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: gcut gen video ... (`gcut gen video --help`)\n"
            "       gcut gen synth --size WxH[xD] [--seed N] [--level easy|hard] [-o IMAGE]\n"
            "                      [--truth TRUTH] [--seeds SEEDS] [--grid PROBLEM.grid]\n"
            "                      [--connectivity C]\n\n"
            "Generate the synthetic segmentation benchmark (Hussein et al. 2007, VII): random\n"
            "ellipses whose colours come from one 3-component Gaussian mixture on a background\n"
            "from another; deterministic for a seed, the same shapes at every size.\n\n"
            "options:\n"
            "  --size WxH[xD]    image size; a depth D > 1 makes a gray volume of ellipsoids\n"
            "  --seed N          random seed (default 1)\n"
            "  --level L         easy (default) or hard: closer colours, more noise, stronger\n"
            "                    smoothness (docs/SEGMENT.md)\n"
            "  -o IMAGE          the picture: 8-bit RGB PNG (2D) or raw 8-bit gray (3D)\n"
            "  --truth FILE      ground truth: 0/255 PNG (2D) or raw 0/1 bytes (3D)\n"
            "  --seeds FILE      seed codes 0 unknown, 1 foreground (central 32x32 patch),\n"
            "                    2 background (top-left patch): PNG (2D) or raw bytes (3D);\n"
            "                    `gcut segment --seeds FILE` reads it as it is\n"
            "  --grid FILE       the benchmark's grid problem (for `gcut maxflow`): regional\n"
            "                    term from the generating mixtures, hard seeds, contrast term\n"
            "  --connectivity C  of --grid: 4 (default) or 8 in 2D, 6 (default) or 26 in 3D\n"
            "  --help            this text\n\n"
            "exit status: 0 written, 1 failure, 2 usage error\n\n"
            "       gcut gen qpbo-random --size WxH [--nonsub PCT] [--range R] [--seed N] -o FILE\n"
            "       gcut gen qpbo-objects --size WxH[xD] [--objects K] [--seed N] -o FILE\n\n"
            "QPBO energies in the text format of docs/FORMATS.md (for `gcut qpbo`):\n"
            "  qpbo-random   a 4-connected grid, energies uniform in [-R, R] (default 100),\n"
            "                PCT percent (default 20) of the pairs non-submodular\n"
            "  qpbo-objects  multi-object segmentation: K (default 8) noisy discs (balls), one\n"
            "                layer of nodes per object over its region, smoothness inside a\n"
            "                layer, non-submodular exclusion between layers (docs/QPBO.md)\n");
}

/* Sides up to 2^31-1 and at most 2^40 pixels: beyond that no image fits a machine, and the
 * products gcut makes from them (pixels x channels, x directions) stay far inside int64. */
#define MAX_SIDE ((int64_t)INT32_MAX)
#define MAX_PIXELS ((int64_t)1 << 40)

/* --seed: 0 to 2^64-1, decimal or 0x hex, no sign. */
static bool parse_seed(const char *v, uint64_t *seed) {
    char *end = NULL;
    errno = 0;
    *seed = strtoull(v, &end, 0);
    if (end == v || *end != '\0' || v[0] == '-' || errno == ERANGE) {
        cli_error("gen", GCUT_OK, "--seed '%s' is not a number from 0 to 2^64-1", v);
        return false;
    }
    return true;
}

static int gen_qpbo(int argc, char **argv) {
    bool objects_kind = strcmp(argv[1], "qpbo-objects") == 0;
    int64_t w = 0, h = 0, d = 1;
    uint64_t seed = 1;
    int nonsub = 20, range = 100, objects = 8;
    const char *out_path = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) {
            cli_error("gen", GCUT_OK, "'%s' is not an option or lacks its value", a);
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--size") == 0) {
            int64_t dims[3] = {1, 1, 1};
            int num_dims = 0;
            if (!cli_parse_dims("gen", "--size", v, 2, objects_kind ? 3 : 2, MAX_SIDE, MAX_PIXELS,
                                dims, &num_dims))
                return 2;
            w = dims[0], h = dims[1], d = dims[2];
        } else if (strcmp(a, "--seed") == 0) {
            if (!parse_seed(v, &seed))
                return 2;
        } else if (strcmp(a, "--nonsub") == 0) {
            if (!cli_parse_int("gen", a, v, 0, 100, &nonsub))
                return 2;
        } else if (strcmp(a, "--range") == 0) {
            if (!cli_parse_int("gen", a, v, 1, INT32_MAX, &range))
                return 2;
        } else if (strcmp(a, "--objects") == 0) {
            if (!cli_parse_int("gen", a, v, 1, 1000000, &objects))
                return 2;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            out_path = v;
        } else {
            cli_error("gen", GCUT_OK, "unknown option '%s' (see gcut gen --help)", a);
            return 2;
        }
    }
    if (w == 0 || out_path == NULL) {
        cli_error("gen", GCUT_OK, "--size and -o are required");
        return 2;
    }
    gcut_qpbo *q = NULL;
    gcut_status st = objects_kind ? gcut_qpbo_objects(w, h, d, objects, seed, &q)
                                  : gcut_qpbo_random(w, h, nonsub, (int32_t)range, seed, &q);
    if (st != GCUT_OK) {
        cli_error("gen", st, "cannot make the energy");
        return 1;
    }
    printf("%s: %" PRId64 " nodes, %" PRId64 " terms\n", argv[1], gcut_qpbo_num_nodes(q),
           gcut_qpbo_num_terms(q));
    const char *temp = cli_out_path("gen", out_path); /* renamed when the command succeeds */
    st = temp != NULL ? gcut_qpbo_write(q, temp) : GCUT_ERR_IO;
    gcut_qpbo_free(q);
    if (temp == NULL)
        return 1;
    if (st != GCUT_OK) {
        cli_error("gen", st, "cannot write '%s'", out_path);
        return 1;
    }
    return 0;
}

static int write_raw(const char *path, const uint8_t *bytes, int64_t count) {
    FILE *f = cli_out_open("gen", path);
    if (f == NULL)
        return 1;
    fwrite(bytes, 1, (size_t)count, f);
    return cli_out_close("gen", f, path);
}

/* A one-channel 8-bit picture of bytes (2D PNG/PGM) or raw bytes (3D). */
static int write_plane(const char *path, uint8_t *bytes, int64_t w, int64_t h, int64_t d) {
    if (d > 1)
        return write_raw(path, bytes, w * h * d);
    gcut_image img = {w, h, 1, 1, 8, bytes};
    const char *temp = cli_out_path("gen", path);
    if (temp == NULL)
        return 1;
    gcut_status st = gcut_image_write(temp, &img);
    if (st != GCUT_OK) {
        cli_error("gen", st, "cannot write '%s'", path);
        return 1;
    }
    return 0;
}

static void video_usage(FILE *out) {
    fprintf(out,
            "usage: gcut gen video --size WxH [--frames N] [--seed N] [--level L] -o FRAME_DIR\n"
            "                      [--truth TRUTH_DIR] [--format png|jpg] [--video FILE.mp4]\n\n"
            "Generate a synthetic test video with ground truth (docs/VIDEO.md): a textured object\n"
            "that moves, deforms and drifts in colour, a part that grows out of it, a bar that\n"
            "passes in front of it, camera pan and noise; the same scene at every size.\n\n"
            "options:\n"
            "  --size WxH         frame size (16 to 16384 per side), e.g. 320x240, 1920x1080\n"
            "  --frames N         number of frames (default 60)\n"
            "  --seed N           random seed (default 1)\n"
            "  -o FRAME_DIR       folder for frame_NNNNNN.png (or .jpg), made if missing\n"
            "  --truth TRUTH_DIR  folder for truth_NNNNNN.png, 0/255 (truth_000000.png is the\n"
            "                     `gcut video --init` mask)\n"
            "  --level L          easy (default) or hard: three times the noise, object colours\n"
            "                     closer to the background's, a brownish distractor blob\n"
            "  --format F         png (default), jpg (quality 95) or ppm (truth then pgm;\n"
            "                     needs no image library)\n"
            "  --video FILE       also encode the frames as a video (needs FFmpeg)\n"
            "  --help             this text\n\n"
            "exit status: 0 written, 1 failure, 2 usage error\n");
}

static int make_dir(const char *dir) {
    struct stat sb;
    if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
        return 0;
    if (mkdir(dir, 0777) != 0) {
        cli_error("gen", GCUT_OK, "cannot make folder %s: %s", dir, strerror(errno));
        return 1;
    }
    return 0;
}

static int gen_video(int argc, char **argv) {
    int64_t w = 0, h = 0, frames = 60;
    uint64_t seed = 1;
    const char *out = NULL, *truth_dir = NULL, *format = "png", *video_path = NULL;
    gcut_synth_level level = GCUT_SYNTH_EASY;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            video_usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            cli_error("gen", GCUT_OK, "'%s' is not an option or lacks its value", a);
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--size") == 0) {
            int64_t dims[2];
            int num_dims = 0;
            if (!cli_parse_dims("gen", "--size", v, 2, 2, MAX_SIDE, MAX_PIXELS, dims, &num_dims))
                return 2;
            w = dims[0], h = dims[1];
        } else if (strcmp(a, "--frames") == 0) {
            if (!cli_parse_int64("gen", a, v, 1, 1000000, &frames))
                return 2;
        } else if (strcmp(a, "--seed") == 0) {
            if (!parse_seed(v, &seed))
                return 2;
        } else if (strcmp(a, "-o") == 0) {
            out = v;
        } else if (strcmp(a, "--truth") == 0) {
            truth_dir = v;
        } else if (strcmp(a, "--format") == 0) {
            if (strcmp(v, "png") != 0 && strcmp(v, "jpg") != 0 && strcmp(v, "ppm") != 0) {
                cli_error("gen", GCUT_OK, "--format '%s': png, jpg or ppm", v);
                return 2;
            }
            format = v;
        } else if (strcmp(a, "--video") == 0) {
            video_path = v;
        } else if (strcmp(a, "--level") == 0) {
            if (strcmp(v, "easy") != 0 && strcmp(v, "hard") != 0) {
                cli_error("gen", GCUT_OK, "--level '%s': easy or hard", v);
                return 2;
            }
            level = strcmp(v, "hard") == 0 ? GCUT_SYNTH_HARD : GCUT_SYNTH_EASY;
        } else {
            cli_error("gen", GCUT_OK, "unknown option '%s'", a);
            return 2;
        }
    }
    if (w == 0 || (out == NULL && video_path == NULL)) {
        cli_error("gen", GCUT_OK, "gen video needs --size and -o (or --video)");
        return 2;
    }
    if ((out != NULL && make_dir(out) != 0) || (truth_dir != NULL && make_dir(truth_dir) != 0))
        return 1;
    uint8_t *truth = malloc((size_t)(w * h));
    gcut_image mask = {0};
    gcut_video_writer *writer = NULL;
    gcut_status st = truth == NULL ? GCUT_ERR_NOMEM : gcut_image_alloc(&mask, w, h, 1, 1, 8);
    if (st == GCUT_OK && video_path != NULL)
        st = gcut_video_writer_open(video_path, w, h, 25.0, &writer);
    char path[4096];
    for (int64_t k = 0; k < frames && st == GCUT_OK; k++) {
        gcut_image img;
        if ((st = gcut_video_synth_frame(w, h, seed, k, level, &img, truth)) != GCUT_OK)
            break;
        if (out != NULL) {
            snprintf(path, sizeof path, "%s/frame_%06" PRId64 ".%s", out, k, format);
            st = gcut_image_write(path, &img);
        }
        if (st == GCUT_OK && writer != NULL)
            st = gcut_video_writer_write(writer, &img);
        gcut_image_free(&img);
        if (st == GCUT_OK && truth_dir != NULL) {
            uint8_t *m = mask.pixels;
            for (int64_t i = 0; i < w * h; i++)
                m[i] = truth[i] ? 255 : 0;
            /* ppm frames get pgm truth: a build without libpng writes both */
            snprintf(path, sizeof path, "%s/truth_%06" PRId64 ".%s", truth_dir, k,
                     strcmp(format, "ppm") == 0 ? "pgm" : "png");
            st = gcut_image_write(path, &mask);
        }
    }
    gcut_status cst = gcut_video_writer_close(writer);
    if (st == GCUT_OK)
        st = cst;
    free(truth);
    gcut_image_free(&mask);
    if (st != GCUT_OK) {
        cli_error("gen", st, "video");
        return 1;
    }
    return 0;
}

int cli_cmd_gen(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "qpbo-random") == 0 || strcmp(argv[1], "qpbo-objects") == 0)
        return gen_qpbo(argc, argv);
    if (strcmp(argv[1], "video") == 0)
        return gen_video(argc - 1, argv + 1);
    if (strcmp(argv[1], "synth") != 0) {
        cli_error("gen", GCUT_OK,
                  "unknown generator '%s' (synth, video, qpbo-random, qpbo-objects)", argv[1]);
        return 2;
    }
    int64_t w = 0, h = 0, d = 1;
    uint64_t seed = 1;
    gcut_synth_level level = GCUT_SYNTH_EASY;
    int connectivity = 0;
    const char *out_path = NULL, *truth_path = NULL, *seeds_path = NULL, *grid_path = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            cli_error("gen", GCUT_OK, "'%s' is not an option or lacks its value", a);
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--size") == 0) {
            int64_t dims[3] = {1, 1, 1};
            int num_dims = 0;
            if (!cli_parse_dims("gen", "--size", v, 2, 3, MAX_SIDE, MAX_PIXELS, dims, &num_dims))
                return 2;
            w = dims[0], h = dims[1], d = dims[2];
        } else if (strcmp(a, "--seed") == 0) {
            if (!parse_seed(v, &seed))
                return 2;
        } else if (strcmp(a, "--level") == 0) {
            if (strcmp(v, "easy") == 0)
                level = GCUT_SYNTH_EASY;
            else if (strcmp(v, "hard") == 0)
                level = GCUT_SYNTH_HARD;
            else {
                cli_error("gen", GCUT_OK, "--level '%s' is not easy or hard", v);
                return 2;
            }
        } else if (strcmp(a, "--connectivity") == 0) {
            if (strcmp(v, "4") != 0 && strcmp(v, "8") != 0 && strcmp(v, "6") != 0 &&
                strcmp(v, "26") != 0) {
                cli_error("gen", GCUT_OK, "--connectivity '%s' is not 4 or 8 (2D), 6 or 26 (3D)",
                          v);
                return 2;
            }
            connectivity = atoi(v);
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            out_path = v;
        } else if (strcmp(a, "--truth") == 0) {
            truth_path = v;
        } else if (strcmp(a, "--seeds") == 0) {
            seeds_path = v;
        } else if (strcmp(a, "--grid") == 0) {
            grid_path = v;
        } else {
            cli_error("gen", GCUT_OK, "unknown option '%s' (see gcut gen --help)", a);
            return 2;
        }
    }
    if (w == 0) {
        cli_error("gen", GCUT_OK, "--size is required");
        return 2;
    }
    if (!out_path && !truth_path && !seeds_path && !grid_path) {
        cli_error("gen", GCUT_OK, "nothing to write: give -o, --truth, --seeds or --grid");
        return 2;
    }
    if (connectivity != 0 && (d > 1) != (connectivity == 6 || connectivity == 26)) {
        cli_error("gen", GCUT_OK, "--connectivity %d does not fit a %s image", connectivity,
                  d > 1 ? "3D" : "2D");
        return 2;
    }
    const cli_path outputs[] = {
        {"-o", out_path}, {"--truth", truth_path}, {"--seeds", seeds_path}, {"--grid", grid_path}};
    int code = cli_check_paths("gen", NULL, 0, outputs, 4);
    if (code != 0)
        return code;
    const int64_t n = w * h * d; /* at most MAX_PIXELS: checked by cli_parse_dims */
    int rc = 0;
    uint8_t *truth = NULL, *seeds = NULL;
    gcut_image image = {0};
    if (out_path || truth_path) {
        if ((truth = cli_alloc((size_t)n, "synthetic truth")) == NULL) {
            cli_error("gen", GCUT_ERR_NOMEM, "truth of %" PRId64 " bytes", n);
            return 1;
        }
        gcut_status st = gcut_synth_image(w, h, d, seed, level, &image, truth);
        if (st != GCUT_OK) {
            cli_error("gen", st, "cannot make the synthetic image");
            gcut_free(truth);
            return 1;
        }
        int64_t fg = 0;
        for (int64_t i = 0; i < n; i++)
            fg += truth[i];
        printf("synth %" PRId64 "x%" PRId64 "x%" PRId64 " %s seed %" PRIu64 ": foreground %.2f%%\n",
               w, h, d, level == GCUT_SYNTH_EASY ? "easy" : "hard", seed, 100.0 * fg / n);
        if (out_path) {
            if (d > 1) {
                rc |= write_raw(out_path, image.pixels, n);
            } else {
                const char *temp = cli_out_path("gen", out_path);
                if (temp == NULL) {
                    rc = 1;
                } else if ((st = gcut_image_write(temp, &image)) != GCUT_OK) {
                    cli_error("gen", st, "cannot write '%s'", out_path);
                    rc = 1;
                }
            }
        }
        if (truth_path && rc == 0) {
            if (d == 1)
                for (int64_t i = 0; i < n; i++)
                    truth[i] = truth[i] ? 255 : 0;
            rc |= write_plane(truth_path, truth, w, h, d);
        }
    }
    if (seeds_path && rc == 0) {
        if ((seeds = cli_alloc((size_t)n, "synthetic seeds")) == NULL) {
            cli_error("gen", GCUT_ERR_NOMEM, "seeds of %" PRId64 " bytes", n);
            rc = 1;
        } else {
            gcut_status st = gcut_synth_seeds(w, h, d, seeds);
            if (st != GCUT_OK) {
                cli_error("gen", st, "cannot make the seeds");
                rc = 1;
            } else {
                rc |= write_plane(seeds_path, seeds, w, h, d);
            }
        }
    }
    if (grid_path && rc == 0) {
        gcut_grid *grid = NULL;
        const char *temp = cli_out_path("gen", grid_path);
        gcut_status st = temp == NULL ? GCUT_ERR_IO : GCUT_OK;
        if (st == GCUT_OK)
            st = gcut_synth_grid(w, h, d, seed, level, connectivity, &grid);
        if (st == GCUT_OK)
            st = gcut_grid_write(grid, temp);
        if (temp == NULL) {
            rc = 1;
        } else if (st != GCUT_OK) {
            cli_error("gen", st, "cannot make or write the grid '%s'", grid_path);
            rc = 1;
        }
        gcut_grid_free(grid);
    }
    gcut_image_free(&image);
    gcut_free(truth);
    gcut_free(seeds);
    return rc;
}
