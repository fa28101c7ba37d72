/* pool.c - a small pool of blocking worker threads for the video model stage's per-pixel
 * passes (Garrett & Saito 2009, 4: the per-frame work split over the machine's cores). Workers
 * sleep on a condition variable between passes instead of spinning, so that idle workers take
 * no CPU from the decoder, the writer or other processes on a loaded machine. */
#include "internal.h"
#include "video_internal.h"

#include <pthread.h>

struct gcut__pool {
    int threads; /* parts of every run: the caller runs part 0, workers 1..threads-1 */
    pthread_t *workers;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    uint64_t generation; /* bumped by every run */
    int pending;         /* workers still running the current run */
    bool quit;
    gcut__pool_fn fn;
    void *ctx;
};

typedef struct worker_arg {
    gcut__pool *pool;
    int part;
} worker_arg;

static void *worker_main(void *arg) {
    gcut__pool *p = ((worker_arg *)arg)->pool;
    const int part = ((worker_arg *)arg)->part;
    gcut__free(arg);
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->generation == seen && !p->quit)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->quit)
            break;
        seen = p->generation;
        gcut__pool_fn fn = p->fn;
        void *ctx = p->ctx;
        pthread_mutex_unlock(&p->lock);
        fn(ctx, part, p->threads);
        pthread_mutex_lock(&p->lock);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

void gcut__pool_free(gcut__pool *p) {
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int k = 0; k < p->started; k++)
        pthread_join(p->workers[k], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    gcut__free(p->workers);
    gcut__free(p);
}

gcut_status gcut__pool_create(int threads, gcut__pool **out) {
    *out = NULL;
    if (threads < 1)
        threads = 1;
    gcut__pool *p = gcut__calloc(1, sizeof *p, "video thread pool");
    if (p == NULL)
        return GCUT_ERR_NOMEM;
    p->threads = threads;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->workers = gcut__calloc((size_t)threads, sizeof(pthread_t), "video thread pool");
    if (p->workers == NULL) {
        gcut__pool_free(p);
        return GCUT_ERR_NOMEM;
    }
    for (int k = 1; k < threads; k++) {
        worker_arg *a = gcut__malloc(sizeof *a, "video thread pool");
        if (a == NULL) {
            gcut__pool_free(p);
            return GCUT_ERR_NOMEM;
        }
        a->pool = p;
        a->part = k;
        if (pthread_create(&p->workers[p->started], NULL, worker_main, a) != 0) {
            gcut__free(a);
            gcut__pool_free(p);
            return gcut__fail(GCUT_ERR_NOMEM, "video: cannot start worker thread %d of %d", k,
                              threads);
        }
        p->started++;
    }
    *out = p;
    return GCUT_OK;
}

int gcut__pool_threads(const gcut__pool *p) {
    return p->threads;
}

void gcut__pool_run(gcut__pool *p, gcut__pool_fn fn, void *ctx) {
    if (p->threads == 1) {
        fn(ctx, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->ctx = ctx;
    p->pending = p->threads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    fn(ctx, 0, p->threads);
    pthread_mutex_lock(&p->lock);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
