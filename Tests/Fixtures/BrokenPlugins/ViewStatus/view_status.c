/* Defect: a status type (typing indicators and the like, never drawn) that offers a view anyway. The view
 * itself is valid. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewStatus", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:status-view", MISSIVE_PERSISTENCE_STATUS, 0);

static int32_t status_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    return fixture_write_view(out, "Someone is typing");
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = status_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:status-view", .persistence = MISSIVE_PERSISTENCE_STATUS,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewStatus", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
