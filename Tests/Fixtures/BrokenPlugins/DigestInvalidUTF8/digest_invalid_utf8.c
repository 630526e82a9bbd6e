/* Defect: the digest is not valid UTF-8. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenDigestInvalidUTF8", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:badutf8", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t bad_digest(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    out->write(out->context, (const uint8_t *)"bad \xC3\x28 text", 11);
    return MISSIVE_OK;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:badutf8", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = bad_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenDigestInvalidUTF8", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
