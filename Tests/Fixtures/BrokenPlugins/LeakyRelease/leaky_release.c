/* Defect: release frees nothing, so every decoded message leaks. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenLeakyRelease", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:leak", MISSIVE_PERSISTENCE_COUNTED, 0);

static void leaky_release(void *context, missive_message *message) {
    (void)context, (void)message;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:leak", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = leaky_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenLeakyRelease", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
