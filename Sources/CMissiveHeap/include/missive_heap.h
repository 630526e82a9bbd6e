/* The C allocator's count of heap bytes in use, for the conformance suite's memory checks. */
#ifndef MISSIVE_HEAP_H
#define MISSIVE_HEAP_H

#include <stddef.h>

/* Bytes currently allocated with malloc and not freed, including blocks the allocator maps separately
 * (glibc's mallinfo2: uordblks + hblkhd). 0 where the C library cannot tell. */
size_t missive_heap_in_use(void);

/* 1 when missive_heap_in_use sees this process's malloc; 0 when the C library has no counter or another
 * allocator (a sanitizer, jemalloc, ...) has replaced malloc. */
int missive_heap_supported(void);

#endif
