/* alloc.c - every host allocation of gcut: an optional caller allocator, and a memory cap
 * so that a problem too large for the machine fails with GCUT_ERR_NOMEM and a message naming
 * the request, instead of driving the machine into swap. */
#define _DEFAULT_SOURCE
#include "internal.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Each block carries its size in a header, so that the bytes in use can be tracked and a
 * caller allocator (which has no realloc) can still grow blocks. 16 bytes keeps alignment. */
typedef union block_header {
    size_t bytes;
    max_align_t align;
} block_header;

static gcut_allocator user_allocator;
static bool have_user_allocator;
static _Atomic uint64_t bytes_in_use;
static _Atomic uint64_t memory_cap; /* 0 = not yet computed */

static uint64_t parse_size(const char *text) {
    char *end = NULL;
    double value = strtod(text, &end);
    if (end == text || value <= 0)
        return 0;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        value *= 1024.0;
        break;
    case 'M':
        value *= 1024.0 * 1024.0;
        break;
    case 'G':
        value *= 1024.0 * 1024.0 * 1024.0;
        break;
    case 'T':
        value *= 1024.0 * 1024.0 * 1024.0 * 1024.0;
        break;
    default:
        break;
    }
    return (uint64_t)value;
}

static uint64_t default_cap(void) {
    const char *env = getenv("GCUT_MEMORY_LIMIT");
    if (env != NULL && *env != '\0') {
        uint64_t from_env = parse_size(env);
        if (from_env > 0)
            return from_env;
    }
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0)
        return (uint64_t)pages * (uint64_t)page_size;
    return UINT64_MAX;
}

void gcut_set_memory_limit(uint64_t bytes) {
    atomic_store(&memory_cap, bytes == 0 ? default_cap() : bytes);
}

uint64_t gcut_memory_limit(void) {
    uint64_t cap = atomic_load(&memory_cap);
    if (cap == 0) {
        cap = default_cap();
        atomic_store(&memory_cap, cap);
    }
    return cap;
}

uint64_t gcut_memory_in_use(void) {
    return atomic_load(&bytes_in_use);
}

void gcut_set_allocator(const gcut_allocator *allocator) {
    if (allocator != NULL && allocator->alloc != NULL && allocator->free != NULL) {
        user_allocator = *allocator;
        have_user_allocator = true;
    } else {
        have_user_allocator = false;
    }
}

static const char *human(uint64_t bytes, char *buf, size_t len) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024.0 && unit < 5) {
        value /= 1024.0;
        unit++;
    }
    snprintf(buf, len, "%.1f %s", value, units[unit]);
    return buf;
}

int gcut__reserve(uint64_t bytes, const char *what) {
    uint64_t cap = gcut_memory_limit();
    uint64_t before = atomic_fetch_add(&bytes_in_use, bytes);
    if (bytes > cap || before > cap - bytes) {
        atomic_fetch_sub(&bytes_in_use, bytes);
        char need[32], held[32], limit[32];
        gcut__fail(GCUT_ERR_NOMEM,
                   "out of memory: %s needs %s, gcut already holds %s, limit %s "
                   "(gcut_set_memory_limit or GCUT_MEMORY_LIMIT)",
                   what ? what : "allocation", human(bytes, need, sizeof need),
                   human(before, held, sizeof held), human(cap, limit, sizeof limit));
        return -1;
    }
    return 0;
}

void gcut__unreserve(uint64_t bytes) {
    atomic_fetch_sub(&bytes_in_use, bytes);
}

size_t gcut__mul_size(size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size)
        return SIZE_MAX;
    return count * size;
}

/* Ask the kernel to back a large block with transparent huge pages where the system leaves that
 * to the program (the common "madvise" setting). gcut's arrays are large and touched once in
 * order before random access: 4 KB pages cost a fault each while building (bk's grid layout at
 * 1920x1080: 123 -> 76 ms measured with huge pages) and TLB misses while solving. Only the
 * 2 MB-aligned interior is advised; failure is harmless (the pages stay small). */
static void advise_huge_pages(void *ptr, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (bytes < 4 * huge)
        return;
    uintptr_t begin = ((uintptr_t)ptr + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)ptr + bytes) & ~(huge - 1);
    if (end > begin)
        (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
    (void)ptr;
    (void)bytes;
#endif
}

void *gcut__malloc(size_t bytes, const char *what) {
    if (bytes > SIZE_MAX - sizeof(block_header)) {
        gcut__fail(GCUT_ERR_NOMEM, "out of memory: %s asks for more bytes than exist",
                   what ? what : "allocation");
        return NULL;
    }
    if (gcut__reserve(bytes, what) != 0)
        return NULL;
    size_t total = bytes + sizeof(block_header);
    block_header *block =
        have_user_allocator ? user_allocator.alloc(user_allocator.ctx, total) : malloc(total);
    if (block == NULL) {
        gcut__unreserve(bytes);
        char need[32];
        gcut__fail(GCUT_ERR_NOMEM, "out of memory: the system refused %s for %s",
                   human(bytes, need, sizeof need), what ? what : "allocation");
        return NULL;
    }
    block->bytes = bytes;
    if (!have_user_allocator)
        advise_huge_pages(block + 1, bytes);
    return block + 1;
}

/* Zeroed blocks come from the system's calloc, which maps large blocks as pages the kernel
 * zeroes on first touch: a reader that sizes arrays from a header and then finds the input
 * truncated has touched only what the input filled, not gigabytes (issue #10). */
void *gcut__calloc(size_t count, size_t size, const char *what) {
    size_t bytes = gcut__mul_size(count, size);
    if (have_user_allocator) {
        void *ptr = gcut__malloc(bytes, what);
        if (ptr != NULL)
            memset(ptr, 0, bytes);
        return ptr;
    }
    if (bytes > SIZE_MAX - sizeof(block_header)) {
        gcut__fail(GCUT_ERR_NOMEM, "out of memory: %s asks for more bytes than exist",
                   what ? what : "allocation");
        return NULL;
    }
    if (gcut__reserve(bytes, what) != 0)
        return NULL;
    block_header *block = calloc(1, bytes + sizeof(block_header));
    if (block == NULL) {
        gcut__unreserve(bytes);
        char need[32];
        gcut__fail(GCUT_ERR_NOMEM, "out of memory: the system refused %s for %s",
                   human(bytes, need, sizeof need), what ? what : "allocation");
        return NULL;
    }
    block->bytes = bytes;
    advise_huge_pages(block + 1, bytes);
    return block + 1;
}

void gcut__free(void *ptr) {
    if (ptr == NULL)
        return;
    block_header *block = (block_header *)ptr - 1;
    gcut__unreserve(block->bytes);
    if (have_user_allocator)
        user_allocator.free(user_allocator.ctx, block);
    else
        free(block);
}

void *gcut__realloc(void *ptr, size_t bytes, const char *what) {
    if (ptr == NULL)
        return gcut__malloc(bytes, what);
    block_header *old = (block_header *)ptr - 1;
    size_t old_bytes = old->bytes;
    if (have_user_allocator) {
        void *fresh = gcut__malloc(bytes, what);
        if (fresh == NULL)
            return NULL;
        memcpy(fresh, ptr, old_bytes < bytes ? old_bytes : bytes);
        gcut__free(ptr);
        return fresh;
    }
    if (bytes > SIZE_MAX - sizeof(block_header)) {
        gcut__fail(GCUT_ERR_NOMEM, "out of memory: %s asks for more bytes than exist",
                   what ? what : "allocation");
        return NULL;
    }
    if (bytes > old_bytes && gcut__reserve(bytes - old_bytes, what) != 0)
        return NULL;
    block_header *block = realloc(old, bytes + sizeof(block_header));
    if (block == NULL) {
        if (bytes > old_bytes)
            gcut__unreserve(bytes - old_bytes);
        gcut__fail(GCUT_ERR_NOMEM, "out of memory: the system refused to grow %s",
                   what ? what : "allocation");
        return NULL;
    }
    if (bytes < old_bytes)
        gcut__unreserve(old_bytes - bytes);
    block->bytes = bytes;
    return block + 1;
}

void gcut_free(void *ptr) {
    gcut__free(ptr);
}

gcut_status gcut_alloc(size_t bytes, const char *what, void **out) {
    if (out == NULL)
        return gcut__fail(GCUT_ERR_INVALID_ARG, "gcut_alloc: out is NULL");
    *out = gcut__malloc(bytes, what);
    return *out != NULL ? GCUT_OK : GCUT_ERR_NOMEM;
}
