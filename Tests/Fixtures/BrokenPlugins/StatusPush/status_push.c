/* Defect: a status type that gives push content. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenStatusPush", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:status", MISSIVE_PERSISTENCE_STATUS, 0);

static int32_t status_push(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    out->write(out->context, (const uint8_t *)"Someone is typing", 17);
    return MISSIVE_OK;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:status", .persistence = MISSIVE_PERSISTENCE_STATUS,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .push_content = status_push,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenStatusPush", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
