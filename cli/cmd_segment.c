/* cmd_segment.c - `gcut segment`: seeded image segmentation (Boykov-Jolly energy with learnt
 * colour models, Lattari 2010 ch. 3.4) from files to a 0/255 mask and an overlay, with timings
 * and, given a ground truth, Garrett & Saito 2009's error rate, false positives and negatives. */
#define _DEFAULT_SOURCE 1 /* madvise() and MADV_HUGEPAGE under -std=c11 */
#include "cli.h"

#include <inttypes.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out) {
    fputs("usage: gcut segment IMAGE --seeds MASK -o MASK_OUT [--overlay OUT.png] [options]\n"
          "       gcut segment IMAGE --rect X,Y,W,H [--seeds MASK] -o MASK_OUT [options]\n"
          "       gcut segment SLICE... --seeds MASK -o MASK_OUT.raw [options]\n\n"
          "Segment IMAGE (PNG, JPEG, PGM/PPM; 8 or 16 bit; gray or colour) into foreground and\n"
          "background from the seeds in MASK, exactly (a minimum cut), and write the mask as a\n"
          "0/255 PNG. Prints the time of each stage (model, construction, solve) and the\n"
          "capacity scale; with --truth also the error rate and false positives / negatives\n"
          "(percentages of all pixels).\n\n"
          "options:\n"
          "  --seeds MASK          seed mask of the same size (required without --rect)\n"
          "  --rect X,Y,W,H        GrabCut box in pixels (top-left origin): outside it is\n"
          "                        background, inside unknown; --seeds add hard constraints\n"
          "  --iterations N        GrabCut rounds: re-fit the colour models to the cut and cut\n"
          "                        again, at most N cuts, fewer when the labels stop changing\n"
          "                        (default 5; 1 = one cut from the seeds' models)\n"
          "  --coarse-rounds N     GrabCut: make the first N rounds on a half-size copy, the\n"
          "                        rest (each an exact cut) at full size; auto (default:\n"
          "                        all but the last when 16384+ pixels are unknown), or none\n"
          "  --cold                solve every round afresh (default: bk re-solves warm from\n"
          "                        the previous round; the masks are the same)\n"
          "  --seed-encoding E     gcut: 0 unknown, 1 foreground, 2 background (default);\n"
          "                        grabcut: OpenCV 0 BGD, 1 FGD, 2 PR_BGD, 3 PR_FGD;\n"
          "                        color: red (255,0,0) foreground, blue (0,0,255) background,\n"
          "                        anything else or transparent unknown; gray masks: 255\n"
          "                        foreground, 0 background (docs/SEGMENT.md)\n"
          "  -o MASK_OUT           output mask, 0/255 (PNG for images, raw bytes for volumes)\n"
          "  --overlay OUT.png     the picture with the foreground tinted and its boundary drawn\n"
          "  --truth TRUTH         ground-truth mask (nonzero = foreground) to score against\n"
          "  --write-grid FILE     also write the energy of the first cut (the seeds' colour\n"
          "                        models; not with --rect or --batch) as a gcut grid file\n"
          "                        (docs/FORMATS.md), for `gcut maxflow` and bench/; its\n"
          "                        minimum cut is the mask of --iterations 1\n"
          "  --solver NAME         solver from `gcut solvers`, or auto (default). For one cut\n"
          "                        of one picture (--iterations 1, no --rect, --levels or\n"
          "                        --batch) auto solves on the CPU, parallel-bk on --threads\n"
          "                        (all cores by default), without starting CUDA, when the\n"
          "                        picture has at most GCUT_SEGMENT_CPU_PIXELS_PER_THREAD\n"
          "                        pixels per thread (default 131072; 0 = never); otherwise\n"
          "                        cuda-grid where a GPU is usable (--verbose says which and\n"
          "                        why; docs/SEGMENT.md)\n"
          "  --threads N           CPU threads for parallel solvers (0 = all)\n"
          "  --lambda L            smoothness weight (default 50)\n"
          "  --sigma S             contrast scale in 8-bit units (default: estimated)\n"
          "  --connectivity C      4 or 8 in 2D (default 8; with --rect 4 at twice lambda),\n"
          "                        6 or 26 in 3D (default 6)\n"
          "  --model M             gmm, hist or auto (default: gmm for colour, hist for gray)\n"
          "  --components K        GMM components (default 5)\n"
          "  --bins B              histogram bins per channel (default 32)\n"
          "  --scale S             energy-to-capacity factor (default: chosen, and printed)\n"
          "  --raw DxHxW[:C[:B]]   IMAGE is a raw volume of C channels (default 1) of B bits\n"
          "                        (8 or 16, default 8)\n",
          out);
    fputs("  --batch LIST          segment every line of LIST, 'IMAGE SEEDS MASK_OUT' (2D\n"
          "                        images; paths without spaces; blank and # lines skipped) in\n"
          "                        one process, so start-up (CUDA's included) is paid once; then\n"
          "                        IMAGE, --seeds and -o are not given; one line per image and\n"
          "                        the throughput are printed; exit 1 if a line failed or none\n"
          "  --jobs N              with --batch: N images at once (threads; default 1), for\n"
          "                        the colour models and I/O of one image to overlap another's\n"
          "                        cut; give bk or cuda-grid (cpu-pr threads would compete)\n"
          "  --levels L            multilevel narrow-banded cut (docs/BAND.md): solve a copy\n"
          "                        halved L times (1-8) in full, then only a band around the\n"
          "                        projected boundary at each finer level; 0 = full solve\n"
          "                        (default); auto = by size. Not always the exact minimum:\n"
          "                        prints the energy of the result (use --check)\n"
          "  --band D              band half-width in pixels at each level (default 2)\n"
          "  --band-solver NAME    graph solver of the bands (bk, cuda-general, ...); default\n"
          "                        auto: --solver if it takes graphs, else cuda-general when\n"
          "                        the coarsest level ran on cuda-grid, else bk\n"
          "  --band-grow           widen the band where its cut touches the band's edge and\n"
          "                        re-solve until it does not (a heuristic, docs/BAND.md)\n"
          "  --check               with --levels: also solve the full problem exactly and\n"
          "                        print the pixels that differ and the energy gap\n"
          "  --verbose             progress on stderr (always on for volumes); the energy of\n"
          "                        every GrabCut round\n"
          "  --help                this text\n\n"
          "Volumes: give --raw, or several IMAGEs (the slices, in z order). MASK and TRUTH are\n"
          "then raw files of one byte per voxel or comma-separated lists of slices, and\n"
          "MASK_OUT is written as raw bytes (0/255). Progress goes to stderr.\n\n"
          "exit status: 0 segmented, 1 bad input or failure, 2 usage error\n",
          out);
}

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* CUDA's start-up (0.15-0.25 s on the H100 host) on a second thread, overlapped with reading
 * the files and fitting the colour models (gcut_device_init). Started only where the solve
 * will use the GPU: --solver cuda-grid, or auto on a picture large enough for auto to pick it
 * (auto's threshold in src/core/registry.c, GCUT__AUTO_GPU_MIN_NODES). For auto that is known
 * once the picture is decoded; to overlap the decoding too, a picture file of at least
 * PRESTART_MIN_FILE_BYTES starts it at once (a PNG or JPEG photo of 256x256 pixels is rarely
 * smaller). A wrong guess costs time only: a thread started for a picture that is then solved
 * on the CPU is waited for at the end. GCUT_SEGMENT_PRESTART=0 turns it off (for before/after
 * timings). */
#define PRESTART_MIN_PIXELS ((int64_t)256 * 256)
#define PRESTART_MIN_FILE_BYTES ((int64_t)64 * 1024)

static int64_t file_bytes(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    int64_t size = fseek(f, 0, SEEK_END) == 0 ? (int64_t)ftell(f) : -1;
    fclose(f);
    return size;
}

typedef struct device_start {
    pthread_t thread;
    bool running;
    int device;
    double begin_ms, end_ms;
    gcut_status status;
} device_start;

static void *device_start_main(void *arg) {
    device_start *d = arg;
    cli_timeline("device", "CUDA start-up begins (gcut_device_init)");
    d->begin_ms = now_ms();
    d->status = gcut_device_init(d->device);
    d->end_ms = now_ms();
    cli_timeline("device", d->status == GCUT_OK ? "CUDA ready" : "CUDA start-up failed");
    return NULL;
}

/* Start the thread if solver (NULL = auto) will run on the GPU for pixels pixels (-1: not
 * known yet, so only a named cuda-grid starts it). */
static void device_start_begin(device_start *d, const gcut_options *options, int64_t pixels) {
    if (d->running)
        return;
    const char *solver = options->solver;
    const bool named = solver != NULL && strcmp(solver, "cuda-grid") == 0;
    const bool automatic = solver == NULL || strcmp(solver, "auto") == 0;
    if (!named && !(automatic && pixels >= PRESTART_MIN_PIXELS))
        return;
    const char *env = getenv("GCUT_SEGMENT_PRESTART");
    if (env != NULL && strcmp(env, "0") == 0)
        return;
    d->device = options->device;
    d->status = GCUT_OK;
    d->begin_ms = d->end_ms = 0;
    d->running = pthread_create(&d->thread, NULL, device_start_main, d) == 0;
}

/* Wait for the thread (it must not outlive the command). @return true if it ran. */
static bool device_start_end(device_start *d) {
    if (!d->running)
        return false;
    pthread_join(d->thread, NULL);
    d->running = false;
    return true;
}

/* ---- auto's route for one picture (docs/SEGMENT.md, "Which solver auto takes") ----
 *
 * A process that starts CUDA pays for it whatever it then does: on the H100 host ~220-250 ms
 * of start-up and ~100 ms of tear-down at exit (docs/CUDA-GRID.md, "Segmentation process time",
 * fourth and fifth passes), more than the whole CPU route (read, models, energy, parallel-bk on
 * every core, write) takes there for a hard photo of up to ~2 megapixels since parallel-bk's
 * pre-pass on pictures (src/seg/segment.c; 16 cores: 244 ms against 372 at 640x480, 317 against
 * 362 at 1920x1080 = 129,600 pixels per core, 429 against 352 at 2560x1440 = 230,400 per core;
 * docs/CUDA-GRID.md, "Segmentation process time (sixth pass)"; this constant is the largest
 * measured win rounded up to a power of two). So `gcut segment` with solver auto, one
 * picture (no --batch, not a volume) and one cut (--iterations 1, no --rect, no --levels)
 * solves on the CPU, never touching CUDA, when the picture has at most
 * CPU_PIXELS_PER_THREAD pixels per CPU thread (--threads, else the online cores): parallel-bk
 * on that many threads. Past it, and for --batch, volumes, GrabCut rounds and bands, auto
 * keeps its GPU rule (cuda-grid from 256x256 where a GPU is usable). The decision needs the
 * picture's size before anything is decoded, so that the GPU route's CUDA start-up can still
 * begin at once: PNG and JPEG headers are read for it (other formats decide once decoded).
 * GCUT_SEGMENT_CPU_PIXELS_PER_THREAD overrides the constant (0: never the CPU route). */
#define CPU_PIXELS_PER_THREAD ((int64_t)131072)

typedef struct segment_route {
    bool cpu;           /* take the CPU route: parallel-bk on `threads` threads */
    int threads;        /* CPU threads the rule counted */
    int64_t pixels;     /* the picture's pixels (-1: not known) */
    int64_t per_thread; /* the threshold used */
    char reason[256];   /* for --verbose */
} segment_route;

static int online_cores(void) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (cores < 65536 ? (int)cores : 65536) : 1;
}

/* The rule above, as a function of the picture's pixels (-1: unknown), the threads the CPU
 * route would use, and whether the run is one cut of one picture under auto. */
static segment_route decide_route(int64_t pixels, int threads, bool eligible) {
    segment_route r = {false, threads, pixels, CPU_PIXELS_PER_THREAD, ""};
    const char *env = getenv("GCUT_SEGMENT_CPU_PIXELS_PER_THREAD");
    if (env != NULL && *env != '\0') {
        char *end;
        const long long v = strtoll(env, &end, 10);
        if (*end == '\0' && v >= 0)
            r.per_thread = (int64_t)v;
    }
    if (!eligible) {
        snprintf(r.reason, sizeof r.reason,
                 "the solver is named, or the run is not one cut of one picture: no route rule");
        return r;
    }
    if (pixels < 0) {
        snprintf(r.reason, sizeof r.reason, "the picture's size is not known yet");
        return r;
    }
    if (pixels < PRESTART_MIN_PIXELS) {
        snprintf(r.reason, sizeof r.reason,
                 "%" PRId64 " pixels: below 256x256 auto solves on the CPU anyway", pixels);
        return r;
    }
    const int t = threads > 0 ? threads : 1;
    r.cpu = r.per_thread > 0 && (r.per_thread > INT64_MAX / t || pixels <= r.per_thread * t);
    snprintf(r.reason, sizeof r.reason,
             "%" PRId64 " pixels on %d CPU thread%s = %" PRId64 " per thread, %s the CPU "
             "route's limit of %" PRId64 " (GCUT_SEGMENT_CPU_PIXELS_PER_THREAD)",
             pixels, threads, threads == 1 ? "" : "s", pixels / t, r.cpu ? "within" : "past",
             r.per_thread);
    return r;
}

static uint32_t read_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The pixels of a PNG or JPEG picture from its header (IHDR; a JPEG's first SOFn marker),
 * without decoding it; -1 for other formats or anything unexpected (the route is then decided
 * once the picture is decoded). */
static int64_t peek_pixels(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    uint8_t head[65536];
    const size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (got >= 24 && memcmp(head, png, 8) == 0 && memcmp(head + 12, "IHDR", 4) == 0) {
        const uint32_t w = read_be32(head + 16), h = read_be32(head + 20);
        return w <= 0x7fffffffu && h <= 0x7fffffffu ? (int64_t)w * (int64_t)h : -1;
    }
    if (got < 4 || head[0] != 0xFF || head[1] != 0xD8)
        return -1;
    for (size_t at = 2; at + 9 < got;) {
        if (head[at] != 0xFF)
            return -1;
        const uint8_t marker = head[at + 1];
        if (marker == 0xFF) { /* fill byte */
            at++;
            continue;
        }
        const size_t length = (size_t)head[at + 2] << 8 | head[at + 3];
        /* SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC): height, then width. */
        if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC)
            return (int64_t)((size_t)head[at + 5] << 8 | head[at + 6]) *
                   (int64_t)((size_t)head[at + 7] << 8 | head[at + 8]);
        if (marker == 0xDA || length < 2)
            return -1;
        at += 2 + length;
    }
    return -1;
}

typedef struct segment_args {
    const char **images; /* one picture, or the slices of a volume in z order */
    int num_images;
    bool volume; /* --raw or several slices: masks are raw files or slice lists */
    const char *seeds, *out, *overlay, *truth;
    const char *write_grid; /* --write-grid FILE: the first cut's energy as a grid file */
    gcut_seed_encoding encoding;
    gcut_seg_params params;
    gcut_options options;
    bool raw;
    int64_t raw_dims[3]; /* depth, height, width */
    int raw_channels, raw_bits;
    int verbose;
    const char *batch; /* --batch LIST */
    int jobs;          /* --jobs N: batch items at once */
    bool check;        /* --check: compare a banded result with the full solve */
    bool has_rect;
    gcut_rect rect;
} segment_args;

/* X,Y,W,H: four integers (W or H may be 0 or negative: the library names the empty box). */
static bool parse_rect(const char *text, gcut_rect *rect) {
    int64_t v[4];
    const char *p = text;
    for (int k = 0; k < 4; k++) {
        char *end;
        v[k] = strtoll(p, &end, 10);
        if (end == p || (k < 3 && *end != ',') || (k == 3 && *end != '\0'))
            return false;
        if (v[k] < -(INT64_C(1) << 40) || v[k] > (INT64_C(1) << 40))
            return false;
        p = end + 1;
    }
    rect->x = v[0], rect->y = v[1], rect->width = v[2], rect->height = v[3];
    return true;
}

/* --raw DxHxW[:C[:B]]: sizes checked one by one and as a product (cli_parse_dims). */
static bool parse_raw(const char *text, segment_args *args) {
    char dims_text[128];
    const char *colon = strchr(text, ':');
    size_t len = colon != NULL ? (size_t)(colon - text) : strlen(text);
    if (len >= sizeof dims_text) {
        cli_error("segment", GCUT_OK, "--raw '%s' is too long", text);
        return false;
    }
    memcpy(dims_text, text, len);
    dims_text[len] = '\0';
    int num_dims = 0;
    if (!cli_parse_dims("segment", "--raw", dims_text, 3, 3, INT32_MAX, (int64_t)1 << 40,
                        args->raw_dims, &num_dims))
        return false;
    args->raw_channels = 1;
    args->raw_bits = 8;
    if (colon == NULL)
        return true;
    char part[32];
    const char *second = strchr(colon + 1, ':');
    len = second != NULL ? (size_t)(second - colon - 1) : strlen(colon + 1);
    if (len >= sizeof part) {
        cli_error("segment", GCUT_OK, "--raw '%s': bad channel count", text);
        return false;
    }
    memcpy(part, colon + 1, len);
    part[len] = '\0';
    if (!cli_parse_int("segment", "--raw channels", part, 1, 4, &args->raw_channels))
        return false;
    if (second != NULL) {
        if (strcmp(second + 1, "8") != 0 && strcmp(second + 1, "16") != 0) {
            cli_error("segment", GCUT_OK, "--raw '%s': bits '%s' is not 8 or 16", text, second + 1);
            return false;
        }
        args->raw_bits = atoi(second + 1);
    }
    return true;
}

/* Add path, and for volumes each slice of a comma-separated list, to the inputs. */
static int add_inputs(cli_path *inputs, int count, int room, const char *what, const char *path,
                      bool volume, char **copies, int *num_copies) {
    if (path == NULL || count >= room)
        return count;
    inputs[count++] = (cli_path){what, path};
    if (!volume || strchr(path, ',') == NULL)
        return count;
    char *list = cli_alloc(strlen(path) + 1, "slice list");
    if (list == NULL)
        return count;
    strcpy(list, path);
    copies[(*num_copies)++] = list;
    for (char *p = list; p != NULL && count < room;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        inputs[count++] = (cli_path){what, p};
        p = comma != NULL ? comma + 1 : NULL;
    }
    return count;
}

/* An output naming an input (-o the image, --overlay the seeds, ...) is refused before
 * anything is read or written. @return -1 to run, else the exit code. */
static int check_paths(const segment_args *args) {
    int room = args->num_images + 2 + 2 * 1024, count = 0, num_copies = 0;
    cli_path *inputs = cli_alloc((size_t)room * sizeof *inputs, "path list");
    if (inputs == NULL) {
        cli_error("segment", GCUT_ERR_NOMEM, "path list");
        return 1;
    }
    char *copies[2] = {NULL, NULL};
    for (int i = 0; i < args->num_images; i++)
        inputs[count++] = (cli_path){"image", args->images[i]};
    count = add_inputs(inputs, count, room, "seed mask", args->seeds, args->volume, copies,
                       &num_copies);
    count =
        add_inputs(inputs, count, room, "--truth", args->truth, args->volume, copies, &num_copies);
    const cli_path outputs[] = {
        {"-o", args->out}, {"--overlay", args->overlay}, {"--write-grid", args->write_grid}};
    int code = cli_check_paths("segment", inputs, count, outputs, 3);
    for (int i = 0; i < num_copies; i++)
        gcut_free(copies[i]);
    gcut_free(inputs);
    return code != 0 ? code : -1;
}

/* @return -1 to run, else the exit code. */
static int parse_args(int argc, char **argv, segment_args *args) {
    memset(args, 0, sizeof *args);
    gcut_seg_params_init(&args->params);
    gcut_options_init(&args->options);
    args->encoding = GCUT_SEEDS_GCUT;
    if ((args->images = malloc((size_t)argc * sizeof *args->images)) == NULL) {
        cli_error("segment", GCUT_ERR_NOMEM, "arguments");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--verbose") == 0) {
            args->verbose = 1;
            continue;
        }
        if (strcmp(a, "--check") == 0) {
            args->check = true;
            continue;
        }
        if (strcmp(a, "--band-grow") == 0) {
            args->params.band_grow = 1;
            continue;
        }
        if (strcmp(a, "--cold") == 0) {
            args->options.warm = 0;
            continue;
        }
        if (a[0] != '-' || a[1] == '\0') {
            args->images[args->num_images++] = a;
            continue;
        }
        if (i + 1 >= argc) {
            cli_error("segment", GCUT_OK, "'%s' is not an option or lacks its value", a);
            return 2;
        }
        const char *v = argv[++i];
        bool ok = true;
        if (strcmp(a, "--seeds") == 0) {
            args->seeds = v;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            args->out = v;
        } else if (strcmp(a, "--overlay") == 0) {
            args->overlay = v;
        } else if (strcmp(a, "--truth") == 0) {
            args->truth = v;
        } else if (strcmp(a, "--write-grid") == 0) {
            args->write_grid = v;
        } else if (strcmp(a, "--solver") == 0) {
            args->options.solver = v;
        } else if (strcmp(a, "--threads") == 0) {
            if (!cli_parse_int("segment", a, v, 0, 65536, &args->options.threads))
                return 2;
        } else if (strcmp(a, "--lambda") == 0) {
            if (!cli_parse_double("segment", a, v, 0.0, 1e9, false, &args->params.lambda))
                return 2;
        } else if (strcmp(a, "--sigma") == 0) {
            /* 8-bit units: below 1e-3 every contrast weight underflows to 0 or overflows. */
            if (!cli_parse_double("segment", a, v, 1e-3, 1e6, true, &args->params.sigma))
                return 2;
        } else if (strcmp(a, "--scale") == 0) {
            if (!cli_parse_double("segment", a, v, 1e-9, 1e9, true, &args->params.scale))
                return 2;
        } else if (strcmp(a, "--connectivity") == 0) {
            ok = strcmp(v, "4") == 0 || strcmp(v, "8") == 0 || strcmp(v, "6") == 0 ||
                 strcmp(v, "26") == 0;
            args->params.connectivity = atoi(v);
        } else if (strcmp(a, "--components") == 0) {
            if (!cli_parse_int("segment", a, v, 1, 32, &args->params.gmm_components))
                return 2;
        } else if (strcmp(a, "--bins") == 0) {
            if (!cli_parse_int("segment", a, v, 2, 256, &args->params.histogram_bins))
                return 2;
        } else if (strcmp(a, "--model") == 0) {
            if (strcmp(v, "gmm") == 0)
                args->params.model = GCUT_MODEL_GMM;
            else if (strcmp(v, "hist") == 0 || strcmp(v, "histogram") == 0)
                args->params.model = GCUT_MODEL_HISTOGRAM;
            else if (strcmp(v, "auto") == 0)
                args->params.model = GCUT_MODEL_AUTO;
            else
                ok = false;
        } else if (strcmp(a, "--seed-encoding") == 0) {
            if (strcmp(v, "gcut") == 0)
                args->encoding = GCUT_SEEDS_GCUT;
            else if (strcmp(v, "grabcut") == 0)
                args->encoding = GCUT_SEEDS_GRABCUT;
            else if (strcmp(v, "color") == 0 || strcmp(v, "colour") == 0)
                args->encoding = GCUT_SEEDS_COLOR;
            else
                ok = false;
        } else if (strcmp(a, "--levels") == 0) {
            if (strcmp(v, "auto") == 0)
                args->params.levels = GCUT_SEG_LEVELS_AUTO;
            else
                ok = cli_parse_int("segment", a, v, 0, GCUT_SEG_MAX_LEVELS, &args->params.levels);
        } else if (strcmp(a, "--band") == 0) {
            ok = cli_parse_int("segment", a, v, 0, 1000000, &args->params.band);
        } else if (strcmp(a, "--band-solver") == 0) {
            args->params.band_solver = v;
        } else if (strcmp(a, "--rect") == 0) {
            args->has_rect = true;
            ok = parse_rect(v, &args->rect);
        } else if (strcmp(a, "--coarse-rounds") == 0) {
            if (strcmp(v, "auto") == 0)
                args->params.coarse_rounds = 0;
            else if (strcmp(v, "none") == 0)
                args->params.coarse_rounds = -1;
            else
                ok = cli_parse_int("segment", a, v, 1, GCUT_SEG_MAX_ITERATIONS,
                                   &args->params.coarse_rounds);
        } else if (strcmp(a, "--iterations") == 0) {
            ok = cli_parse_int("segment", a, v, 1, GCUT_SEG_MAX_ITERATIONS,
                               &args->params.iterations);
        } else if (strcmp(a, "--raw") == 0) {
            args->raw = true;
            if (!parse_raw(v, args))
                return 2;
        } else if (strcmp(a, "--batch") == 0) {
            args->batch = v;
        } else if (strcmp(a, "--jobs") == 0) {
            if (!cli_parse_int("segment", "--jobs", v, 1, 1024, &args->jobs))
                return 2;
        } else {
            cli_error("segment", GCUT_OK, "unknown option '%s' (see gcut segment --help)", a);
            return 2;
        }
        if (!ok) {
            cli_error("segment", GCUT_OK, "bad value '%s' for %s", v, a);
            return 2;
        }
    }
    if (args->params.levels != 0 && (args->has_rect || args->params.iterations > 1)) {
        cli_error("segment", GCUT_OK,
                  "--levels (a banded single cut) cannot be combined with --rect or "
                  "--iterations above 1");
        return 2;
    }
    if (args->batch != NULL) {
        if (args->num_images > 0 || args->seeds != NULL || args->out != NULL || args->raw ||
            args->overlay != NULL || args->truth != NULL || args->has_rect || args->check ||
            args->write_grid != NULL) {
            cli_error("segment", GCUT_OK,
                      "--batch takes its images, seeds and outputs from LIST: no IMAGE, --seeds, "
                      "-o, --raw, --overlay, --truth, --rect, --check or --write-grid beside it");
            return 2;
        }
        return -1;
    }
    if (args->num_images == 0 || (args->seeds == NULL && !args->has_rect) || args->out == NULL) {
        cli_error("segment", GCUT_OK, "IMAGE, --seeds or --rect, and -o are required (see --help)");
        return 2;
    }
    if (args->raw && args->num_images > 1) {
        cli_error("segment", GCUT_OK, "--raw takes one volume file, not %d", args->num_images);
        return 2;
    }
    args->volume = args->raw || args->num_images > 1;
    if (args->volume && args->has_rect) {
        cli_error("segment", GCUT_OK, "--rect is for 2D images, not volumes");
        return 2;
    }
    if (args->write_grid != NULL && args->has_rect) {
        cli_error("segment", GCUT_OK,
                  "--write-grid writes the energy of a cut from --seeds' models, not --rect's");
        return 2;
    }
    if (args->volume && args->overlay != NULL) {
        cli_error("segment", GCUT_OK, "--overlay is for 2D images, not volumes");
        return 2;
    }
    return check_paths(args);
}

/* Read a one-byte-per-voxel raw volume of n bytes. */
static uint8_t *read_raw_bytes(const char *path, int64_t n) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        cli_error("segment", GCUT_OK, "cannot open '%s'", path);
        return NULL;
    }
    uint8_t *bytes = cli_alloc((size_t)n + 1, "raw mask");
    size_t got = bytes ? fread(bytes, 1, (size_t)n + 1, f) : 0;
    fclose(f);
    if (bytes == NULL || got != (size_t)n) {
        cli_error("segment", GCUT_OK,
                  "'%s' holds %s bytes, expected %" PRId64 " (one byte per voxel)", path,
                  bytes == NULL     ? "too many"
                  : got > (size_t)n ? "more"
                                    : "fewer",
                  n);
        gcut_free(bytes);
        return NULL;
    }
    return bytes;
}

/* A mask (seeds or truth) the size of the image: a 2D picture; for volumes a raw file of one
 * byte per voxel or a comma-separated list of slice pictures. free_mask() releases it. */
typedef struct loaded_mask {
    gcut_image image;
    uint8_t *raw; /* the bytes of a raw file (cli_alloc), else NULL */
} loaded_mask;

static void free_mask(loaded_mask *mask) {
    if (mask->raw != NULL)
        gcut_free(mask->raw);
    else
        gcut_image_free(&mask->image);
    memset(mask, 0, sizeof *mask);
}

static bool load_mask(const segment_args *args, const char *path, const char *what,
                      const gcut_image *image, loaded_mask *mask) {
    memset(mask, 0, sizeof *mask);
    gcut_status st;
    if (args->volume && strchr(path, ',') == NULL) {
        mask->raw = read_raw_bytes(path, image->width * image->height * image->depth);
        if (mask->raw == NULL)
            return false;
        gcut_image raw = {image->width, image->height, image->depth, 1, 8, mask->raw};
        mask->image = raw;
        return true;
    }
    if (args->volume) {
        /* Split the list in a copy: the slices' paths point into it. */
        char *list = cli_alloc(strlen(path) + 1, "slice list");
        const char **paths = cli_alloc((strlen(path) / 2 + 2) * sizeof *paths, "slice list");
        int64_t count = 0;
        if (list == NULL || paths == NULL) {
            gcut_free(list), gcut_free(paths);
            cli_error("segment", GCUT_ERR_NOMEM, "slice list");
            return false;
        }
        strcpy(list, path);
        for (char *p = list; p != NULL;) {
            char *comma = strchr(p, ',');
            if (comma != NULL)
                *comma = '\0';
            paths[count++] = p;
            p = comma != NULL ? comma + 1 : NULL;
        }
        st = gcut_volume_read_slices(paths, count, &mask->image);
        gcut_free(list), gcut_free(paths);
    } else {
        st = gcut_image_read(path, &mask->image);
    }
    if (st != GCUT_OK) {
        cli_error("segment", st, "cannot read %s '%s'", what, path);
        return false;
    }
    const gcut_image *m = &mask->image;
    if (m->width != image->width || m->height != image->height || m->depth != image->depth) {
        if (image->depth > 1)
            cli_error("segment", GCUT_OK,
                      "%s '%s' is %" PRId64 "x%" PRId64 "x%" PRId64 " but the volume is %" PRId64
                      "x%" PRId64 "x%" PRId64,
                      what, path, m->width, m->height, m->depth, image->width, image->height,
                      image->depth);
        else
            cli_error("segment", GCUT_OK,
                      "%s '%s' is %" PRId64 "x%" PRId64 " but the image is %" PRId64 "x%" PRId64,
                      what, path, m->width, m->height, image->width, image->height);
        free_mask(mask);
        return false;
    }
    return true;
}

/* Write the 0/255 mask to args->out through a temporary file (cli_out); *temp_out (may be
 * NULL) gets that file's name for cli_out_commit_one. */
static int write_mask(const segment_args *args, const gcut_image *image, uint8_t *mask, int64_t n,
                      const char **temp_out) {
    for (int64_t i = 0; i < n; i++)
        mask[i] = mask[i] ? 255 : 0;
    if (args->volume) {
        FILE *f = cli_out_open("segment", args->out);
        if (f == NULL)
            return 1;
        fwrite(mask, 1, (size_t)n, f);
        return cli_out_close("segment", f, args->out);
    }
    gcut_image out = {image->width, image->height, 1, 1, 8, mask};
    const char *temp = cli_out_path("segment", args->out);
    if (temp == NULL)
        return 1;
    gcut_status st = gcut_image_write(temp, &out);
    if (st != GCUT_OK) {
        cli_error("segment", st, "cannot write '%s'", args->out);
        return 1;
    }
    if (temp_out != NULL)
        *temp_out = temp;
    return 0;
}

/* --write-grid: the energy of the first cut (gcut_seg_build_grid, the same capacities as the
 * solve's) as a grid file. Its time is outside the phases printed after it. @return 0 or 1. */
static int write_grid(const segment_args *args, const gcut_image *image, const uint8_t *seeds) {
    const double t0 = now_ms();
    gcut_grid *grid = NULL;
    gcut_status st = gcut_seg_build_grid(image, seeds, &args->params, &grid, NULL);
    if (st != GCUT_OK) {
        cli_error("segment", st, "cannot build the energy for --write-grid");
        return 1;
    }
    const char *temp = cli_out_path("segment", args->write_grid);
    if (temp != NULL && (st = gcut_grid_write(grid, temp)) != GCUT_OK)
        cli_error("segment", st, "cannot write the grid '%s'", args->write_grid);
    gcut_grid_free(grid);
    if (temp == NULL || st != GCUT_OK)
        return 1;
    printf("grid     %s: the first cut's energy (built and written in %.1f ms)\n", args->write_grid,
           now_ms() - t0);
    return 0;
}

/* Garrett & Saito 2009, Table 1: mislabelled, false-positive and false-negative pixels as
 * percentages of all pixels. mask is 0/255 here. */
static int score(const segment_args *args, const gcut_image *image, const uint8_t *mask,
                 int64_t n) {
    loaded_mask truth;
    if (!load_mask(args, args->truth, "truth", image, &truth))
        return 1;
    const gcut_image timg = truth.image;
    int64_t fp = 0, fn = 0;
    for (int64_t i = 0; i < n; i++) {
        bool t;
        if (timg.bit_depth == 8)
            t = ((const uint8_t *)timg.pixels)[i * timg.channels] != 0;
        else
            t = ((const uint16_t *)timg.pixels)[i * timg.channels] != 0;
        bool m = mask[i] != 0;
        fp += m && !t;
        fn += !m && t;
    }
    printf("error    %.3f%% (false positives %.3f%%, false negatives %.3f%%, of all %" PRId64
           " pixels)\n",
           100.0 * (double)(fp + fn) / (double)n, 100.0 * (double)fp / (double)n,
           100.0 * (double)fn / (double)n, n);
    free_mask(&truth);
    return 0;
}

/* One segmentation as the options ask: GrabCut rounds (gcut_grabcut: 5 with a box,
 * GCUT_SEG_SEED_ITERATIONS with seeds alone) unless --iterations 1 or a multilevel banded cut
 * (--levels, refused beside --rect and --iterations above 1 by parse_args), which make one
 * cut through gcut_segment. */
static gcut_status run_segmentation(const segment_args *args, const gcut_image *image,
                                    const uint8_t *seeds, uint8_t *mask, gcut_seg_report *report) {
    if (args->params.levels == 0 && (args->has_rect || args->params.iterations != 1))
        return gcut_grabcut(image, args->has_rect ? &args->rect : NULL, seeds, &args->params,
                            &args->options, mask, report);
    return gcut_segment(image, seeds, &args->params, &args->options, mask, report);
}

/* One line of a --batch list: read, segment, write; one line printed. @return 0 or 1. */
static int batch_item(const segment_args *shared, const char *list, int lineno,
                      const char *image_path, const char *seeds_path, const char *out_path,
                      int64_t *pixels) {
    const double t0 = now_ms();
    segment_args local = *shared; /* items may run at once: each writes its own out */
    segment_args *args = &local;
    /* An output naming an input of its line is refused before anything is read or written. */
    const cli_path inputs[2] = {{"image", image_path}, {"seed mask", seeds_path}};
    const cli_path outputs[1] = {{"mask", out_path}};
    if (cli_check_paths("segment", inputs, 2, outputs, 1) != 0) {
        cli_error("segment", GCUT_OK, "%s:%d: the line's output names one of its inputs", list,
                  lineno);
        return 1;
    }
    gcut_image image = {0};
    loaded_mask seed_mask = {{0}, NULL};
    uint8_t *seeds = NULL, *mask = NULL;
    int rc = 1;
    gcut_status st = gcut_image_read(image_path, &image);
    if (st != GCUT_OK) {
        cli_error("segment", st, "%s:%d: cannot read image '%s'", list, lineno, image_path);
        goto done;
    }
    const int64_t n = image.width * image.height * image.depth;
    if ((seeds = malloc((size_t)n)) == NULL || (mask = malloc((size_t)n)) == NULL) {
        cli_error("segment", GCUT_ERR_NOMEM, "%s:%d: buffers for %" PRId64 " pixels", list, lineno,
                  n);
        goto done;
    }
    if (!load_mask(args, seeds_path, "seed mask", &image, &seed_mask))
        goto done;
    if ((st = gcut_seeds_from_mask(&seed_mask.image, args->encoding, seeds)) != GCUT_OK) {
        cli_error("segment", st, "%s:%d: bad seed mask '%s'", list, lineno, seeds_path);
        goto done;
    }
    gcut_seg_report report;
    if ((st = run_segmentation(args, &image, seeds, mask, &report)) != GCUT_OK) {
        cli_error("segment", st, "%s:%d: segmentation of '%s' failed", list, lineno, image_path);
        goto done;
    }
    /* Each good line's mask is renamed into place at once: a later line's failure does not
     * take it back. */
    args->out = out_path;
    const char *temp = NULL;
    if (write_mask(args, &image, mask, n, &temp) != 0 ||
        (temp != NULL && cli_out_commit_one("segment", temp) != 0))
        goto done;
    printf("%s -> %s: %" PRId64 "x%" PRId64 ", %s flow %" PRId64 ", model %.1f ms, solve %.1f ms, "
           "total %.1f ms\n",
           image_path, out_path, image.width, image.height, report.stats.solver, report.stats.flow,
           report.model_ms, report.solve_ms, now_ms() - t0);
    *pixels = n;
    rc = 0;
done:
    gcut_image_free(&image);
    free_mask(&seed_mask);
    free(seeds);
    free(mask);
    return rc;
}

/* --batch LIST: every line in one process, --jobs of them at once. */
typedef struct batch_line {
    int lineno;
    char image[1024], seeds[1024], out[1024];
} batch_line;

static int run_batch(segment_args *args) {
    FILE *f = fopen(args->batch, "r");
    if (f == NULL) {
        cli_error("segment", GCUT_OK, "cannot open the batch list '%s'", args->batch);
        return 1;
    }
    const double t0 = now_ms();
    char text[4096];
    int lineno = 0, count = 0, room = 0, failed = 0;
    batch_line *lines = NULL;
    while (fgets(text, sizeof text, f) != NULL) {
        lineno++;
        const char *p = text;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        if (count == room) {
            room = room ? 2 * room : 64;
            batch_line *grown = realloc(lines, (size_t)room * sizeof *lines);
            if (grown == NULL) {
                cli_error("segment", GCUT_ERR_NOMEM, "batch list");
                free(lines);
                fclose(f);
                return 1;
            }
            lines = grown;
        }
        batch_line *l = &lines[count];
        char extra[2];
        l->lineno = lineno;
        if (sscanf(p, "%1023s %1023s %1023s %1s", l->image, l->seeds, l->out, extra) != 3) {
            cli_error("segment", GCUT_OK, "%s:%d: expected 'IMAGE SEEDS MASK_OUT'", args->batch,
                      lineno);
            failed++;
            continue;
        }
        count++;
    }
    fclose(f);
    /* A batch is for folders of photos: start the GPU while the first images are read. */
    device_start prestart = {0};
    device_start_begin(&prestart, &args->options, PRESTART_MIN_PIXELS);
    const int jobs = args->jobs > 1 ? args->jobs : 1;
    int done = 0;
    int64_t pixels = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(jobs) schedule(dynamic, 1) reduction(+ : done, failed, pixels)
#endif
    for (int k = 0; k < count; k++) {
        int64_t n = 0;
        if (batch_item(args, args->batch, lines[k].lineno, lines[k].image, lines[k].seeds,
                       lines[k].out, &n) != 0) {
            failed++;
        } else {
            done++;
            pixels += n;
        }
    }
    free(lines);
    device_start_end(&prestart);
    const double ms = now_ms() - t0;
    printf("batch    %d images segmented, %d failed, in %.1f ms with %d job%s: %.1f images/s, "
           "%.1f Mpixel/s\n",
           done, failed, ms, jobs, jobs > 1 ? "s" : "", ms > 0 ? 1e3 * done / ms : 0.0,
           ms > 0 ? (double)pixels / ms / 1e3 : 0.0);
    return failed > 0 || done == 0 ? 1 : 0;
}

/* The seed mask read and turned into codes on a second thread while the picture is decoded
 * (a 1920x1080 mask: ~10 ms on the H100 host, on the critical path when read after the
 * picture). Only the good case is kept: on any failure, or a size other than the picture's,
 * the command reads it again on its main thread, as before, for the same messages.
 * GCUT_SEGMENT_SEED_THREAD=0 turns it off (for before/after timings). */
typedef struct seed_read {
    pthread_t thread;
    bool running, ok;
    const char *path;
    gcut_seed_encoding encoding;
    int64_t width, height, depth;
    uint8_t *seeds; /* cli_alloc, width * height * depth codes */
} seed_read;

static void *seed_read_main(void *arg) {
    seed_read *s = arg;
    cli_timeline("seeds", "seed mask read begins (second thread)");
    gcut_image mask = {0};
    if (gcut_image_read(s->path, &mask) == GCUT_OK) {
        s->width = mask.width, s->height = mask.height, s->depth = mask.depth;
        const int64_t n = mask.width * mask.height * mask.depth;
        s->seeds = cli_alloc((size_t)n, "seeds");
        s->ok = s->seeds != NULL && gcut_seeds_from_mask(&mask, s->encoding, s->seeds) == GCUT_OK;
    }
    gcut_image_free(&mask);
    cli_timeline("seeds", s->ok ? "seed mask read" : "seed mask not read (main thread retries)");
    return NULL;
}

static void seed_read_begin(seed_read *s, const segment_args *args) {
    memset(s, 0, sizeof *s);
    const char *env = getenv("GCUT_SEGMENT_SEED_THREAD");
    if (args->volume || args->seeds == NULL || (env != NULL && strcmp(env, "0") == 0))
        return;
    s->path = args->seeds;
    s->encoding = args->encoding;
    s->running = pthread_create(&s->thread, NULL, seed_read_main, s) == 0;
}

/* Join the thread; @return its codes if they fit image (the caller frees them), else NULL. */
static uint8_t *seed_read_end(seed_read *s, const gcut_image *image) {
    if (!s->running)
        return NULL;
    pthread_join(s->thread, NULL);
    s->running = false;
    if (s->ok && image != NULL && s->width == image->width && s->height == image->height &&
        s->depth == image->depth)
        return s->seeds;
    gcut_free(s->seeds);
    s->seeds = NULL;
    return NULL;
}

/* The levels of a banded solve, coarsest first, and the energy of its result. */
static int print_levels(const gcut_seg_report *r) {
    double build = 0, solve = 0;
    for (int k = r->levels; k >= 0; k--) {
        const gcut_seg_level *l = &r->level[k];
        const int64_t n = l->width * l->height * l->depth;
        char size[96];
        if (l->depth > 1)
            snprintf(size, sizeof size, "%" PRId64 "x%" PRId64 "x%" PRId64, l->width, l->height,
                     l->depth);
        else
            snprintf(size, sizeof size, "%" PRId64 "x%" PRId64, l->width, l->height);
        build += l->build_ms, solve += l->solve_ms;
        if (k == r->levels)
            printf("level %d  %8.1f ms  %s in full (%s): %" PRId64 " nodes, build %.1f ms, "
                   "solve %.1f ms, flow %" PRId64 "\n",
                   k, l->build_ms + l->solve_ms, size, r->stats.solver, n, l->build_ms, l->solve_ms,
                   l->flow);
        else
            printf("level %d  %8.1f ms  %s band: %" PRId64 " nodes (%.2f%%), %" PRId64
                   " edges, %d round%s, build %.1f ms, solve %.1f ms (%s), flow %" PRId64 "\n",
                   k, l->build_ms + l->solve_ms, size, l->nodes,
                   100.0 * (double)l->nodes / (double)n, l->edges, l->rounds,
                   l->rounds == 1 ? "" : "s", l->build_ms, l->solve_ms,
                   l->solver[0] ? l->solver : "-", l->flow);
    }
    printf("solve    %8.1f ms  all levels (build %.1f ms, solve %.1f ms)\n", build + solve, build,
           solve);
    printf("energy   %" PRId64 " (of the result, capacity units; evaluated in %.1f ms)\n",
           r->energy, r->energy_ms);
    return 0;
}

/* --check: solve the full problem exactly and compare with the banded mask (1 = foreground). */
static int check_full(const segment_args *args, const gcut_image *image, const uint8_t *seeds,
                      const uint8_t *mask, const gcut_seg_report *banded) {
    const int64_t n = image->width * image->height * image->depth;
    uint8_t *full = cli_alloc((size_t)n, "--check mask");
    if (full == NULL) {
        cli_error("segment", GCUT_ERR_NOMEM, "--check buffer for %" PRId64 " pixels", n);
        return 1;
    }
    gcut_seg_params p = args->params;
    p.levels = 0;
    gcut_seg_report r;
    const double t0 = now_ms();
    gcut_status st = gcut_segment(image, seeds, &p, &args->options, full, &r);
    const double ms = now_ms() - t0;
    if (st != GCUT_OK) {
        gcut_free(full);
        cli_error("segment", st, "--check: the full solve failed");
        return 1;
    }
    int64_t differ = 0;
    for (int64_t i = 0; i < n; i++)
        differ += (mask[i] != 0) != (full[i] != 0);
    gcut_free(full);
    const int64_t gap = banded->energy - r.energy;
    printf("check    %8.1f ms  full solve (%s): flow %" PRId64 " = minimum energy; %" PRId64
           " pixels differ (%.4f%%), energy gap %" PRId64 " (%.4f%%)%s\n",
           ms, r.stats.solver, r.stats.flow, differ, 100.0 * (double)differ / (double)n, gap,
           r.energy > 0 ? 100.0 * (double)gap / (double)r.energy : 0.0,
           gap == 0 ? ": the banded result is a minimum" : "");
    if (gap < 0) {
        cli_error("segment", GCUT_ERR_INTERNAL,
                  "--check: banded energy %" PRId64 " below the exact minimum %" PRId64,
                  banded->energy, r.energy);
        return 1;
    }
    return 0;
}

#if defined(M_MMAP_THRESHOLD) && defined(MADV_HUGEPAGE)
/* Ask for transparent huge pages on the first `bytes` of the heap (where, with the thresholds
 * below, GrabCut's arrays are carved): one page fault per 2 MiB instead of per 4 KiB. On this
 * build machine (THP "madvise") a photo's page faults fell from about 5,500 to 400 and its
 * CPU time by 5-10% (docs/GRABCUT.md, "Third pass"); where THP is off this does nothing. */
static void heap_huge_pages(size_t bytes) {
    char *p = malloc(bytes); /* heap memory: the mmap threshold is above it */
    if (p == NULL)
        return;
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    const uintptr_t e = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    free(p); /* stays in the heap (the trim threshold is above it), untouched until used */
}
#endif

/* The CPU route's heap faulted in while the picture is read (docs/CPU-PARALLEL.md, "Tenth
 * pass"). The PNG read is one thread's work (~28 ms at 1080p on the H100 host) while the others
 * wait; every large array of the route after it (the energy's grid, the colour tables,
 * parallel-bk's arcs and nodes: ~180 bytes a pixel, 371 MB at 1080p) is then carved from the
 * main heap (the thresholds in cli_cmd_segment keep them there) and first touched by the step
 * that fills it, which pays the kernel's page faults (the clearing of ~370 MB) on its own time.
 * Instead: one block of that size is taken from the heap, advised to huge pages, touched by
 * the idle threads (one write per 4 KB page) while the main thread reads the picture, and given
 * back to the heap, untouched since by the kernel; the route's arrays then come from it without
 * a fault. Same memory, same results. On the H100 host at 1080p: the energy's build 12.2 ->
 * 7.7 ms and the solve -5 ms, but the read 30.0 -> 39.7 ms (the faulting threads slow the
 * decoding one): -6.7 ms wall in all (docs/PERFORMANCE.md, "One process, tenth pass").
 * GCUT_SEGMENT_PREFAULT=N: N bytes a pixel (0: off; default PREFAULT_BYTES_PER_PIXEL). */
#define PREFAULT_BYTES_PER_PIXEL 180
#define PREFAULT_MAX_THREADS 32
#define PREFAULT_DEFAULT_THREADS 4

typedef struct prefault_part {
    volatile char *begin;
    size_t bytes;
} prefault_part;

typedef struct heap_prefault {
    char *block;
    size_t bytes;
    int threads;
    pthread_t thread[PREFAULT_MAX_THREADS];
    prefault_part part[PREFAULT_MAX_THREADS];
} heap_prefault;

static void *prefault_run(void *arg) {
    prefault_part *p = arg;
    for (size_t at = 0; at < p->bytes; at += 4096)
        p->begin[at] = 0;
    return NULL;
}

/* Start faulting in pixels * GCUT_SEGMENT_PREFAULT bytes of heap on threads - 1 threads. */
static void heap_prefault_begin(heap_prefault *h, int64_t pixels, int threads) {
    memset(h, 0, sizeof *h);
#if defined(M_MMAP_THRESHOLD) && defined(MADV_HUGEPAGE)
    const char *env = getenv("GCUT_SEGMENT_PREFAULT");
    long per_pixel = PREFAULT_BYTES_PER_PIXEL;
    if (env != NULL && *env != '\0') {
        char *end;
        const long v = strtol(env, &end, 10);
        per_pixel = *end == '\0' && v >= 0 && v <= 4096 ? v : per_pixel;
    }
    /* GCUT_SEGMENT_PREFAULT_THREADS=N: N threads fault the block in. Default
     * PREFAULT_DEFAULT_THREADS (at most all but the reading one): on the 16-core H100 host,
     * 10 processes each in turn, 4 threads gave 246.2 ms median wall against 255.5 with 15 and
     * 254.9 with no fault-in (the read 37.7 against 41.1 and 31.2 ms; docs/PERFORMANCE.md,
     * "Lead's runs on the merged tree, ninth session"). */
    int helpers = threads - 1 < PREFAULT_DEFAULT_THREADS ? threads - 1 : PREFAULT_DEFAULT_THREADS;
    const char *count = getenv("GCUT_SEGMENT_PREFAULT_THREADS");
    if (count != NULL && *count != '\0') {
        char *end;
        const long v = strtol(count, &end, 10);
        helpers = *end == '\0' && v >= 0 && v <= PREFAULT_MAX_THREADS ? (int)v : helpers;
    }
    if (per_pixel == 0 || helpers < 1 || pixels <= 0 || pixels > ((int64_t)1 << 24))
        return;
    h->bytes = (size_t)pixels * (size_t)per_pixel;
    if ((h->block = malloc(h->bytes)) == NULL)
        return;
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t a = ((uintptr_t)h->block + huge - 1) & ~(huge - 1);
    const uintptr_t e = ((uintptr_t)h->block + h->bytes) & ~(huge - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    const size_t share = (h->bytes / (size_t)helpers + huge - 1) & ~(huge - 1);
    for (int t = 0; t < helpers; t++) {
        const size_t from = (size_t)t * share;
        if (from >= h->bytes)
            break;
        h->part[t].begin = h->block + from;
        h->part[t].bytes = h->bytes - from < share ? h->bytes - from : share;
        if (pthread_create(&h->thread[t], NULL, prefault_run, &h->part[t]) != 0)
            break;
        h->threads++;
    }
    cli_timeline("main", "heap fault-in begins (other threads)");
#else
    (void)pixels;
    (void)threads;
#endif
}

/* Wait for the threads, then give the block back to the heap. */
static void heap_prefault_end(heap_prefault *h) {
    for (int t = 0; t < h->threads; t++)
        pthread_join(h->thread[t], NULL);
    if (h->block != NULL) {
        free(h->block);
        cli_timeline("main", "heap fault-in joined, block back in the heap");
    }
    h->block = NULL;
    h->threads = 0;
}

int cli_cmd_segment(int argc, char **argv) {
#ifdef M_MMAP_THRESHOLD
    /* GrabCut's rounds and pyramid levels free large arrays and allocate others of about the
     * same size: kept in the heap instead of going back to the kernel each time, they are not
     * page-faulted in again (measured: 4-6 ms CPU less per photo, 5-7% of a lasso trimap's
     * file-to-mask time; docs/GRABCUT.md). The process ends when the masks are written. */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#ifdef MADV_HUGEPAGE
    heap_huge_pages((size_t)128 << 20);
#endif
#endif
    segment_args args;
    int rc = parse_args(argc, argv, &args);
    if (rc >= 0) {
        free(args.images);
        return rc;
    }
    if (args.batch != NULL) {
        rc = run_batch(&args);
        free(args.images);
        return rc;
    }
    const double t_start = now_ms();
    cli_timeline("main", "arguments parsed");
    /* auto's route (above), decided from the picture's header before CUDA could start. */
    const bool automatic = args.options.solver == NULL || strcmp(args.options.solver, "auto") == 0;
    const bool eligible = automatic && !args.volume && args.params.iterations == 1 &&
                          args.params.levels == 0 && !args.has_rect;
    const int route_threads = args.options.threads > 0 ? args.options.threads : online_cores();
    segment_route route =
        decide_route(eligible ? peek_pixels(args.images[0]) : -1, route_threads, eligible);
    bool route_known = !eligible || route.pixels >= 0;
    if (route.cpu) {
        args.options.solver = "parallel-bk";
        args.options.threads = route_threads;
    }
    if (eligible && route_known) {
        cli_timeline("main", route.cpu ? "route: CPU (parallel-bk on every thread), no CUDA"
                                       : "route: auto's GPU rule");
        if (args.verbose)
            fprintf(stderr, "gcut segment: auto: %s: %s\n",
                    route.cpu ? "CPU route, parallel-bk" : "auto's GPU rule kept", route.reason);
    }
    /* The CPU route's arrays faulted in on the idle threads while the picture is read. */
    heap_prefault prefault = {0};
    if (eligible && route_known && route.cpu)
        heap_prefault_begin(&prefault, route.pixels, route_threads);
    device_start prestart = {0};
    if (eligible && route_known)
        device_start_begin(&prestart, &args.options, route.pixels);
    else if (!eligible)
        device_start_begin(&prestart, &args.options,
                           !args.volume && file_bytes(args.images[0]) >= PRESTART_MIN_FILE_BYTES
                               ? PRESTART_MIN_PIXELS
                               : -1);
    seed_read seed_thread;
    seed_read_begin(&seed_thread, &args);
    gcut_image image = {0};
    loaded_mask seed_mask = {{0}, NULL};
    uint8_t *seeds = NULL, *mask = NULL;
    gcut_status st;
    const char *name = args.images[0];
    rc = 1;
    /* A volume can take a while at every stage: say what is happening. */
    if (args.volume)
        args.verbose = 1;
    if (args.raw) {
        fprintf(stderr, "gcut segment: reading volume %s\n", name);
        st = gcut_volume_read_raw(name, args.raw_dims[0], args.raw_dims[1], args.raw_dims[2],
                                  args.raw_channels, args.raw_bits, &image);
    } else if (args.volume) {
        fprintf(stderr, "gcut segment: reading %d slices %s ... %s\n", args.num_images, name,
                args.images[args.num_images - 1]);
        st = gcut_volume_read_slices(args.images, args.num_images, &image);
    } else {
        cli_timeline("main", "image read begins");
        st = gcut_image_read(name, &image);
    }
    if (st != GCUT_OK) {
        cli_error("segment", st, "cannot read image '%s'", name);
        goto done;
    }
    cli_timeline("main", "image read");
    heap_prefault_end(&prefault);
    const int64_t n = image.width * image.height * image.depth;
    if (!route_known) { /* a format whose header was not read: decide now */
        route = decide_route(n, route_threads, eligible);
        route_known = true;
        if (route.cpu) {
            args.options.solver = "parallel-bk";
            args.options.threads = route_threads;
        }
        if (args.verbose)
            fprintf(stderr, "gcut segment: auto: %s: %s\n",
                    route.cpu ? "CPU route, parallel-bk" : "auto's GPU rule kept", route.reason);
    }
    device_start_begin(&prestart, &args.options, n);
    seeds = seed_read_end(&seed_thread, &image);
    if ((seeds == NULL && (seeds = cli_alloc((size_t)n, "seeds")) == NULL) ||
        (mask = cli_alloc((size_t)n, "mask")) == NULL) {
        cli_error("segment", GCUT_ERR_NOMEM, "buffers for %" PRId64 " pixels", n);
        goto done;
    }
    if (args.seeds == NULL) {
        memset(seeds, GCUT_SEED_UNKNOWN, (size_t)n);
    } else if (seed_thread.seeds != NULL) {
        /* read on the second thread, alongside the picture */
    } else {
        if (!load_mask(&args, args.seeds, "seed mask", &image, &seed_mask))
            goto done;
        st = gcut_seeds_from_mask(&seed_mask.image, args.encoding, seeds);
        if (st != GCUT_OK) {
            cli_error("segment", st, "bad seed mask '%s'", args.seeds);
            goto done;
        }
    }
    free_mask(&seed_mask); /* its codes are in seeds: one volume-sized buffer less */
    cli_timeline("main", "seeds read");
    const double t_read = now_ms();
    char size[96];
    if (image.depth > 1)
        snprintf(size, sizeof size, "%" PRId64 "x%" PRId64 "x%" PRId64, image.width, image.height,
                 image.depth);
    else
        snprintf(size, sizeof size, "%" PRId64 "x%" PRId64, image.width, image.height);
    printf("image    %s%s: %s, %d channel%s, %d bit (read %.1f ms)\n", name,
           args.num_images > 1 ? " ..." : "", size, image.channels, image.channels > 1 ? "s" : "",
           image.bit_depth, t_read - t_start);
    if (args.verbose) {
        fprintf(stderr, "gcut segment: building the energy and solving %" PRId64 " %s\n", n,
                image.depth > 1 ? "voxels" : "pixels");
        args.options.verbose = 1;
    }
    if (args.write_grid != NULL && write_grid(&args, &image, seeds) != 0)
        goto done;
    gcut_seg_report report;
    cli_timeline("main", "segmentation begins (models, energy, solve)");
    const double t_cut = now_ms();
    st = run_segmentation(&args, &image, seeds, mask, &report);
    if (st != GCUT_OK) {
        cli_error("segment", st, "segmentation failed");
        goto done;
    }
    cli_timeline("main", "segmentation done (mask in memory)");
    if (prestart.running) {
        /* The report's phases on the timeline: models, then the energy, then the solve. */
        char event[160];
        snprintf(event, sizeof event,
                 "  of which models %.1f ms, energy %.1f ms, solve %.1f ms (setup %.1f, "
                 "max-flow %.1f), from %.1f ms to %.1f ms after main's timer",
                 report.model_ms, report.build_ms, report.solve_ms, report.stats.build_ms,
                 report.stats.solve_ms, t_cut - t_start, now_ms() - t_start);
        cli_timeline("main", event);
    }
    if (args.has_rect)
        printf("box      %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 " (x,y,w,h)\n", args.rect.x,
               args.rect.y, args.rect.width, args.rect.height);
    if (report.iterations > 1 || report.coarse_iterations > 0 || args.has_rect) {
        if (report.coarse_iterations > 0) {
            printf("coarse   %d rounds on smaller copies (half size, or less first)\n",
                   report.coarse_iterations);
            if (args.verbose)
                for (int t = 0; t < report.coarse_iterations; t++)
                    printf("coarse %-2d energy %.6f nats (on its copy's energy)\n", t + 1,
                           report.coarse_energy[t]);
        }
        printf("rounds   %d%s%s\n", report.iterations,
               report.coarse_iterations > 0 ? " at full size" : "",
               report.converged ? " (converged)" : " (limit reached)");
        if (args.verbose)
            for (int t = 0; t < report.iterations; t++)
                printf("round %-3d energy %.6f nats, %" PRId64 " labels changed\n", t + 1,
                       report.round_energy[t], report.round_changed[t]);
    }
    printf("seeds    %" PRId64 " foreground, %" PRId64 " background\n", report.seeds_foreground,
           report.seeds_background);
    printf("model    %8.1f ms  %s\n", report.model_ms,
           report.model == GCUT_MODEL_GMM ? "gmm" : "histogram");
    printf("build    %8.1f ms  %d-connected, lambda %g, sigma %.2f, scale %.4f\n", report.build_ms,
           report.connectivity, report.lambda, report.sigma, report.scale);
    if (report.levels == 0)
        printf("solve    %8.1f ms  %s (setup %.1f ms, max-flow %.1f ms), flow %" PRId64 "\n",
               report.solve_ms, report.stats.solver, report.stats.build_ms, report.stats.solve_ms,
               report.stats.flow);
    else if (print_levels(&report) != 0)
        goto done;
    printf("cut      %8.1f ms  construction + solve\n", report.build_ms + report.solve_ms);
    if (device_start_end(&prestart) && prestart.status == GCUT_OK &&
        strcmp(report.stats.solver, "cuda-grid") == 0)
        printf("device   %8.1f ms  CUDA start-up on a second thread (%.1f to %.1f ms after "
               "start)\n",
               prestart.end_ms - prestart.begin_ms, prestart.begin_ms - t_start,
               prestart.end_ms - t_start);
    if (args.check && check_full(&args, &image, seeds, mask, &report) != 0)
        goto done;
    const int64_t fg = report.foreground_pixels;
    if (args.verbose)
        fprintf(stderr, "gcut segment: writing %s\n", args.out);
    const double t_write = now_ms();
    cli_timeline("main", "mask write begins");
    if (write_mask(&args, &image, mask, n, NULL) != 0)
        goto done;
    cli_timeline("main", "mask written (temporary file)");
    if (args.overlay != NULL) {
        gcut_image ov = {0};
        const char *temp = cli_out_path("segment", args.overlay);
        if (temp == NULL)
            goto done;
        st = gcut_overlay(&image, mask, &ov);
        if (st == GCUT_OK)
            st = gcut_image_write(temp, &ov);
        gcut_image_free(&ov);
        if (st != GCUT_OK) {
            cli_error("segment", st, "cannot write the overlay '%s'", args.overlay);
            goto done;
        }
    }
    printf("write    %8.1f ms  mask%s\n", now_ms() - t_write, args.overlay ? " and overlay" : "");
    printf("total    %8.1f ms  file to mask%s\n", now_ms() - t_start,
           args.overlay ? " and overlay" : "");
    printf("mask     %s: %" PRId64 " foreground pixels (%.2f%%)\n", args.out, fg,
           100.0 * (double)fg / (double)n);
    if (args.truth != NULL && score(&args, &image, mask, n) != 0)
        goto done;
    rc = 0;
done:
    heap_prefault_end(&prefault); /* the picture failed: the threads are still joined */
    if (seed_thread.running)      /* the picture failed: the thread's codes are not used */
        gcut_free(seed_read_end(&seed_thread, NULL));
    device_start_end(&prestart);
    cli_timeline("main", "segment command done");
    gcut_image_free(&image);
    free_mask(&seed_mask);
    free(args.images);
    gcut_free(seeds);
    gcut_free(mask);
    return rc;
}
