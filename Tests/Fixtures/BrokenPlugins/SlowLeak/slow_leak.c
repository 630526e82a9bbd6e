/* Defect: every 100th message decoded, decode records a 64-byte statistics sample in a block of its own and
 * never frees it. Less than one byte per decode: under a per-cycle threshold, yet it grows without limit. */
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenSlowLeak", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:slow-leak", MISSIVE_PERSISTENCE_COUNTED, 0);

typedef struct sample {
    unsigned long decodes;
    unsigned char reserved[56];
} sample;

static unsigned long decodes;
static sample *volatile last_sample;

static int32_t sampling_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                               const missive_sink *error) {
    int32_t status = fixture_decode(context, content, length, out, error);
    if (status != MISSIVE_OK) return status;
    unsigned long count = __atomic_add_fetch(&decodes, 1, __ATOMIC_RELAXED);
    if (count % 100 == 0) {
        /* The bug: the previous sample is dropped, not freed. */
        sample *new_sample = calloc(1, sizeof *new_sample);
        if (new_sample) new_sample->decodes = count;
        last_sample = new_sample;
    }
    return MISSIVE_OK;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:slow-leak", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = sampling_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenSlowLeak", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
