/* Defect: decode accepts any input at all, garbage included (it keeps a copy and echoes it back). */
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenAcceptsGarbage", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:lenient", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t lenient_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                              const missive_sink *error) {
    (void)context, (void)error;
    echo *value = malloc(sizeof(echo) + length + 1);
    if (!value) return MISSIVE_FAILED;
    value->length = length;
    if (length) memcpy(value->bytes, content, length);
    *out = (missive_message *)value;
    return MISSIVE_OK;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:lenient", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = lenient_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenAcceptsGarbage", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
