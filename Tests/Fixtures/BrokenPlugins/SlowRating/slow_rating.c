/* The C sample (rating.c, linked into this folder and built with its entry renamed rating_entry_v1), with a
 * decode that takes 3 ms: it busy-waits, then decodes as the sample does. Nothing else differs, so it is a
 * correct plugin that is slow, and the checker must say so with warnings, never a timeout. */
#include <pthread.h>
#include <time.h>

#include "missive_plugin.h"

/* The build renames the sample's entry; this file defines the real one. */
#undef missive_plugin_entry_v1

/* How long each decode takes, in nanoseconds. */
#define SLOW_DECODE_NANOSECONDS 3000000L

static missive_type slow_type;
static const missive_type *slow_types[1];
static missive_plugin slow_plugin;
static int32_t (*sample_decode)(void *, const uint8_t *, size_t, missive_message **, const missive_sink *);
static pthread_once_t made = PTHREAD_ONCE_INIT;

static int32_t slow_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                           const missive_sink *error) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < SLOW_DECODE_NANOSECONDS);
    return sample_decode(context, content, length, out, error);
}

/* A copy of the sample's descriptor whose one type decodes slowly. */
static void make_plugin(void) {
    const missive_plugin *sample = rating_entry_v1(NULL);
    slow_type = *sample->types[0];
    sample_decode = slow_type.decode;
    slow_type.decode = slow_decode;
    slow_types[0] = &slow_type;
    slow_plugin = *sample;
    slow_plugin.types = slow_types;
}

MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    pthread_once(&made, make_plugin);
    return &slow_plugin;
}
