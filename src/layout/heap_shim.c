/* ghostbench's heap layout shim (src/layout/heap.rs compiles it with the
 * system compiler and loads it with LD_PRELOAD into a layout variant's runs).
 *
 * GHOSTBENCH_HEAP=SEED (SEED > 0) moves every allocation of the program by a
 * multiple of 16 bytes chosen from SEED, so the offsets of its buffers within
 * their pages (4K aliasing, cache-set conflicts) differ from one layout to
 * the next as the code's placement does:
 *  - at start, one block of SEED-chosen 0..4080 bytes is taken and kept, so
 *    the heap's small objects all start elsewhere in their pages;
 *  - each allocation k is shifted by hash(SEED, k) * 16 bytes: up to 4080
 *    for requests of 4 KiB or more (large buffers, which glibc otherwise
 *    puts at the same page offset every time), up to the request's own size
 *    for smaller ones (so a small object costs at most twice its size).
 * The same SEED and the same sequence of requests give the same addresses.
 *
 * Every block keeps a 16-byte header just below the pointer returned (where
 * glibc keeps its own chunk header, so reading it is safe for any pointer):
 * the size asked for, and the distance back to glibc's block with a check
 * word; free, realloc and malloc_usable_size find the original block from
 * it. A pointer without a valid header (glibc allocated it before this shim
 * or for itself, or an alignment above 1 MiB) goes to glibc as it is. The
 * real allocator is glibc's
 * (__libc_malloc and friends), so no dlsym is needed at start. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define HEADER 16
#define SPAN 4096
#define MAX_FRONT (1 << 20)
#define MAGIC 0x67686f7374686561ULL /* "ghosthea" */
#define CHECK_BITS 0xffffffffffffULL

static uint64_t seed;
static int state; /* 0: not read yet, 1: on, 2: off */
static uint64_t counter;

struct header {
    size_t size;
    uint64_t word; /* (distance / 16) << 48 | check */
};

static uint64_t mix(uint64_t x) { /* splitmix64's finalizer */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int on(void) {
    if (__builtin_expect(state != 0, 1)) return state == 1;
    const char *text = getenv("GHOSTBENCH_HEAP");
    uint64_t value = 0;
    for (const char *c = text; c && *c >= '0' && *c <= '9'; c++) value = value * 10 + (uint64_t)(*c - '0');
    seed = value;
    state = value ? 1 : 2;
    if (state == 1) {
        /* The start block: kept for the life of the process. */
        size_t start = (size_t)(mix(seed ^ 0x5354415254ULL) % (SPAN / 16)) * 16;
        if (start) (void)__libc_malloc(start);
    }
    return state == 1;
}

/* The shift of the next allocation of `size` bytes aligned to `align`. */
static size_t next_shift(size_t size, size_t align) {
    uint64_t k = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    size_t limit = size >= SPAN ? SPAN : size;
    size_t steps = limit / align;
    if (align >= SPAN || steps <= 1) return 0;
    return (size_t)(mix(seed * 0x100000001b3ULL + k) % steps) * align;
}

static struct header *header_of(void *p) {
    return (struct header *)((char *)p - HEADER);
}

static uint64_t check(void *p, size_t size, uint64_t units) {
    return mix((uint64_t)(uintptr_t)p ^ (uint64_t)size * 31 ^ units << 7 ^ MAGIC) & CHECK_BITS;
}

/* glibc's block under p, if p is ours; else NULL. */
static void *raw_of(void *p) {
    if (((uintptr_t)p & 15) != 0) return NULL;
    struct header *h = header_of(p);
    uint64_t units = h->word >> 48;
    if (units == 0 || (h->word & CHECK_BITS) != check(p, h->size, units)) return NULL;
    return (char *)p - units * 16;
}

/* `size` bytes aligned to `align` (a power of two, at least 16), shifted. */
static void *place(size_t size, size_t align) {
    size_t front = align > HEADER ? align : HEADER;
    if (front > MAX_FRONT) return __libc_memalign(align, size);
    size_t shift = next_shift(size, align);
    if (size > SIZE_MAX - front - shift) {
        errno = ENOMEM;
        return NULL;
    }
    char *raw = align <= 16 ? __libc_malloc(front + shift + size)
                            : __libc_memalign(align, front + shift + size);
    if (!raw) return NULL;
    char *user = raw + front + shift;
    uint64_t units = (uint64_t)(front + shift) / 16;
    struct header *h = header_of(user);
    h->size = size;
    h->word = units << 48 | check(user, size, units);
    return user;
}

void *malloc(size_t size) {
    if (!on()) return __libc_malloc(size);
    return place(size, 16);
}

void free(void *p) {
    if (!p) return;
    void *raw = raw_of(p);
    if (!raw) {
        __libc_free(p);
        return;
    }
    header_of(p)->word = 0; /* a second free of p is glibc's to catch */
    __libc_free(raw);
}

void *calloc(size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = malloc(total);
    if (p) memset(p, 0, total);
    return p;
}

size_t malloc_usable_size(void *p) {
    if (!p) return 0;
    if (raw_of(p)) return header_of(p)->size;
    /* glibc's own block: its size word, less the chunk overhead. */
    size_t word = ((size_t *)p)[-1];
    size_t chunk = word & ~(size_t)7;
    return word & 2 ? chunk - 16 : chunk - 8;
}

void *realloc(void *p, size_t size) {
    if (!p) return malloc(size);
    if (size == 0) {
        free(p);
        return NULL;
    }
    size_t old = malloc_usable_size(p);
    void *q = malloc(size);
    if (!q) return NULL;
    memcpy(q, p, old < size ? old : size);
    free(p);
    return q;
}

void *reallocarray(void *p, size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, total);
}

static int power_of_two(size_t x) { return x && !(x & (x - 1)); }

void *memalign(size_t align, size_t size) {
    if (!power_of_two(align)) {
        errno = EINVAL;
        return NULL;
    }
    if (!on()) return __libc_memalign(align, size);
    return place(size, align < 16 ? 16 : align);
}

int posix_memalign(void **out, size_t align, size_t size) {
    if (!power_of_two(align) || align % sizeof(void *) != 0) return EINVAL;
    void *p = memalign(align, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t size) { return memalign(align, size); }

void *valloc(size_t size) { return memalign(4096, size); }

void *pvalloc(size_t size) { return memalign(4096, (size + 4095) & ~(size_t)4095); }
