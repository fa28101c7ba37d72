/* cmd_video.c - `gcut video`: online video segmentation (Garrett & Saito 2009): frames from a
 * video file or numbered images, the first frame's mask or seeds, a 0/255 mask per frame, an
 * overlay video or frames, progress, per-stage times and, given ground truth, IoU and error. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out) {
    fprintf(
        out,
        "usage: gcut video INPUT --init MASK -o MASK_DIR [--overlay OUT] [--truth DIR] "
        "[options]\n\n"
        "Segment every frame of INPUT, each from the one before: the previous mask gives the\n"
        "colour models (with a forgetting factor), hard seeds deeper than a band around its\n"
        "boundary, and the band (its width follows the measured motion) is cut exactly.\n"
        "INPUT is a folder of numbered frames (PNG, JPEG, PNM), a .txt list of frame paths, or\n"
        "a video file (%s).\n"
        "Writes MASK_DIR/mask_NNNNNN.png (0/255; .pgm with --mask-format pgm) for frame NNNNNN\n"
        "(from 0). Progress and frames\n"
        "per second go to stderr, a per-stage timing summary at the end.\n\n"
        "options:\n"
        "  --init MASK           the first frame's segmentation (0/255 or 0/1 PNG; nonzero =\n"
        "                        foreground); with --seed-encoding, seeds instead, and the\n"
        "                        first frame is segmented from them as `gcut segment` does\n"
        "  --seed-encoding E     gcut, grabcut or color (see `gcut segment --help`)\n"
        "  -o MASK_DIR           folder for the masks (made if missing)\n"
        "  --mask-format F       png (default) or pgm (binary PNM: no image library needed)\n"
        "  --overlay OUT         an overlay for a person to watch: a video if OUT ends in .mp4,\n"
        "                        .avi or .mkv (needs FFmpeg), else a folder of PNG frames\n"
        "  --truth DIR           ground-truth masks (folder or list; nonzero = foreground):\n"
        "                        IoU and error rate per frame (--verbose) and their means\n"
        "  --solver NAME         auto (default: cuda-grid on the whole frame where a CUDA\n"
        "                        device is present and the frame is large, else bk on the\n"
        "                        band), bk, cpu-pr, cuda-grid (the whole frame on the GPU,\n"
        "                        one solver context for the video)\n"
        "  --threads N           CPU threads of the colour model and seed passes and of\n"
        "                        cpu-pr (0 = all cores)\n"
        "  --lambda L            smoothness weight (default 50)\n"
        "  --sigma S             contrast scale (default: estimated per frame)\n"
        "  --connectivity C      4 or 8 (default 8)\n"
        "  --bins B              colour histogram bins per channel (default 32)\n"
        "  --forget F            weight the colour model keeps from older frames, [0, 1)\n"
        "                        (default 0.5)\n"
        "  --band-min B          band half-width with no motion, pixels (default 3)\n"
        "  --band-motion K       band = band-min + K * measured boundary motion (default 1)\n"
        "  --band-max B          largest band half-width (default 64)\n"
        "  --no-colour-check     pixels beyond the band are always hard seeds (default: not\n"
        "                        where their colour now favours the other label)\n"
        "  --colour-reach R      the colour check applies within R bands of the boundary\n"
        "                        (default 4; 0 = the whole frame)\n"
        "  --warm                with --full-frame: keep one graph across frames and re-solve\n"
        "                        it warm with bk (changed capacities only)\n"
        "  --verify              check every frame's cut certificate (cut == flow)\n"
        "  --full-frame          cut the whole frame with hard seeds instead of the band's\n"
        "                        graph (same result; for comparison)\n"
        "  --readers N           threads decoding frame files at once (0 = one per 4 cores,\n"
        "                        at most 4; on the GPU path 4/7 of the cores but 2, at most\n"
        "                        8; a video file is decoded by one)\n"
        "  --writers N           threads writing masks at once (0 = as --readers; on the GPU\n"
        "                        path the rest of the cores but 2, at most 8; one with an\n"
        "                        overlay video or a truth video)\n"
        "  --queue N             frames in flight between the decode, segment and write\n"
        "                        threads (default 4; 0 = no threads, one frame at a time)\n"
        "  --fps F               overlay video frame rate (default: the input's, else 25)\n"
        "  --verbose             one line per frame\n"
        "  --quiet               no progress line\n"
        "  --help                this text\n\n"
        "exit status: 0 segmented, 1 bad input or failure (masks written so far are valid),\n"
        "2 usage error\n",
        gcut_video_file_support()
            ? "decoded by gcut's FFmpeg module"
            : "not available: gcut's FFmpeg module libgcut_ffmpeg.so was not found or not loaded");
}

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

typedef struct video_ctx {
    const char *mask_dir, *overlay;
    const char *mask_format;   /* png or pgm */
    gcut_video_writer *writer; /* overlay video, or NULL for a folder of frames */
    gcut_video_source *truth;
    int64_t truth_count;      /* frames of a --truth folder or list; -1: a video, read in order */
    bool truth_ended;         /* --truth ran out (said once) */
    int bufs;                 /* buffers below: one per frame slot of the run (frame % bufs) */
    gcut_image *truth_frames; /* truth frame buffers, reused */
    gcut_image *mask_images;  /* 0/255 buffers, reused */
    pthread_mutex_t lock;     /* sums, progress and messages, with several writer threads */
    int64_t count;            /* frames in the input, or -1 */
    double t_start, last_progress;
    bool verbose, quiet;
    double iou_sum, error_sum;
    int64_t scored;
    double score_ms;
    int64_t done_frames; /* frames through the sink */
    char solver[32];     /* the solver of the last propagated frame */
} video_ctx;

static bool has_video_extension(const char *path) {
    const char *dot = strrchr(path, '.');
    return dot != NULL && (strcmp(dot, ".mp4") == 0 || strcmp(dot, ".avi") == 0 ||
                           strcmp(dot, ".mkv") == 0 || strcmp(dot, ".MP4") == 0);
}

/* Make dir (one level) if missing and check that files can be created in it. */
static int ensure_dir(const char *dir, const char *what) {
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        if (mkdir(dir, 0777) != 0) {
            cli_error("video", GCUT_OK, "cannot make the %s folder %s: %s", what, dir,
                      strerror(errno));
            return 1;
        }
    } else if (!S_ISDIR(sb.st_mode)) {
        cli_error("video", GCUT_OK, "%s %s exists and is not a folder", what, dir);
        return 1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        cli_error("video", GCUT_OK, "cannot write in the %s folder %s: %s", what, dir,
                  strerror(errno));
        return 1;
    }
    return 0;
}

/* Called for every frame, from one writer thread or (--writers) several at once for different
 * frames: each frame uses the buffers of its slot (frame % bufs: the run never has two frames
 * of one slot at the sink), and what is shared is updated under the lock. */
static gcut_status sink(void *arg, int64_t index, const gcut_image *frame, const uint8_t *mask,
                        const gcut_video_report *r) {
    video_ctx *c = arg;
    const int64_t n = frame->width * frame->height;
    const int b = (int)(index % c->bufs);
    gcut_image *mask_image = &c->mask_images[b];
    uint8_t *m = mask_image->pixels;
    for (int64_t i = 0; i < n; i++)
        m[i] = mask[i] ? 255 : 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/mask_%06" PRId64 ".%s", c->mask_dir, index, c->mask_format);
    gcut_status st = gcut_image_write(path, mask_image);
    if (st != GCUT_OK)
        return st;
    if (c->overlay != NULL) {
        gcut_image over;
        if ((st = gcut_overlay(frame, mask, &over)) != GCUT_OK)
            return st;
        if (c->writer != NULL) {
            st = gcut_video_writer_write(c->writer, &over); /* one writer thread: in order */
        } else {
            snprintf(path, sizeof path, "%s/overlay_%06" PRId64 ".png", c->overlay, index);
            st = gcut_image_write(path, &over);
        }
        gcut_image_free(&over);
        if (st != GCUT_OK)
            return st;
    }
    double iou = -1, err = -1, score_ms = 0;
    if (c->truth != NULL) {
        const double t0 = now_ms();
        int done = 0;
        gcut_image *tf = &c->truth_frames[b];
        if (c->truth_count >= 0) {
            done = index >= c->truth_count;
            st = done ? GCUT_OK : gcut_video_source_read_frame(c->truth, index, tf);
        } else {
            st = gcut_video_source_read(c->truth, tf, &done);
        }
        if (st != GCUT_OK)
            return st;
        if (!done) {
            const uint8_t *t = tf->pixels;
            int64_t inter = 0, uni = 0, wrong = 0;
            for (int64_t i = 0; i < n; i++) {
                const bool a = mask[i] != 0, e = t[i * 3] != 0;
                inter += a && e;
                uni += a || e;
                wrong += a != e;
            }
            iou = uni > 0 ? (double)inter / (double)uni : 1.0;
            err = (double)wrong / (double)n;
        }
        score_ms = now_ms() - t0;
        pthread_mutex_lock(&c->lock);
        if (done && !c->truth_ended) {
            fprintf(stderr, "gcut video: --truth has no frame %" PRId64 "; scoring stops\n", index);
            c->truth_ended = true;
        }
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_lock(&c->lock);
    if (index > 0)
        snprintf(c->solver, sizeof c->solver, "%s", r->solver);
    if (iou >= 0) {
        c->iou_sum += iou;
        c->error_sum += err;
        c->scored++;
    }
    c->score_ms += score_ms;
    c->done_frames++;
    const double now = now_ms();
    if (c->verbose) {
        fprintf(stderr,
                "frame %6" PRId64 ": band %5.1f, %9" PRId64 " nodes, model %6.2f ms, build %6.2f "
                "ms, solve %7.2f ms, %s, %" PRId64 " fg",
                index, r->band, r->graph_nodes, r->model_ms, r->build_ms, r->solve_ms, r->solver,
                r->foreground_pixels);
        if (iou >= 0)
            fprintf(stderr, ", IoU %.4f, error %.3f%%", iou, 100 * err);
        fputc('\n', stderr);
    } else if (!c->quiet && (now - c->last_progress > 500 || c->done_frames == c->count)) {
        c->last_progress = now;
        const double fps = (double)c->done_frames / ((now - c->t_start) / 1e3);
        if (c->count > 0)
            fprintf(stderr, "\rframe %" PRId64 "/%" PRId64 "  %.1f fps", c->done_frames, c->count,
                    fps);
        else
            fprintf(stderr, "\rframe %" PRId64 "  %.1f fps", c->done_frames, fps);
        fflush(stderr);
    }
    pthread_mutex_unlock(&c->lock);
    return GCUT_OK;
}

static bool parse_double(const char *text, double *out) {
    char *end;
    *out = strtod(text, &end);
    return end != text && *end == '\0';
}

static bool parse_int(const char *text, int *out) {
    char *end;
    long v = strtol(text, &end, 10);
    *out = (int)v;
    return end != text && *end == '\0' && v >= -1000000 && v <= 1000000;
}

int cli_cmd_video(int argc, char **argv) {
    const char *input = NULL, *init = NULL, *out = NULL, *overlay = NULL, *truth = NULL;
    const char *encoding_name = NULL, *mask_format = "png";
    gcut_video_params params;
    gcut_video_params_init(&params);
    gcut_options options;
    gcut_options_init(&options);
    options.solver = "auto";
    int queue = 4, conn = 0, readers = 0, writers = 0;
    double fps_out = 0;
    bool verbose = false, quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool more = i + 1 < argc;
        double d;
        int k;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--init") == 0 && more) {
            init = argv[++i];
        } else if (strcmp(a, "--seed-encoding") == 0 && more) {
            encoding_name = argv[++i];
        } else if (strcmp(a, "-o") == 0 && more) {
            out = argv[++i];
        } else if ((strcmp(a, "--readers") == 0 || strcmp(a, "--writers") == 0) && more) {
            const char *v = argv[++i];
            char *end;
            const long x = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || x < 0 || x > 16) {
                cli_error("video", GCUT_OK, "%s '%s': 0 (auto) to 16 threads", a, v);
                return 2;
            }
            *(strcmp(a, "--readers") == 0 ? &readers : &writers) = (int)x;
        } else if (strcmp(a, "--mask-format") == 0 && more) {
            mask_format = argv[++i];
            if (strcmp(mask_format, "png") != 0 && strcmp(mask_format, "pgm") != 0) {
                cli_error("video", GCUT_OK, "--mask-format '%s': png or pgm", mask_format);
                return 2;
            }
        } else if (strcmp(a, "--overlay") == 0 && more) {
            overlay = argv[++i];
        } else if (strcmp(a, "--truth") == 0 && more) {
            truth = argv[++i];
        } else if (strcmp(a, "--solver") == 0 && more) {
            options.solver = argv[++i];
        } else if (strcmp(a, "--threads") == 0 && more && parse_int(argv[i + 1], &k) && k >= 0) {
            options.threads = k;
            i++;
        } else if (strcmp(a, "--lambda") == 0 && more && parse_double(argv[i + 1], &d)) {
            params.seg.lambda = d;
            i++;
        } else if (strcmp(a, "--sigma") == 0 && more && parse_double(argv[i + 1], &d)) {
            params.seg.sigma = d;
            i++;
        } else if (strcmp(a, "--connectivity") == 0 && more && parse_int(argv[i + 1], &conn)) {
            params.seg.connectivity = conn;
            i++;
        } else if (strcmp(a, "--bins") == 0 && more && parse_int(argv[i + 1], &k)) {
            params.seg.histogram_bins = k;
            i++;
        } else if (strcmp(a, "--forget") == 0 && more && parse_double(argv[i + 1], &d)) {
            params.forget = d;
            i++;
        } else if (strcmp(a, "--band-min") == 0 && more && parse_double(argv[i + 1], &d)) {
            params.band_min = d;
            i++;
        } else if (strcmp(a, "--band-motion") == 0 && more && parse_double(argv[i + 1], &d)) {
            params.band_motion = d;
            i++;
        } else if (strcmp(a, "--band-max") == 0 && more && parse_double(argv[i + 1], &d)) {
            params.band_max = d;
            i++;
        } else if (strcmp(a, "--warm") == 0) {
            params.warm = 1;
        } else if (strcmp(a, "--verify") == 0) {
            params.verify = 1;
        } else if (strcmp(a, "--colour-reach") == 0 && more && parse_double(argv[i + 1], &d)) {
            params.colour_reach = d;
            i++;
        } else if (strcmp(a, "--no-colour-check") == 0) {
            params.check_colour = 0;
        } else if (strcmp(a, "--full-frame") == 0) {
            params.restrict_band = 0;
        } else if (strcmp(a, "--queue") == 0 && more && parse_int(argv[i + 1], &queue)) {
            i++;
        } else if (strcmp(a, "--fps") == 0 && more && parse_double(argv[i + 1], &fps_out) &&
                   fps_out > 0) {
            i++;
        } else if (strcmp(a, "--verbose") == 0) {
            verbose = true;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            cli_error("video", GCUT_OK, "unknown option or missing/bad value: '%s'", a);
            return 2;
        } else if (input == NULL) {
            input = a;
        } else {
            cli_error("video", GCUT_OK, "unexpected argument '%s' (one INPUT only)", a);
            return 2;
        }
    }
    if (input == NULL || init == NULL || out == NULL) {
        cli_error("video", GCUT_OK, "INPUT, --init MASK and -o MASK_DIR are required");
        usage(stderr);
        return 2;
    }
    /* An output folder that is an input folder (the frames', the truth's) would mix masks into
     * files a later run reads; cli_check_paths passes folders by, so they are compared here. */
    const cli_path inputs[] = {{"INPUT", input}, {"--init", init}, {"--truth", truth}};
    const cli_path outputs[] = {{"-o", out}, {"--overlay", overlay}};
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < 3 + o; k++) {
            const cli_path *other = k < 3 ? &inputs[k] : &outputs[k - 3];
            if (outputs[o].path != NULL && other->path != NULL &&
                cli_same_file(outputs[o].path, other->path)) {
                cli_error("video", GCUT_OK, "%s '%s' is the %s '%s' (nothing written)",
                          outputs[o].what, outputs[o].path, other->what, other->path);
                return 2;
            }
        }
    if (queue != 0 && (queue < 2 || queue > 64)) {
        cli_error("video", GCUT_OK, "--queue %d: give 0 (no threads) or 2 to 64", queue);
        return 2;
    }
    gcut_seed_encoding encoding = GCUT_SEEDS_GCUT;
    if (encoding_name != NULL) {
        if (strcmp(encoding_name, "gcut") == 0)
            encoding = GCUT_SEEDS_GCUT;
        else if (strcmp(encoding_name, "grabcut") == 0)
            encoding = GCUT_SEEDS_GRABCUT;
        else if (strcmp(encoding_name, "color") == 0 || strcmp(encoding_name, "colour") == 0)
            encoding = GCUT_SEEDS_COLOR;
        else {
            cli_error("video", GCUT_OK, "--seed-encoding '%s': use gcut, grabcut or color",
                      encoding_name);
            return 2;
        }
    }
    int rc = 1;
    gcut_video_source *source = NULL;
    gcut_video *video = NULL;
    uint8_t *init_codes = NULL;
    gcut_image init_image = {0};
    video_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    gcut_status st = gcut_video_source_open(input, &source);
    if (st != GCUT_OK) {
        cli_error("video", st, "cannot read %s", input);
        goto done;
    }
    int64_t w, h, count;
    double fps_in;
    gcut_video_source_info(source, &w, &h, &count, &fps_in);
    if ((st = gcut_image_read(init, &init_image)) != GCUT_OK) {
        cli_error("video", st, "cannot read --init %s", init);
        goto done;
    }
    if (init_image.width != w || init_image.height != h) {
        cli_error("video", GCUT_OK,
                  "--init %s is %" PRId64 "x%" PRId64 " but the frames are %" PRId64 "x%" PRId64,
                  init, init_image.width, init_image.height, w, h);
        goto done;
    }
    if ((init_codes = cli_alloc((size_t)(w * h), "init mask")) == NULL) {
        cli_error("video", GCUT_ERR_NOMEM, "init mask");
        goto done;
    }
    if (encoding_name != NULL) {
        if ((st = gcut_seeds_from_mask(&init_image, encoding, init_codes)) != GCUT_OK) {
            cli_error("video", st, "--init %s", init);
            goto done;
        }
    } else {
        const int ch = init_image.channels;
        for (int64_t i = 0; i < w * h; i++)
            init_codes[i] = init_image.bit_depth == 8
                                ? ((const uint8_t *)init_image.pixels)[i * ch] != 0
                                : ((const uint16_t *)init_image.pixels)[i * ch] != 0;
    }
    if (ensure_dir(out, "mask") != 0)
        goto done;
    if (overlay != NULL) {
        if (has_video_extension(overlay)) {
            st = gcut_video_writer_open(overlay, w, h, fps_out > 0 ? fps_out : fps_in, &ctx.writer);
            if (st != GCUT_OK) {
                cli_error("video", st, "cannot write the overlay video %s", overlay);
                goto done;
            }
        } else if (ensure_dir(overlay, "overlay") != 0) {
            goto done;
        }
    }
    if (truth != NULL) {
        if ((st = gcut_video_source_open(truth, &ctx.truth)) != GCUT_OK) {
            cli_error("video", st, "cannot read --truth %s", truth);
            goto done;
        }
        int64_t tw, th;
        gcut_video_source_info(ctx.truth, &tw, &th, NULL, NULL);
        if (tw != w || th != h) {
            cli_error("video", GCUT_OK,
                      "--truth frames are %" PRId64 "x%" PRId64 " but the video is %" PRId64
                      "x%" PRId64,
                      tw, th, w, h);
            goto done;
        }
    }
    if ((st = gcut_video_create(w, h, &params, &options, &video)) != GCUT_OK) {
        cli_error("video", st, "bad parameters");
        goto done;
    }
    /* Decode and write threads: by default one each per 4 cores, at most 4, where frames can
     * be read by index (a folder or list) and written in any order (no overlay video, no
     * truth video); on the GPU path, where the segmenting thread needs about one core, the
     * file codecs get the rest: 4 readers for 3 writers (JPEG decoding costs about 4/3 of PNG
     * encoding a mask, docs/PERFORMANCE.md), cores - 2 in all, at most 8 each (8 + 6 on 16
     * cores: 1080p JPEG in, PNG out 85.6 -> 126.3 fps against 4 + 4 on the H100 host). The
     * ring holds a frame for each and one being segmented. */
    {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        const int per4 = cores >= 8 ? (int)(cores / 4 < 4 ? cores / 4 : 4) : 1;
        int gpu_readers = per4, gpu_writers = per4;
        if (cores >= 8) {
            const int spare = (int)cores - 2;
            gpu_readers = spare * 4 / 7 < 8 ? spare * 4 / 7 : 8;
            gpu_writers = spare - gpu_readers < 8 ? spare - gpu_readers : 8;
        }
        const bool gpu = strcmp(gcut_video_solver(video), "cuda-grid") == 0;
        ctx.truth_count = ctx.truth != NULL ? gcut_video_source_frames(ctx.truth) : -1;
        if (readers == 0)
            readers = gcut_video_source_frames(source) >= 0 ? (gpu ? gpu_readers : per4) : 1;
        if (writers == 0)
            writers = gpu ? gpu_writers : per4;
        if (ctx.writer != NULL || (ctx.truth != NULL && ctx.truth_count < 0))
            writers = 1; /* an overlay video or a truth video goes in order */
        if (queue == 0)
            readers = writers = 1;
        ctx.bufs = queue == 0 ? 1 : queue < readers + writers + 1 ? readers + writers + 1 : queue;
    }
    pthread_mutex_init(&ctx.lock, NULL);
    ctx.mask_images = calloc((size_t)ctx.bufs, sizeof *ctx.mask_images);
    ctx.truth_frames = calloc((size_t)ctx.bufs, sizeof *ctx.truth_frames);
    if (ctx.mask_images == NULL || ctx.truth_frames == NULL) {
        cli_error("video", GCUT_ERR_NOMEM, "mask buffers");
        goto done;
    }
    for (int b = 0; b < ctx.bufs; b++)
        if ((st = gcut_image_alloc(&ctx.mask_images[b], w, h, 1, 1, 8)) != GCUT_OK) {
            cli_error("video", st, "mask buffer");
            goto done;
        }
    ctx.mask_dir = out;
    ctx.mask_format = mask_format;
    ctx.overlay = overlay;
    ctx.count = count;
    ctx.verbose = verbose;
    ctx.quiet = quiet;
    ctx.t_start = now_ms();
    gcut_video_run_report rep;
    st =
        gcut_video_run_threads(video, source, init_codes,
                               encoding_name != NULL ? GCUT_VIDEO_INIT_SEEDS : GCUT_VIDEO_INIT_MASK,
                               queue, readers, writers, sink, &ctx, &rep);
    if (!quiet && !verbose)
        fputc('\n', stderr);
    if (ctx.writer != NULL) {
        gcut_status cst = gcut_video_writer_close(ctx.writer);
        ctx.writer = NULL;
        if (st == GCUT_OK && cst != GCUT_OK)
            st = cst;
    }
    if (st != GCUT_OK) {
        cli_error("video", st, "stopped after %" PRId64 " frames (their masks are written)",
                  rep.frames);
        goto done;
    }
    const double f = rep.frames > 0 ? (double)rep.frames : 1.0;
    printf("frames %" PRId64 " (%" PRId64 "x%" PRId64 "), %.1f fps end to end (%.1f ms wall), "
           "queue %d, readers %d, writers %d, solver %s, %s\n",
           rep.frames, w, h, rep.frames / (rep.wall_ms / 1e3), rep.wall_ms, queue, readers, writers,
           ctx.solver[0] != '\0' ? ctx.solver : options.solver,
           params.restrict_band && strcmp(ctx.solver, "cuda-grid") != 0 ? "band graph"
                                                                        : "full frame");
    printf("per frame: decode %.2f ms, model %.2f ms, build %.2f ms, solve %.2f ms, write %.2f "
           "ms%s\n",
           rep.decode_ms / f, rep.model_ms / f, rep.build_ms / f, rep.solve_ms / f,
           (rep.write_ms - ctx.score_ms) / f,
           queue > 0 ? " (decode and write run concurrently)" : "");
    if (ctx.scored > 0)
        printf("truth: mean IoU %.4f, mean error %.3f%% over %" PRId64 " frames\n",
               ctx.iou_sum / (double)ctx.scored, 100 * ctx.error_sum / (double)ctx.scored,
               ctx.scored);
    rc = 0;
done:
    gcut_video_writer_close(ctx.writer);
    gcut_video_source_close(ctx.truth);
    for (int b = 0; b < ctx.bufs; b++) {
        if (ctx.mask_images != NULL)
            gcut_image_free(&ctx.mask_images[b]);
        if (ctx.truth_frames != NULL)
            gcut_image_free(&ctx.truth_frames[b]);
    }
    free(ctx.mask_images);
    free(ctx.truth_frames);
    if (ctx.bufs > 0)
        pthread_mutex_destroy(&ctx.lock);
    gcut_video_free(video);
    gcut_video_source_close(source);
    gcut_image_free(&init_image);
    gcut_free(init_codes);
    return rc;
}
