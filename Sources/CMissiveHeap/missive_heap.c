#include "missive_heap.h"

#include <stdlib.h> /* defines __GLIBC__ on glibc */

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>

/* Small blocks (uordblks) plus the large ones glibc maps separately (hblkhd, from 128 KiB by default). */
size_t missive_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

/* Whether the counter sees this process's malloc at all. Under AddressSanitizer, jemalloc or another allocator
 * that replaces malloc, glibc's counters stay still, and a memory check must not pass on a blind measure. */
int missive_heap_supported(void) {
    size_t before = missive_heap_in_use();
    void *volatile block = malloc(4096);
    size_t after = missive_heap_in_use();
    free(block);
    return after >= before + 4096;
}
#else
size_t missive_heap_in_use(void) { return 0; }

int missive_heap_supported(void) { return 0; }
#endif
