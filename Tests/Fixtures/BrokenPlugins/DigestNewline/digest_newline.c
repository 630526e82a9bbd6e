/* Defect: the digest has a line break. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenDigestNewline", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:newline", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t bad_digest(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    out->write(out->context, (const uint8_t *)"first line\nsecond line", 22);
    return MISSIVE_OK;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:newline", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = bad_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenDigestNewline", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
