/* pipeline.c - decode, segment and write concurrently (Garrett & Saito 2009, 4: acquisition,
 * graph construction and the cut overlap): a reader thread fills a bounded ring of frame slots,
 * the calling thread segments them in order, a writer thread hands each result to the sink.
 * Every slot's buffers are made before the first frame; nothing is allocated per frame here. */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { SLOT_FREE, SLOT_DECODED, SLOT_END, SLOT_SEGMENTED, SLOT_FAILED };

typedef struct slot {
    gcut_image frame;
    uint8_t *mask;
    gcut_video_report report;
    int state;
} slot;

typedef struct run {
    gcut_video *video;
    gcut_video_source *source;
    gcut_video_sink_fn sink;
    void *sink_ctx;
    slot *slots;
    int queue;
    int64_t n;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool stop; /* a stage failed: the others finish what they can and leave */
    gcut_status reader_st, writer_st;
    char reader_msg[512], writer_msg[512];
    int64_t written;
    double decode_ms, write_ms;
} run;

static void set_state(run *r, slot *s, int state) {
    pthread_mutex_lock(&r->lock);
    s->state = state;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

/* Wait until s is in one of the states of the bit set want (or the run stops): @return the
 * state, or -1 when the run stopped first. */
static int wait_state(run *r, slot *s, unsigned want) {
    pthread_mutex_lock(&r->lock);
    while (!((want >> s->state) & 1u) && !r->stop)
        pthread_cond_wait(&r->changed, &r->lock);
    int st = ((want >> s->state) & 1u) ? s->state : -1;
    pthread_mutex_unlock(&r->lock);
    return st;
}

#define BIT(state) (1u << (state))

static void stop_run(run *r) {
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

static void *reader_main(void *arg) {
    run *r = arg;
    for (int64_t k = 0;; k++) {
        slot *s = &r->slots[k % r->queue];
        if (wait_state(r, s, BIT(SLOT_FREE)) < 0)
            return NULL;
        int done = 0;
        const double t0 = gcut__now_ms();
        gcut_status st = gcut_video_source_read(r->source, &s->frame, &done);
        r->decode_ms += gcut__now_ms() - t0;
        if (st != GCUT_OK) {
            r->reader_st = st;
            snprintf(r->reader_msg, sizeof r->reader_msg, "%s", gcut_last_error());
            set_state(r, s, SLOT_FAILED);
            return NULL;
        }
        set_state(r, s, done ? SLOT_END : SLOT_DECODED);
        if (done)
            return NULL;
    }
}

static void *writer_main(void *arg) {
    run *r = arg;
    for (int64_t k = 0;; k++) {
        slot *s = &r->slots[k % r->queue];
        if (wait_state(r, s, BIT(SLOT_SEGMENTED) | BIT(SLOT_END)) != SLOT_SEGMENTED)
            return NULL;
        const double t0 = gcut__now_ms();
        gcut_status st =
            r->sink != NULL ? r->sink(r->sink_ctx, k, &s->frame, s->mask, &s->report) : GCUT_OK;
        r->write_ms += gcut__now_ms() - t0;
        if (st != GCUT_OK) {
            r->writer_st = st;
            snprintf(r->writer_msg, sizeof r->writer_msg, "%s", gcut_last_error());
            stop_run(r);
            return NULL;
        }
        r->written = k + 1;
        set_state(r, s, SLOT_FREE);
    }
}

static void add_report(gcut_video_run_report *t, const gcut_video_report *f) {
    t->model_ms += f->model_ms;
    t->build_ms += f->build_ms;
    t->solve_ms += f->solve_ms;
}

/* Frame by frame, no threads: decode, segment, write in turn. */
static gcut_status run_serial(run *r, const uint8_t *init, gcut_video_init kind,
                              gcut_video_run_report *t) {
    slot *s = &r->slots[0];
    for (int64_t k = 0;; k++) {
        int done = 0;
        double t0 = gcut__now_ms();
        gcut_status st = gcut_video_source_read(r->source, &s->frame, &done);
        t->decode_ms += gcut__now_ms() - t0;
        if (st != GCUT_OK)
            return st;
        if (done)
            return GCUT_OK;
        if ((st = gcut_video_push_frame(r->video, &s->frame, k == 0 ? init : NULL, kind,
                                        &s->report)) != GCUT_OK ||
            (st = gcut_video_get_mask(r->video, s->mask)) != GCUT_OK)
            return st;
        add_report(t, &s->report);
        t0 = gcut__now_ms();
        st = r->sink != NULL ? r->sink(r->sink_ctx, k, &s->frame, s->mask, &s->report) : GCUT_OK;
        t->write_ms += gcut__now_ms() - t0;
        if (st != GCUT_OK)
            return st;
        t->frames = k + 1;
    }
}

gcut_status gcut_video_run(gcut_video *video, gcut_video_source *source, const uint8_t *init,
                           gcut_video_init init_kind, int queue, gcut_video_sink_fn sink,
                           void *sink_ctx, gcut_video_run_report *report) {
    if (video == NULL || source == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_run: video or source is NULL");
    if (queue < 0 || queue == 1 || queue > 64)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_video_run: queue %d (0 = no threads, or 2 to 64 frames)", queue);
    gcut_video_run_report local;
    gcut_video_run_report *t = report != NULL ? report : &local;
    memset(t, 0, sizeof *t);
    const double t_start = gcut__now_ms();
    int64_t w, h;
    gcut_video_source_info(source, &w, &h, NULL, NULL);
    run r;
    memset(&r, 0, sizeof r);
    r.video = video;
    r.source = source;
    r.sink = sink;
    r.sink_ctx = sink_ctx;
    r.queue = queue == 0 ? 1 : queue;
    r.n = w * h;
    gcut_status st = GCUT_OK;
    r.slots = gcut__calloc((size_t)r.queue, sizeof *r.slots, "video frame ring");
    if (r.slots == NULL)
        return GCUT_ERR_NOMEM;
    for (int k = 0; k < r.queue && st == GCUT_OK; k++) {
        st = gcut_image_alloc(&r.slots[k].frame, w, h, 1, 3, 8);
        if (st == GCUT_OK && (r.slots[k].mask = gcut__malloc((size_t)r.n, "video mask")) == NULL)
            st = GCUT_ERR_NOMEM;
    }
    if (st == GCUT_OK && queue == 0) {
        st = run_serial(&r, init, init_kind, t);
    } else if (st == GCUT_OK) {
        pthread_mutex_init(&r.lock, NULL);
        pthread_cond_init(&r.changed, NULL);
        pthread_t reader, writer;
        bool have_reader = pthread_create(&reader, NULL, reader_main, &r) == 0;
        bool have_writer = have_reader && pthread_create(&writer, NULL, writer_main, &r) == 0;
        if (!have_writer) {
            st = gcut__fail(GCUT_ERR_INTERNAL, "gcut_video_run: cannot start a thread");
            stop_run(&r);
        }
        for (int64_t k = 0; have_writer; k++) {
            slot *s = &r.slots[k % r.queue];
            int state = wait_state(&r, s, BIT(SLOT_DECODED) | BIT(SLOT_END) | BIT(SLOT_FAILED));
            if (state < 0) {
                pthread_mutex_lock(&r.lock);
                state = s->state;
                pthread_mutex_unlock(&r.lock);
                if (state != SLOT_FAILED)
                    break; /* the writer stopped the run */
            }
            if (state == SLOT_END) {
                /* Tell the writer too: it waits on this slot for SEGMENTED or END. */
                set_state(&r, s, SLOT_END);
                break;
            }
            if (state == SLOT_FAILED) {
                st = r.reader_st;
                gcut__fail(st, "%s", r.reader_msg);
                set_state(&r, s, SLOT_END); /* the writer finishes the frames before it */
                break;
            }
            st = gcut_video_push_frame(video, &s->frame, k == 0 ? init : NULL, init_kind,
                                       &s->report);
            if (st == GCUT_OK)
                st = gcut_video_get_mask(video, s->mask);
            if (st != GCUT_OK) {
                char msg[512];
                snprintf(msg, sizeof msg, "%s", gcut_last_error());
                set_state(&r, s, SLOT_END);
                gcut__fail(st, "%s", msg);
                break;
            }
            add_report(t, &s->report);
            set_state(&r, s, SLOT_SEGMENTED);
        }
        if (have_writer)
            pthread_join(writer, NULL);
        /* The reader may wait for a slot the writer will never free. */
        stop_run(&r);
        if (have_reader)
            pthread_join(reader, NULL);
        pthread_cond_destroy(&r.changed);
        pthread_mutex_destroy(&r.lock);
        if (r.writer_st != GCUT_OK && (st == GCUT_OK || st == r.writer_st)) {
            st = r.writer_st;
            gcut__fail(st, "%s", r.writer_msg);
        }
        t->frames = r.written;
        t->decode_ms = r.decode_ms;
        t->write_ms = r.write_ms;
    }
    for (int k = 0; k < r.queue; k++) {
        gcut_image_free(&r.slots[k].frame);
        gcut__free(r.slots[k].mask);
    }
    gcut__free(r.slots);
    t->wall_ms = gcut__now_ms() - t_start;
    return st;
}
