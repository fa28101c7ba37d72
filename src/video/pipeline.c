/* pipeline.c - decode, segment and write concurrently (Garrett & Saito 2009, 4: acquisition,
 * graph construction and the cut overlap): reader threads fill a bounded ring of frame slots
 * (one for a video file; several decode the frames of a folder or list at once), the calling
 * thread segments them in order, writer threads hand each result to the sink (several call it
 * at once for different frames when asked). Every slot's buffers are made before the first
 * frame; nothing is allocated per frame here. */
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
    int64_t index; /* the frame in the slot (or the frame whose end / failure it reports) */
    int64_t next;  /* the frame that may take the slot when it is free */
    gcut_status st;
    char msg[512];
} slot;

typedef struct run {
    gcut_video *video;
    gcut_video_source *source;
    gcut_video_sink_fn sink;
    void *sink_ctx;
    slot *slots;
    int queue, readers, writers;
    int64_t n;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int64_t end; /* frames from here on are not written (the end, or the first failure) */
    gcut_status writer_st;
    int64_t writer_frame; /* the earliest frame whose sink failed */
    char writer_msg[512];
    double decode_ms, write_ms;
} run;

typedef struct worker {
    run *r;
    int id;
} worker;

/* Lower r->end to k and wake everyone (under the lock). */
static void end_at(run *r, int64_t k) {
    if (k < r->end)
        r->end = k;
    pthread_cond_broadcast(&r->changed);
}

static void *reader_main(void *arg) {
    worker *me = arg;
    run *r = me->r;
    const bool by_index = r->readers > 1;
    const int64_t count = gcut_video_source_frames(r->source);
    double spent = 0;
    for (int64_t k = me->id;; k += r->readers) {
        slot *s = &r->slots[k % r->queue];
        pthread_mutex_lock(&r->lock);
        while (!(s->state == SLOT_FREE && s->next == k) && k < r->end)
            pthread_cond_wait(&r->changed, &r->lock);
        const bool go = s->state == SLOT_FREE && s->next == k && k < r->end;
        pthread_mutex_unlock(&r->lock);
        if (!go)
            break;
        int done = 0;
        const double t0 = gcut__now_ms();
        gcut_status st;
        if (by_index) {
            done = k >= count;
            st = done ? GCUT_OK : gcut_video_source_read_frame(r->source, k, &s->frame);
        } else {
            st = gcut_video_source_read(r->source, &s->frame, &done);
        }
        spent += gcut__now_ms() - t0;
        pthread_mutex_lock(&r->lock);
        s->index = k;
        s->st = st;
        if (st != GCUT_OK)
            snprintf(s->msg, sizeof s->msg, "%s", gcut_last_error());
        s->state = st != GCUT_OK ? SLOT_FAILED : done ? SLOT_END : SLOT_DECODED;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
        if (st != GCUT_OK || done)
            break;
    }
    pthread_mutex_lock(&r->lock);
    r->decode_ms += spent;
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static void *writer_main(void *arg) {
    worker *me = arg;
    run *r = me->r;
    double spent = 0;
    for (int64_t k = me->id;; k += r->writers) {
        slot *s = &r->slots[k % r->queue];
        pthread_mutex_lock(&r->lock);
        while (!(s->state == SLOT_SEGMENTED && s->index == k) && k < r->end)
            pthread_cond_wait(&r->changed, &r->lock);
        /* Every frame before r->end is segmented: a writer whose frame is there writes it
         * even when a later frame ended the run. */
        const bool go = s->state == SLOT_SEGMENTED && s->index == k;
        pthread_mutex_unlock(&r->lock);
        if (!go)
            break;
        const double t0 = gcut__now_ms();
        gcut_status st =
            r->sink != NULL ? r->sink(r->sink_ctx, k, &s->frame, s->mask, &s->report) : GCUT_OK;
        spent += gcut__now_ms() - t0;
        char msg[512];
        if (st != GCUT_OK)
            snprintf(msg, sizeof msg, "%s", gcut_last_error());
        pthread_mutex_lock(&r->lock);
        if (st != GCUT_OK) {
            if (k < r->writer_frame) {
                r->writer_frame = k;
                r->writer_st = st;
                snprintf(r->writer_msg, sizeof r->writer_msg, "%s", msg);
            }
            end_at(r, k);
        } else {
            s->state = SLOT_FREE;
            s->next = k + r->queue;
            pthread_cond_broadcast(&r->changed);
        }
        pthread_mutex_unlock(&r->lock);
        if (st != GCUT_OK)
            break;
    }
    pthread_mutex_lock(&r->lock);
    r->write_ms += spent;
    pthread_mutex_unlock(&r->lock);
    return NULL;
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

/* The threaded run: readers and writers on their own threads, the calling thread segmenting
 * frame k after frame k-1. @return the status; t->frames the frames written. */
static gcut_status run_threaded(run *r, const uint8_t *init, gcut_video_init init_kind,
                                gcut_video_run_report *t) {
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    pthread_t threads[64];
    worker workers[64];
    int started = 0;
    gcut_status st = GCUT_OK;
    for (int k = 0; k < r->readers + r->writers; k++) {
        workers[k] = (worker){r, k < r->readers ? k : k - r->readers};
        if (pthread_create(&threads[k], NULL, k < r->readers ? reader_main : writer_main,
                           &workers[k]) != 0) {
            st = gcut__fail(GCUT_ERR_INTERNAL, "gcut_video_run: cannot start a thread");
            break;
        }
        started++;
    }
    int64_t k = 0;
    for (; st == GCUT_OK; k++) {
        slot *s = &r->slots[k % r->queue];
        pthread_mutex_lock(&r->lock);
        while (!(s->index == k &&
                 (s->state == SLOT_DECODED || s->state == SLOT_END || s->state == SLOT_FAILED)) &&
               k < r->end)
            pthread_cond_wait(&r->changed, &r->lock);
        const bool have = s->index == k && k < r->end;
        const int state = s->state;
        pthread_mutex_unlock(&r->lock);
        if (!have)
            break; /* a writer failed at or before frame k */
        if (state == SLOT_END)
            break;
        if (state == SLOT_FAILED) {
            st = gcut__fail(s->st, "%s", s->msg);
            break;
        }
        st =
            gcut_video_push_frame(r->video, &s->frame, k == 0 ? init : NULL, init_kind, &s->report);
        if (st == GCUT_OK)
            st = gcut_video_get_mask(r->video, s->mask);
        if (st != GCUT_OK)
            break;
        add_report(t, &s->report);
        pthread_mutex_lock(&r->lock);
        s->state = SLOT_SEGMENTED;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
    char msg[512];
    snprintf(msg, sizeof msg, "%s", gcut_last_error());
    pthread_mutex_lock(&r->lock);
    end_at(r, k); /* the writers finish frames 0..k-1; the readers stop */
    pthread_mutex_unlock(&r->lock);
    for (int j = 0; j < started; j++)
        pthread_join(threads[j], NULL);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    if (r->writer_st != GCUT_OK && (st == GCUT_OK || r->writer_frame <= k)) {
        /* A writer failed first (frames before it are written). */
        st = r->writer_st;
        gcut__fail(st, "%s", r->writer_msg);
    } else if (st != GCUT_OK) {
        gcut__fail(st, "%s", msg);
    }
    t->frames = r->end;
    t->decode_ms = r->decode_ms;
    t->write_ms = r->write_ms;
    return st;
}

gcut_status gcut_video_run(gcut_video *video, gcut_video_source *source, const uint8_t *init,
                           gcut_video_init init_kind, int queue, gcut_video_sink_fn sink,
                           void *sink_ctx, gcut_video_run_report *report) {
    return gcut_video_run_threads(video, source, init, init_kind, queue, 1, 1, sink, sink_ctx,
                                  report);
}

gcut_status gcut_video_run_threads(gcut_video *video, gcut_video_source *source,
                                   const uint8_t *init, gcut_video_init init_kind, int queue,
                                   int readers, int writers, gcut_video_sink_fn sink,
                                   void *sink_ctx, gcut_video_run_report *report) {
    if (video == NULL || source == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_video_run: video or source is NULL");
    if (queue < 0 || queue == 1 || queue > 64)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_video_run: queue %d (0 = no threads, or 2 to 64 frames)", queue);
    if (readers < 1 || readers > 16 || writers < 1 || writers > 16)
        return gcut__fail(GCUT_ERR_INVALID_ARG,
                          "gcut_video_run: %d readers and %d writers (1 to 16 each)", readers,
                          writers);
    if (readers > 1 && gcut_video_source_frames(source) < 0)
        readers = 1; /* a video file is decoded in order */
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
    r.readers = readers;
    r.writers = writers;
    r.queue = queue == 0 ? 1 : queue < readers + writers + 1 ? readers + writers + 1 : queue;
    r.end = INT64_MAX;
    r.writer_frame = INT64_MAX;
    r.n = w * h;
    gcut_status st = GCUT_OK;
    r.slots = gcut__calloc((size_t)r.queue, sizeof *r.slots, "video frame ring");
    if (r.slots == NULL)
        return GCUT_ERR_NOMEM;
    for (int k = 0; k < r.queue && st == GCUT_OK; k++) {
        r.slots[k].next = k;
        r.slots[k].index = -1;
        st = gcut_image_alloc(&r.slots[k].frame, w, h, 1, 3, 8);
        if (st == GCUT_OK && (r.slots[k].mask = gcut__malloc((size_t)r.n, "video mask")) == NULL)
            st = GCUT_ERR_NOMEM;
    }
    if (st == GCUT_OK && queue == 0)
        st = run_serial(&r, init, init_kind, t);
    else if (st == GCUT_OK)
        st = run_threaded(&r, init, init_kind, t);
    for (int k = 0; k < r.queue; k++) {
        gcut_image_free(&r.slots[k].frame);
        gcut__free(r.slots[k].mask);
    }
    gcut__free(r.slots);
    t->wall_ms = gcut__now_ms() - t_start;
    return st;
}
