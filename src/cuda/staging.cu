/* staging.cu - the GPU segmentation's whole-image copies (Lattari 2010 5.4's pipeline, cuda-grid's
 * image entry) through a pinned ring: pageable copies ran at 6.7-9.2 GB/s up on the H100 host;
 * host threads fill (drain) pinned chunks while the DMA of the previous ones runs. */
#include "internal.h"
#include "cuda_check.h"
#include "staging.h"

#include <cuda_runtime.h>

#include <condition_variable>
#include <atomic>
#include <mutex>
#include <new>
#include <thread>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

namespace {

constexpr int kMaxWorkers = 16;
constexpr size_t kSlot = (size_t)2 << 20;      /* the largest pinned chunk */
constexpr size_t kMinChunk = (size_t)64 << 10; /* the smallest (but the tests') */
constexpr size_t kDirect = (size_t)256 << 10;  /* below: no ring (direct, as before) */
constexpr size_t kBounce = (size_t)64 << 10;   /* the direct path's buffer for packed bytes */

/* The ring: per worker a stream, two pinned slots and their events, made on first use for one
 * device and kept (gcut__staging_release frees it); a slot is allocated (or grown) when a
 * transfer's chunk first needs it, so a process that only copies small images pins little.
 * One transfer at a time (ring_mutex). */
struct Ring {
    int device = -1;
    uint8_t *slot[kMaxWorkers][2] = {};
    size_t cap[kMaxWorkers][2] = {};
    cudaStream_t stream[kMaxWorkers] = {};
    cudaEvent_t ev[kMaxWorkers][2] = {};
    cudaEvent_t done[kMaxWorkers] = {};
    cudaEvent_t ready = nullptr;
};

std::mutex ring_mutex;
Ring ring;
size_t chunk_override = 0; /* tests: gcut__staging_set_chunk */
/* The ring is made from a process's second image solve on: its pinned slots, streams and threads
 * cost 6.4 ms (4K colour) to 39.6 ms (512^3) to make on the H100 host, about what staging saves
 * on one solve, so a process that segments one picture copies it as before. The end of a solve
 * is its labels' download; GCUT_STAGING_EAGER=1 (and the tests' chunk override) make it at once. */
std::atomic<bool> ring_wanted{false};

void ring_free(Ring &R) {
    for (int w = 0; w < kMaxWorkers; w++) {
        for (int s = 0; s < 2; s++) {
            if (R.ev[w][s] != nullptr)
                cudaEventSynchronize(R.ev[w][s]);
            if (R.slot[w][s] != nullptr) {
                cudaFreeHost(R.slot[w][s]);
                gcut__unreserve(R.cap[w][s]);
            }
            if (R.ev[w][s] != nullptr)
                cudaEventDestroy(R.ev[w][s]);
        }
        if (R.done[w] != nullptr)
            cudaEventDestroy(R.done[w]);
        if (R.stream[w] != nullptr)
            cudaStreamDestroy(R.stream[w]);
    }
    if (R.ready != nullptr)
        cudaEventDestroy(R.ready);
    R = Ring();
}

gcut_status ring_make(Ring &R, int device, const char *who) {
    if (R.device == device)
        return GCUT_OK;
    ring_free(R);
    cudaError_t err = cudaEventCreateWithFlags(&R.ready, cudaEventDisableTiming);
    for (int w = 0; w < kMaxWorkers && err == cudaSuccess; w++) {
        err = cudaStreamCreateWithFlags(&R.stream[w], cudaStreamNonBlocking);
        if (err == cudaSuccess)
            err = cudaEventCreateWithFlags(&R.done[w], cudaEventDisableTiming);
        for (int s = 0; s < 2 && err == cudaSuccess; s++)
            err = cudaEventCreateWithFlags(&R.ev[w][s], cudaEventDisableTiming);
    }
    if (err != cudaSuccess) {
        ring_free(R);
        return gcut__cuda_fail(who, err, "staging ring's streams and events");
    }
    R.device = device;
    return GCUT_OK;
}

/* Slots of at least `bytes` for workers 0..workers-1 (a smaller one freed once its last copy is
 * done, then allocated anew; pinned bytes count against gcut's memory cap). */
gcut_status ring_slots(Ring &R, int workers, size_t bytes, const char *who) {
    for (int w = 0; w < workers; w++)
        for (int s = 0; s < 2; s++) {
            if (R.cap[w][s] >= bytes)
                continue;
            if (R.slot[w][s] != nullptr) {
                cudaEventSynchronize(R.ev[w][s]);
                cudaFreeHost(R.slot[w][s]);
                gcut__unreserve(R.cap[w][s]);
                R.slot[w][s] = nullptr;
                R.cap[w][s] = 0;
            }
            if (gcut__reserve(bytes, "pinned staging chunk") != 0)
                return GCUT_ERR_NOMEM;
            const cudaError_t err = cudaMallocHost(reinterpret_cast<void **>(&R.slot[w][s]), bytes);
            if (err != cudaSuccess) {
                gcut__unreserve(bytes);
                R.slot[w][s] = nullptr;
                return gcut__cuda_fail(who, err, "pinned staging chunk");
            }
            R.cap[w][s] = bytes;
        }
    return GCUT_OK;
}

/* The ring's host threads, started when first needed and kept waiting for the next transfer
 * (starting 15 threads per copy cost a few hundred microseconds, a good part of a 4K image's
 * copy): run(fn, jobs, count) runs job 0 on the caller and job w on thread w. Made with new and
 * joined only by gcut__staging_release (at exit the waiting threads simply end with the
 * process). Used under ring_mutex: one run at a time. */
struct Pool {
    std::mutex m;
    std::condition_variable wake, finished;
    std::thread *thread[kMaxWorkers] = {};
    int started = 1; /* thread 0 is the caller */
    unsigned generation = 0;
    int count = 0, pending = 0;
    bool stop = false;
    void *(*fn)(void *) = nullptr;
    char *jobs = nullptr;
    size_t size = 0;

    /* seen: the generation when the thread was made (the next run is the first it takes) */
    void loop(int w, unsigned seen) {
        std::unique_lock<std::mutex> lock(m);
        for (;;) {
            wake.wait(lock, [&] { return stop || generation != seen; });
            if (stop)
                return;
            seen = generation;
            if (w >= count)
                continue;
            void *(*f)(void *) = fn;
            void *job = jobs + (size_t)w * size;
            lock.unlock();
            f(job);
            lock.lock();
            if (--pending == 0)
                finished.notify_one();
        }
    }
    /* false when a thread could not be started (the caller then runs the jobs itself) */
    bool run(void *(*f)(void *), void *job, size_t job_size, int n) {
        for (; started < n; started++) {
            try {
                thread[started] = new std::thread(&Pool::loop, this, started, generation);
            } catch (...) {
                break;
            }
        }
        if (started < n)
            return false;
        {
            std::lock_guard<std::mutex> lock(m);
            fn = f, jobs = static_cast<char *>(job), size = job_size, count = n, pending = n - 1;
            generation++;
        }
        wake.notify_all();
        f(job);
        std::unique_lock<std::mutex> lock(m);
        finished.wait(lock, [&] { return pending == 0; });
        return true;
    }
    void join() {
        {
            std::lock_guard<std::mutex> lock(m);
            stop = true;
        }
        wake.notify_all();
        for (int w = 1; w < started; w++) {
            thread[w]->join();
            delete thread[w];
        }
    }
};
Pool *pool = nullptr;

/* One worker's share of a transfer: chunks w, w + workers, ... */
struct Job {
    Ring *R;
    int w, workers, device, transform;
    bool up;
    uint8_t *host; /* source (up) or destination (down), n bytes */
    uint8_t *dev;  /* destination (up) or source (down), device bytes */
    size_t n, chunk, chunks;
    cudaError_t err;
    const char *what;
};

/* Device bytes of host range [off, off + len) under the transform. */
size_t dev_offset(int transform, size_t off) {
    return transform == GCUT__STAGE_SEEDS ? off / 4 : transform == GCUT__STAGE_BITS ? off / 8 : off;
}
size_t dev_length(int transform, size_t len) {
    return transform == GCUT__STAGE_SEEDS  ? (len + 3) / 4
           : transform == GCUT__STAGE_BITS ? (len + 7) / 8
                                           : len;
}

void *upload_job(void *arg) {
    Job &J = *static_cast<Job *>(arg);
    Ring &R = *J.R;
    const int w = J.w;
    cudaError_t err = cudaSetDevice(J.device);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(R.stream[w], R.ready, 0);
    size_t j = 0;
    for (size_t c = (size_t)w; c < J.chunks && err == cudaSuccess; c += (size_t)J.workers, j++) {
        const int s = (int)(j & 1);
        const size_t off = c * J.chunk, len = off + J.chunk < J.n ? J.chunk : J.n - off;
        /* the slot's last DMA (this transfer's or an earlier one's) is done before it is filled */
        if ((err = cudaEventSynchronize(R.ev[w][s])) != cudaSuccess) {
            J.what = "staging: wait for a chunk's copy";
            break;
        }
        if (J.transform == GCUT__STAGE_SEEDS)
            gcut__stage_pack_seeds(J.host + off, len, R.slot[w][s]);
        else
            memcpy(R.slot[w][s], J.host + off, len);
        err = cudaMemcpyAsync(J.dev + dev_offset(J.transform, off), R.slot[w][s],
                              dev_length(J.transform, len), cudaMemcpyHostToDevice, R.stream[w]);
        if (err == cudaSuccess)
            err = cudaEventRecord(R.ev[w][s], R.stream[w]);
        if (err != cudaSuccess)
            J.what = "staging: chunk upload";
    }
    if (err == cudaSuccess && (err = cudaEventRecord(R.done[w], R.stream[w])) != cudaSuccess)
        J.what = "staging: cudaEventRecord";
    J.err = err;
    return nullptr;
}

void *download_job(void *arg) {
    Job &J = *static_cast<Job *>(arg);
    Ring &R = *J.R;
    const int w = J.w;
    cudaError_t err = cudaSetDevice(J.device);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(R.stream[w], R.ready, 0);
    auto issue = [&](size_t j) -> cudaError_t {
        const size_t c = (size_t)w + j * (size_t)J.workers;
        if (c >= J.chunks)
            return cudaSuccess;
        const int s = (int)(j & 1);
        const size_t off = c * J.chunk, len = off + J.chunk < J.n ? J.chunk : J.n - off;
        cudaError_t e =
            cudaMemcpyAsync(R.slot[w][s], J.dev + dev_offset(J.transform, off),
                            dev_length(J.transform, len), cudaMemcpyDeviceToHost, R.stream[w]);
        return e == cudaSuccess ? cudaEventRecord(R.ev[w][s], R.stream[w]) : e;
    };
    if (err == cudaSuccess)
        err = issue(0);
    if (err == cudaSuccess)
        err = issue(1);
    size_t j = 0;
    for (size_t c = (size_t)w; c < J.chunks && err == cudaSuccess; c += (size_t)J.workers, j++) {
        const int s = (int)(j & 1);
        const size_t off = c * J.chunk, len = off + J.chunk < J.n ? J.chunk : J.n - off;
        if ((err = cudaEventSynchronize(R.ev[w][s])) != cudaSuccess)
            break;
        if (J.transform == GCUT__STAGE_BITS)
            gcut__stage_unpack_bits(R.slot[w][s], len, J.host + off);
        else
            memcpy(J.host + off, R.slot[w][s], len);
        err = issue(j + 2);
    }
    if (err != cudaSuccess)
        J.what = "staging: chunk download";
    J.err = err;
    return nullptr;
}

/* Without the ring (small copies, or no pinned memory to be had): pageable copies on the
 * caller's stream, as before the staging; packed bytes pass through a 64 KiB buffer (a pageable
 * upload returns once its source is staged, a pageable download once it is done). */
gcut_status direct(bool up, uint8_t *host, uint8_t *dev, size_t n, int transform, cudaStream_t user,
                   const char *who) {
    cudaError_t err = cudaSuccess;
    if (transform == GCUT__STAGE_COPY) {
        err = cudaMemcpyAsync(up ? dev : host, up ? host : dev, n,
                              up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, user);
        if (err == cudaSuccess && !up)
            err = cudaStreamSynchronize(user);
    } else {
        uint8_t bounce[kBounce];
        const size_t per = transform == GCUT__STAGE_SEEDS ? 4 * kBounce : 8 * kBounce;
        for (size_t off = 0; off < n && err == cudaSuccess; off += per) {
            const size_t len = off + per < n ? per : n - off;
            const size_t doff = dev_offset(transform, off), dlen = dev_length(transform, len);
            if (up) {
                gcut__stage_pack_seeds(host + off, len, bounce);
                err = cudaMemcpyAsync(dev + doff, bounce, dlen, cudaMemcpyHostToDevice, user);
            } else {
                err = cudaMemcpyAsync(bounce, dev + doff, dlen, cudaMemcpyDeviceToHost, user);
                if (err == cudaSuccess)
                    err = cudaStreamSynchronize(user);
                if (err == cudaSuccess)
                    gcut__stage_unpack_bits(bounce, len, host + off);
            }
        }
    }
    return err == cudaSuccess ? GCUT_OK
                              : gcut__cuda_fail(who, err, up ? "direct upload" : "direct download");
}

gcut_status transfer(bool up, uint8_t *host, uint8_t *dev, size_t n, int transform, int device,
                     void *stream, const char *who) {
    if (n == 0)
        return GCUT_OK;
    cudaStream_t user = static_cast<cudaStream_t>(stream);
    const bool verbose = gcut__env_int("GCUT_STAGING_VERBOSE", 0, 0, 1) != 0;
    const double t0 = verbose ? gcut__now_ms() : 0;
    std::lock_guard<std::mutex> lock(ring_mutex);
    const bool made = ring.device == device;
    /* workers: GCUT_STAGING_THREADS, else the online cores (at most 16); chunks: about four per
     * worker, 64 KiB to 2 MiB of device bytes (each chunk one DMA: packed codes and bits make
     * chunks of 4 and 8 times as many host bytes, so that their DMAs are as large), host bytes
     * a multiple of 64 (whole bytes of codes and bits) */
    int workers = gcut__env_int("GCUT_STAGING_THREADS", 0, 0, kMaxWorkers);
    if (workers == 0) {
        const int cores = gcut__online_cores();
        workers = cores < kMaxWorkers ? cores : kMaxWorkers;
    }
    const size_t per = transform == GCUT__STAGE_SEEDS ? 4 : transform == GCUT__STAGE_BITS ? 8 : 1;
    size_t chunk = chunk_override;
    if (chunk == 0) { /* GCUT_STAGING_PER_WORKER: the chunks a worker aims at (tuning runs) */
        const size_t aim = (size_t)gcut__env_int("GCUT_STAGING_PER_WORKER", 4, 1, 64);
        size_t dev_chunk = (dev_length(transform, n) / (aim * (size_t)workers) + 63) / 64 * 64;
        dev_chunk = dev_chunk < kMinChunk ? kMinChunk : dev_chunk > kSlot ? kSlot : dev_chunk;
        chunk = dev_chunk * per;
    }
    const size_t chunks = (n + chunk - 1) / chunk, slot = (chunk + per - 1) / per;
    if ((size_t)workers > chunks)
        workers = (int)chunks;
    const bool ring_ok = made || chunk_override != 0 || ring_wanted.load() ||
                         gcut__env_int("GCUT_STAGING_EAGER", 0, 0, 1) != 0;
    if ((n < kDirect && chunk_override == 0) || !ring_ok ||
        ring_make(ring, device, who) != GCUT_OK ||
        ring_slots(ring, workers, slot, who) != GCUT_OK) {
        gcut__clear_error(); /* no ring: the direct copies */
        const gcut_status st = direct(up, host, dev, n, transform, user, who);
        if (verbose)
            fprintf(stderr, "staging: %s of %zu bytes (transform %d), direct: %.3f ms\n",
                    up ? "upload" : "download", n, transform, gcut__now_ms() - t0);
        return st;
    }
    const double t1 = verbose ? gcut__now_ms() : 0;
    cudaError_t err = cudaEventRecord(ring.ready, user);
    if (err != cudaSuccess)
        return gcut__cuda_fail(who, err, "staging: cudaEventRecord");
    Job jobs[kMaxWorkers];
    for (int w = 0; w < workers; w++)
        jobs[w] = Job{&ring, w, workers, device, transform,   up,     host,
                      dev,   n, chunk,   chunks, cudaSuccess, nullptr};
    if (pool == nullptr)
        pool = new (std::nothrow) Pool();
    if (pool == nullptr || !pool->run(up ? upload_job : download_job, jobs, sizeof(Job), workers))
        gcut__run_jobs(up ? upload_job : download_job, jobs, sizeof(Job), workers);
    for (int w = 0; w < workers; w++)
        if (jobs[w].err != cudaSuccess)
            return gcut__cuda_fail(who, jobs[w].err, jobs[w].what ? jobs[w].what : "staging");
    if (up)
        for (int w = 0; w < workers; w++)
            if ((err = cudaStreamWaitEvent(user, ring.done[w], 0)) != cudaSuccess)
                return gcut__cuda_fail(who, err, "staging: cudaStreamWaitEvent");
    if (verbose) { /* an upload's DMA may still run: synchronised here for the time */
        if (up)
            cudaStreamSynchronize(user);
        fprintf(stderr,
                "staging: %s of %zu bytes (transform %d), %d threads, %zu chunks: %.3f ms%s\n",
                up ? "upload" : "download", n, transform, workers, chunks, gcut__now_ms() - t1,
                made ? "" : " (the ring made first)");
        fprintf(stderr, "staging: ring ready (slots of %zu bytes) in %.3f ms\n", slot, t1 - t0);
    }
    return GCUT_OK;
}

__global__ void unpack_seeds_kernel(uint8_t *dst, const uint8_t *packed, size_t n, bool aligned) {
    const size_t bytes = (n + 3) / 4;
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < bytes;
         j += (size_t)gridDim.x * blockDim.x) {
        const unsigned p = packed[j];
        if (aligned && 4 * j + 4 <= n) {
            reinterpret_cast<uchar4 *>(dst)[j] =
                make_uchar4(p & 3u, (p >> 2) & 3u, (p >> 4) & 3u, (p >> 6) & 3u);
        } else {
            for (size_t k = 0; k < 4 && 4 * j + k < n; k++)
                dst[4 * j + k] = (uint8_t)((p >> (2 * k)) & 3u);
        }
    }
}

__global__ void pack_bits_kernel(uint8_t *dst, const uint8_t *src, size_t n, bool aligned) {
    const size_t bytes = (n + 7) / 8;
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < bytes;
         j += (size_t)gridDim.x * blockDim.x) {
        unsigned b = 0;
        if (aligned && 8 * j + 8 <= n) {
            const uint2 v = reinterpret_cast<const uint2 *>(src)[j];
#pragma unroll
            for (int k = 0; k < 4; k++)
                b |= ((v.x >> (8 * k)) & 1u) << k | ((v.y >> (8 * k)) & 1u) << (k + 4);
        } else {
            for (size_t k = 0; k < 8 && 8 * j + k < n; k++)
                b |= (src[8 * j + k] & 1u) << k;
        }
        dst[j] = (uint8_t)b;
    }
}

unsigned blocks_for(size_t work) {
    const size_t b = (work + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 65535u * 16 ? 65535u * 16 : b);
}

} // namespace

extern "C" int gcut__staging_on(void) {
    return gcut__env_int("GCUT_STAGING", 1, 0, 1);
}

extern "C" gcut_status gcut__stage_upload(void *dst, const uint8_t *src, size_t n, int transform,
                                          int device, void *stream, const char *who) {
    if (transform != GCUT__STAGE_COPY && transform != GCUT__STAGE_SEEDS)
        return gcut__fail(GCUT_ERR_INTERNAL, "%s: staging: upload transform %d", who, transform);
    return transfer(true, const_cast<uint8_t *>(src), static_cast<uint8_t *>(dst), n, transform,
                    device, stream, who);
}

extern "C" gcut_status gcut__stage_download(uint8_t *dst, const void *src, size_t n, int transform,
                                            int device, void *stream, const char *who) {
    if (transform != GCUT__STAGE_COPY && transform != GCUT__STAGE_BITS)
        return gcut__fail(GCUT_ERR_INTERNAL, "%s: staging: download transform %d", who, transform);
    const gcut_status st = transfer(false, dst, static_cast<uint8_t *>(const_cast<void *>(src)), n,
                                    transform, device, stream, who);
    ring_wanted.store(true); /* a solve has ended: the next one may make the ring */
    return st;
}

extern "C" void gcut__staging_set_chunk(size_t bytes) {
    std::lock_guard<std::mutex> lock(ring_mutex);
    bytes = (bytes + 63) / 64 * 64;
    chunk_override = bytes > kSlot ? kSlot : bytes;
}

extern "C" void gcut__staging_release(void) {
    std::lock_guard<std::mutex> lock(ring_mutex);
    if (ring.device >= 0)
        cudaSetDevice(ring.device);
    ring_free(ring);
    if (pool != nullptr) {
        pool->join();
        delete pool;
        pool = nullptr;
    }
}

extern "C" gcut_status gcut__stage_unpack_seeds_device(uint8_t *dst, const uint8_t *packed,
                                                       size_t n, void *stream, const char *who) {
    if (n == 0)
        return GCUT_OK;
    const bool aligned = ((uintptr_t)dst & 3u) == 0;
    unpack_seeds_kernel<<<blocks_for((n + 3) / 4), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        dst, packed, n, aligned);
    const cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? GCUT_OK : gcut__cuda_fail(who, err, "seed unpacking kernel");
}

extern "C" gcut_status gcut__stage_pack_bits_device(uint8_t *dst, const uint8_t *src, size_t n,
                                                    void *stream, const char *who) {
    if (n == 0)
        return GCUT_OK;
    const bool aligned = ((uintptr_t)src & 7u) == 0;
    pack_bits_kernel<<<blocks_for((n + 7) / 8), 256, 0, static_cast<cudaStream_t>(stream)>>>(
        dst, src, n, aligned);
    const cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? GCUT_OK : gcut__cuda_fail(who, err, "bit packing kernel");
}
