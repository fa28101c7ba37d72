/* ffmpeg_io.c - gcut's FFmpeg module (libgcut_ffmpeg.so): video files decoded and overlay
 * videos encoded with libavformat, libavcodec and libswscale, for `gcut video` (Garrett & Saito
 * 2009, 4: frames are acquired while earlier ones are cut). Loaded by src/video/ffmpeg_load.c. */
#include "ffmpeg_module.h"

#include "gcut.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define GCUT__MODULE_EXPORT __attribute__((visibility("default")))
#define GCUT__MODULE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GCUT__MODULE_EXPORT
#define GCUT__MODULE_PRINTF(f, a)
#endif

static int fail(int status, char *err, size_t errlen, const char *fmt, ...)
    GCUT__MODULE_PRINTF(4, 5);
static int fail(int status, char *err, size_t errlen, const char *fmt, ...) {
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

static int av_fail(int status, char *err, size_t errlen, const char *path, const char *what,
                   int code) {
    char buf[256];
    av_strerror(code, buf, sizeof buf);
    return fail(status, err, errlen, "%s: %s: %s", path, what, buf);
}

/* ---- decoding ---- */

typedef struct source {
    char *name;
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVFrame *frame;
    AVPacket *packet;
    struct SwsContext *sws;
    int stream;
    int64_t width, height, next;
    bool draining, ended;
} source;

static void source_close(void *p) {
    source *s = p;
    if (s == NULL)
        return;
    sws_freeContext(s->sws);
    av_frame_free(&s->frame);
    av_packet_free(&s->packet);
    avcodec_free_context(&s->dec);
    avformat_close_input(&s->fmt);
    free(s->name);
    free(s);
}

static int open_decoder(source *s, const char *path, int64_t *count, double *fps, char *err,
                        size_t errlen) {
    av_log_set_level(AV_LOG_FATAL);
    int code = avformat_open_input(&s->fmt, path, NULL, NULL);
    if (code < 0)
        return av_fail(GCUT_ERR_PARSE, err, errlen, path, "not a readable video", code);
    if ((code = avformat_find_stream_info(s->fmt, NULL)) < 0)
        return av_fail(GCUT_ERR_PARSE, err, errlen, path, "no stream information", code);
    const AVCodec *codec = NULL;
    s->stream = av_find_best_stream(s->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (s->stream < 0 || codec == NULL)
        return fail(GCUT_ERR_PARSE, err, errlen, "%s: no video stream this build can decode", path);
    AVStream *stream = s->fmt->streams[s->stream];
    if ((s->dec = avcodec_alloc_context3(codec)) == NULL)
        return fail(GCUT_ERR_NOMEM, err, errlen, "%s: decoder context", path);
    if ((code = avcodec_parameters_to_context(s->dec, stream->codecpar)) < 0 ||
        (code = avcodec_open2(s->dec, codec, NULL)) < 0)
        return av_fail(GCUT_ERR_PARSE, err, errlen, path, "cannot open the decoder", code);
    s->frame = av_frame_alloc();
    s->packet = av_packet_alloc();
    if (s->frame == NULL || s->packet == NULL)
        return fail(GCUT_ERR_NOMEM, err, errlen, "%s: decoder frame", path);
    s->width = s->dec->width;
    s->height = s->dec->height;
    if (s->width < 1 || s->height < 1)
        return fail(GCUT_ERR_PARSE, err, errlen, "%s: video has no frame size", path);
    *count = stream->nb_frames > 0 ? stream->nb_frames : -1;
    AVRational r = stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
    *fps = r.num > 0 && r.den > 0 ? av_q2d(r) : 25.0;
    return GCUT_OK;
}

static int source_open(const char *path, void **out, int64_t *width, int64_t *height,
                       int64_t *count, double *fps, char *err, size_t errlen) {
    *out = NULL;
    source *s = calloc(1, sizeof *s);
    if (s == NULL || (s->name = malloc(strlen(path) + 1)) == NULL) {
        free(s);
        return fail(GCUT_ERR_NOMEM, err, errlen, "%s: video source", path);
    }
    memcpy(s->name, path, strlen(path) + 1);
    int st = open_decoder(s, path, count, fps, err, errlen);
    if (st != GCUT_OK) {
        source_close(s);
        return st;
    }
    *width = s->width;
    *height = s->height;
    *out = s;
    return GCUT_OK;
}

/* Next decoded frame into s->frame: 1 got one, 0 end of stream, < 0 error (message set). */
static int decode_next(source *s, char *err, size_t errlen) {
    for (;;) {
        int code = avcodec_receive_frame(s->dec, s->frame);
        if (code == 0)
            return 1;
        if (code == AVERROR_EOF)
            return 0;
        if (code != AVERROR(EAGAIN)) {
            av_fail(GCUT_ERR_PARSE, err, errlen, s->name, "corrupt video data", code);
            return -1;
        }
        if (s->draining)
            return 0;
        code = av_read_frame(s->fmt, s->packet);
        if (code == AVERROR_EOF) {
            s->draining = true;
            avcodec_send_packet(s->dec, NULL);
            continue;
        }
        if (code < 0) {
            av_fail(GCUT_ERR_PARSE, err, errlen, s->name, "cannot read the video (truncated?)",
                    code);
            return -1;
        }
        if (s->packet->stream_index == s->stream) {
            code = avcodec_send_packet(s->dec, s->packet);
            if (code < 0 && code != AVERROR(EAGAIN) && code != AVERROR_INVALIDDATA) {
                av_packet_unref(s->packet);
                av_fail(GCUT_ERR_PARSE, err, errlen, s->name, "corrupt video data", code);
                return -1;
            }
        }
        av_packet_unref(s->packet);
    }
}

static int source_read(void *p, uint8_t *rgb, int *done, char *err, size_t errlen) {
    source *s = p;
    *done = 0;
    if (s->ended) {
        *done = 1;
        return GCUT_OK;
    }
    int got = decode_next(s, err, errlen);
    if (got < 0)
        return GCUT_ERR_PARSE;
    if (got == 0) {
        s->ended = true;
        *done = 1;
        return GCUT_OK;
    }
    if (s->frame->width != s->width || s->frame->height != s->height)
        return fail(GCUT_ERR_PARSE, err, errlen,
                    "%s: frame %lld is %dx%d but the first frame is %lldx%lld", s->name,
                    (long long)s->next, s->frame->width, s->frame->height, (long long)s->width,
                    (long long)s->height);
    s->sws = sws_getCachedContext(s->sws, s->frame->width, s->frame->height,
                                  (enum AVPixelFormat)s->frame->format, (int)s->width,
                                  (int)s->height, AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL, NULL);
    if (s->sws == NULL)
        return fail(GCUT_ERR_UNSUPPORTED, err, errlen, "%s: cannot convert pixel format %d to RGB",
                    s->name, s->frame->format);
    uint8_t *planes[4] = {rgb, NULL, NULL, NULL};
    int strides[4] = {(int)s->width * 3, 0, 0, 0};
    sws_scale(s->sws, (const uint8_t *const *)s->frame->data, s->frame->linesize, 0,
              s->frame->height, planes, strides);
    av_frame_unref(s->frame);
    s->next++;
    return GCUT_OK;
}

/* ---- encoding ---- */

typedef struct writer {
    int64_t width, height;
    char *path;
    AVFormatContext *fmt;
    AVCodecContext *enc;
    AVStream *stream;
    AVFrame *frame;
    AVPacket *packet;
    struct SwsContext *sws;
    int64_t pts;
    bool header;
} writer;

static int drain(writer *w, char *err, size_t errlen) {
    for (;;) {
        int code = avcodec_receive_packet(w->enc, w->packet);
        if (code == AVERROR(EAGAIN) || code == AVERROR_EOF)
            return GCUT_OK;
        if (code < 0)
            return av_fail(GCUT_ERR_IO, err, errlen, w->path, "encoding", code);
        /* One frame per tick: a packet without a duration makes the MP4 muxer's edit list
         * end before the last frame. */
        if (w->packet->duration == 0)
            w->packet->duration = 1;
        av_packet_rescale_ts(w->packet, w->enc->time_base, w->stream->time_base);
        w->packet->stream_index = w->stream->index;
        code = av_interleaved_write_frame(w->fmt, w->packet);
        if (code < 0)
            return av_fail(GCUT_ERR_IO, err, errlen, w->path, "writing", code);
    }
}

static int writer_close(void *p, char *err, size_t errlen) {
    writer *w = p;
    if (w == NULL)
        return GCUT_OK;
    int st = GCUT_OK;
    if (w->header) {
        if (avcodec_send_frame(w->enc, NULL) >= 0)
            st = drain(w, err, errlen);
        int code = av_write_trailer(w->fmt);
        if (st == GCUT_OK && code < 0)
            st = av_fail(GCUT_ERR_IO, err, errlen, w->path, "writing the trailer", code);
    }
    if (w->fmt != NULL && !(w->fmt->oformat->flags & AVFMT_NOFILE) && w->fmt->pb != NULL)
        avio_closep(&w->fmt->pb);
    sws_freeContext(w->sws);
    av_frame_free(&w->frame);
    av_packet_free(&w->packet);
    avcodec_free_context(&w->enc);
    avformat_free_context(w->fmt);
    free(w->path);
    free(w);
    return st;
}

static int open_encoder(writer *w, const char *path, double fps, char *err, size_t errlen) {
    int code;
    av_log_set_level(AV_LOG_FATAL);
    if ((code = avformat_alloc_output_context2(&w->fmt, NULL, NULL, path)) < 0 || w->fmt == NULL)
        return av_fail(GCUT_ERR_INVALID_ARG, err, errlen, path,
                       "no container for this file name (use .mp4, .avi or .mkv)", code);
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (codec == NULL)
        return fail(GCUT_ERR_UNSUPPORTED, err, errlen, "%s: FFmpeg has no MPEG-4 encoder", path);
    w->stream = avformat_new_stream(w->fmt, NULL);
    w->enc = avcodec_alloc_context3(codec);
    w->frame = av_frame_alloc();
    w->packet = av_packet_alloc();
    if (w->stream == NULL || w->enc == NULL || w->frame == NULL || w->packet == NULL)
        return fail(GCUT_ERR_NOMEM, err, errlen, "%s: encoder", path);
    /* MPEG-4 Part 2 with 4:2:0 chroma needs even sides: an odd last row/column is dropped. */
    w->enc->width = (int)(w->width & ~1);
    w->enc->height = (int)(w->height & ~1);
    const int rate = fps > 0 && fps < 1000 ? (int)(fps * 1000 + 0.5) : 25000;
    w->enc->time_base = (AVRational){1000, rate};
    w->enc->framerate = (AVRational){rate, 1000};
    w->enc->pix_fmt = AV_PIX_FMT_YUV420P;
    w->enc->gop_size = 12;
    w->enc->bit_rate = (int64_t)(w->width * w->height) * 4;
    w->enc->qmax = 8;
    if (w->fmt->oformat->flags & AVFMT_GLOBALHEADER)
        w->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if ((code = avcodec_open2(w->enc, codec, NULL)) < 0)
        return av_fail(GCUT_ERR_UNSUPPORTED, err, errlen, path, "cannot open the encoder", code);
    if ((code = avcodec_parameters_from_context(w->stream->codecpar, w->enc)) < 0)
        return av_fail(GCUT_ERR_INTERNAL, err, errlen, path, "encoder parameters", code);
    w->stream->time_base = w->enc->time_base;
    w->frame->format = AV_PIX_FMT_YUV420P;
    w->frame->width = w->enc->width;
    w->frame->height = w->enc->height;
    if ((code = av_frame_get_buffer(w->frame, 0)) < 0)
        return av_fail(GCUT_ERR_NOMEM, err, errlen, path, "frame buffer", code);
    w->sws = sws_getContext(w->enc->width, w->enc->height, AV_PIX_FMT_RGB24, w->enc->width,
                            w->enc->height, AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
    if (w->sws == NULL)
        return fail(GCUT_ERR_UNSUPPORTED, err, errlen, "%s: colour conversion", path);
    if (!(w->fmt->oformat->flags & AVFMT_NOFILE) &&
        (code = avio_open(&w->fmt->pb, path, AVIO_FLAG_WRITE)) < 0)
        return av_fail(GCUT_ERR_IO, err, errlen, path, "cannot create", code);
    if ((code = avformat_write_header(w->fmt, NULL)) < 0)
        return av_fail(GCUT_ERR_IO, err, errlen, path, "cannot write the header", code);
    w->header = true;
    return GCUT_OK;
}

static int writer_open(const char *path, int64_t width, int64_t height, double fps, void **out,
                       char *err, size_t errlen) {
    *out = NULL;
    writer *w = calloc(1, sizeof *w);
    if (w == NULL || (w->path = malloc(strlen(path) + 1)) == NULL) {
        free(w);
        return fail(GCUT_ERR_NOMEM, err, errlen, "%s: video writer", path);
    }
    memcpy(w->path, path, strlen(path) + 1);
    w->width = width;
    w->height = height;
    int st = open_encoder(w, path, fps, err, errlen);
    if (st != GCUT_OK) {
        writer_close(w, NULL, 0);
        remove(path);
        return st;
    }
    *out = w;
    return GCUT_OK;
}

static int writer_write(void *p, const uint8_t *rgb, char *err, size_t errlen) {
    writer *w = p;
    int code = av_frame_make_writable(w->frame);
    if (code < 0)
        return av_fail(GCUT_ERR_NOMEM, err, errlen, w->path, "frame buffer", code);
    const uint8_t *planes[4] = {rgb, NULL, NULL, NULL};
    const int strides[4] = {(int)w->width * 3, 0, 0, 0};
    sws_scale(w->sws, planes, strides, 0, w->enc->height, w->frame->data, w->frame->linesize);
    w->frame->pts = w->pts++;
    if ((code = avcodec_send_frame(w->enc, w->frame)) < 0)
        return av_fail(GCUT_ERR_IO, err, errlen, w->path, "encoding", code);
    return drain(w, err, errlen);
}

static const gcut__ffmpeg_api api = {
    GCUT__FFMPEG_ABI, source_open,  source_read,  source_close,
    writer_open,      writer_write, writer_close,
};

/* The module's entry point, found by name (GCUT__FFMPEG_ENTRY) after dlopen. */
GCUT__MODULE_EXPORT const gcut__ffmpeg_api *gcut_ffmpeg_module_api(void);
GCUT__MODULE_EXPORT const gcut__ffmpeg_api *gcut_ffmpeg_module_api(void) {
    return &api;
}
