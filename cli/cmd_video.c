/* cmd_video.c - `gcut video`: online video segmentation (Garrett & Saito 2009): frames from a
 * video file or numbered images, the first frame's mask or seeds, a 0/255 mask per frame, an
 * overlay video or frames, progress, per-stage times and, given ground truth, IoU and error. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
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
        "  --queue N             frames in flight between the decode, segment and write\n"
        "                        threads (default 4; 0 = no threads, one frame at a time)\n"
        "  --fps F               overlay video frame rate (default: the input's, else 25)\n"
        "  --verbose             one line per frame\n"
        "  --quiet               no progress line\n"
        "  --help                this text\n\n"
        "exit status: 0 segmented, 1 bad input or failure (masks written so far are valid),\n"
        "2 usage error\n",
        gcut_video_file_support() ? "decoded with FFmpeg's libraries"
                                  : "not in this build: FFmpeg's libraries were not found");
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
    gcut_image truth_frame;
    gcut_image mask_image; /* 0/255 buffer, reused */
    int64_t count;         /* frames in the input, or -1 */
    double t_start, last_progress;
    bool verbose, quiet;
    double iou_sum, error_sum;
    int64_t scored;
    double score_ms;
    char solver[32]; /* the solver of the last propagated frame */
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

static gcut_status sink(void *arg, int64_t index, const gcut_image *frame, const uint8_t *mask,
                        const gcut_video_report *r) {
    video_ctx *c = arg;
    const int64_t n = frame->width * frame->height;
    if (index > 0)
        snprintf(c->solver, sizeof c->solver, "%s", r->solver);
    uint8_t *m = c->mask_image.pixels;
    for (int64_t i = 0; i < n; i++)
        m[i] = mask[i] ? 255 : 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/mask_%06" PRId64 ".%s", c->mask_dir, index, c->mask_format);
    gcut_status st = gcut_image_write(path, &c->mask_image);
    if (st != GCUT_OK)
        return st;
    if (c->overlay != NULL) {
        gcut_image over;
        if ((st = gcut_overlay(frame, mask, &over)) != GCUT_OK)
            return st;
        if (c->writer != NULL) {
            st = gcut_video_writer_write(c->writer, &over);
        } else {
            snprintf(path, sizeof path, "%s/overlay_%06" PRId64 ".png", c->overlay, index);
            st = gcut_image_write(path, &over);
        }
        gcut_image_free(&over);
        if (st != GCUT_OK)
            return st;
    }
    double iou = -1, err = -1;
    if (c->truth != NULL) {
        const double t0 = now_ms();
        int done = 0;
        st = gcut_video_source_read(c->truth, &c->truth_frame, &done);
        if (st != GCUT_OK)
            return st;
        if (done) {
            fprintf(stderr, "gcut video: --truth has no frame %" PRId64 "; scoring stops\n", index);
            gcut_video_source_close(c->truth);
            c->truth = NULL;
        } else {
            const uint8_t *t = c->truth_frame.pixels;
            int64_t inter = 0, uni = 0, wrong = 0;
            for (int64_t i = 0; i < n; i++) {
                const bool a = mask[i] != 0, b = t[i * 3] != 0;
                inter += a && b;
                uni += a || b;
                wrong += a != b;
            }
            iou = uni > 0 ? (double)inter / (double)uni : 1.0;
            err = (double)wrong / (double)n;
            c->iou_sum += iou;
            c->error_sum += err;
            c->scored++;
        }
        c->score_ms += now_ms() - t0;
    }
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
    } else if (!c->quiet && (now - c->last_progress > 500 || index + 1 == c->count)) {
        c->last_progress = now;
        const double fps = (double)(index + 1) / ((now - c->t_start) / 1e3);
        if (c->count > 0)
            fprintf(stderr, "\rframe %" PRId64 "/%" PRId64 "  %.1f fps", index + 1, c->count, fps);
        else
            fprintf(stderr, "\rframe %" PRId64 "  %.1f fps", index + 1, fps);
        fflush(stderr);
    }
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
    int queue = 4, conn = 0;
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
    if ((st = gcut_image_alloc(&ctx.mask_image, w, h, 1, 1, 8)) != GCUT_OK) {
        cli_error("video", st, "mask buffer");
        goto done;
    }
    if ((st = gcut_video_create(w, h, &params, &options, &video)) != GCUT_OK) {
        cli_error("video", st, "bad parameters");
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
    st = gcut_video_run(video, source, init_codes,
                        encoding_name != NULL ? GCUT_VIDEO_INIT_SEEDS : GCUT_VIDEO_INIT_MASK, queue,
                        sink, &ctx, &rep);
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
           "queue %d, solver %s, %s\n",
           rep.frames, w, h, rep.frames / (rep.wall_ms / 1e3), rep.wall_ms, queue,
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
    gcut_image_free(&ctx.truth_frame);
    gcut_image_free(&ctx.mask_image);
    gcut_video_free(video);
    gcut_video_source_close(source);
    gcut_image_free(&init_image);
    gcut_free(init_codes);
    return rc;
}
