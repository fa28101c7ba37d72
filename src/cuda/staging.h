/* staging.h - whole-image host<->device copies of the GPU segmentation (cuda-grid's image entry;
 * the narrow band's device pipeline, Lattari 2010 5.4) through a pinned ring filled and drained by
 * host threads, seeds as 2-bit codes, labels as bits (docs/BAND.md, "Staged copies"). */
#ifndef GCUT_STAGING_H
#define GCUT_STAGING_H

#include "gcut.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a staged copy transforms its bytes. */
enum {
    GCUT__STAGE_COPY = 0,  /* n bytes as they are */
    GCUT__STAGE_SEEDS = 1, /* upload: n codes (0..3) from the host, (n + 3) / 4 bytes of 2-bit
                              codes on the device (gcut__stage_pack_seeds) */
    GCUT__STAGE_BITS = 2   /* download: (n + 7) / 8 bytes of bits on the device, n bytes of 0 / 1
                              on the host (gcut__stage_unpack_bits) */
};

/** Pack codes[0..n) (each 0..3) four to a byte, code 4j + b in bits 2b..2b+1 of out[j]:
 *  (n + 3) / 4 bytes written; the last byte's unused bits 0. */
static inline void gcut__stage_pack_seeds(const uint8_t *codes, size_t n, uint8_t *out) {
    size_t i = 0, j = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* four codes (bits 8k, k < 4) to bits 24 + 2k by one multiply: 2^(24 - 6k) summed; no other
     * product lands in bits 24..31 and the lower ones do not overlap (no carry) */
    for (; i + 8 <= n; i += 8, j += 2) {
        uint64_t x;
        memcpy(&x, codes + i, 8);
        x &= 0x0303030303030303ull;
        out[j] = (uint8_t)(((uint32_t)x * 0x01041040u) >> 24);
        out[j + 1] = (uint8_t)(((uint32_t)(x >> 32) * 0x01041040u) >> 24);
    }
#endif
    for (; i < n; i += 4, j++) {
        uint8_t b = 0;
        for (size_t k = 0; k < 4 && i + k < n; k++)
            b |= (uint8_t)((codes[i + k] & 3u) << (2 * k));
        out[j] = b;
    }
}

/** Unpack bits[0..(n + 7) / 8) into out[0..n): out[8j + b] = bit b of bits[j] (0 or 1). */
static inline void gcut__stage_unpack_bits(const uint8_t *bits, size_t n, uint8_t *out) {
    size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= n; i += 8) {
        /* the byte in all 8 bytes, byte k keeping bit k; + 0x7F sets bit 7 of each byte that
         * holds one (no carry between bytes), which >> 7 brings to bit 0 */
        const uint64_t x = (uint64_t)bits[i / 8] * 0x0101010101010101ull;
        const uint64_t y = x & 0x8040201008040201ull;
        const uint64_t z = ((y + 0x7F7F7F7F7F7F7F7Full) >> 7) & 0x0101010101010101ull;
        memcpy(out + i, &z, 8);
    }
#endif
    for (; i < n; i++)
        out[i] = (uint8_t)((bits[i / 8] >> (i % 8)) & 1u);
}

#ifdef GCUT_HAVE_CUDA
/** 1 when staged copies are on (the default; GCUT_STAGING=0 in the environment turns them off,
 *  for the benchmarks' before / after: callers then copy from pageable memory as before). */
int gcut__staging_on(void);
/** Copy n source bytes from host memory to dst on device `device`, transformed by `transform`
 *  (GCUT__STAGE_COPY or GCUT__STAGE_SEEDS), through the pinned ring; ordered after the work
 *  on `stream` (a cudaStream_t) before it and before the work after it. The ring's host threads
 *  (up to 16, GCUT_STAGING_THREADS) fill its chunks while the previous ones are copied; below
 *  256 KiB, or without pinned memory, a pageable copy as before (packed through a small
 *  buffer). Returns when src may be reused. `who` names the caller in errors. */
gcut_status gcut__stage_upload(void *dst, const uint8_t *src, size_t n, int transform, int device,
                               void *stream, const char *who);
/** Copy to n bytes of host memory at dst from device memory src (GCUT__STAGE_COPY: n bytes;
 *  GCUT__STAGE_BITS: (n + 7) / 8 bytes of bits, unpacked), after the work on `stream` before
 *  it; returns once dst holds them. */
gcut_status gcut__stage_download(uint8_t *dst, const void *src, size_t n, int transform, int device,
                                 void *stream, const char *who);
/** Tests: the chunk size in source bytes (rounded up to a multiple of 64, at most the ring's
 *  2 MiB slots); 0 restores the default. */
void gcut__staging_set_chunk(size_t bytes);
/** Free the pinned ring and join its threads (gcut_device_release_cache()). */
void gcut__staging_release(void);
/** Device kernels, launched on `stream`: the 2-bit codes of packed into n bytes at dst; and the
 *  low bit of n bytes at src into (n + 7) / 8 bytes of bits at dst. */
gcut_status gcut__stage_unpack_seeds_device(uint8_t *dst, const uint8_t *packed, size_t n,
                                            void *stream, const char *who);
gcut_status gcut__stage_pack_bits_device(uint8_t *dst, const uint8_t *src, size_t n, void *stream,
                                         const char *who);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GCUT_STAGING_H */
