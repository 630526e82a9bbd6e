/* Broken: the first decode in a process allocates a working buffer of 1 GiB, writes every page of it, and
 * frees it. Every call gives the right result and nothing leaks, but a host decoding on several threads at once,
 * or on a small machine, runs out of memory. memory.peak fails. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenHugeAllocation", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:huge", MISSIVE_PERSISTENCE_COUNTED, 0);

static atomic_int allocated;

static int32_t huge_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    if (atomic_exchange(&allocated, 1) == 0) {
        /* The defect: a table sized for the largest content anyone could send, made once. */
        size_t size = (size_t)1 << 30;
        volatile unsigned char *table = malloc(size);
        if (table) {
            for (size_t at = 0; at < size; at += 4096) table[at] = (unsigned char)at;
            free((void *)table);
        }
    }
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:huge", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = huge_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenHugeAllocation", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
