/* Defect: the type offers a view, but its view function returns MISSIVE_ABSENT for every example, so the
 * view checks have nothing to look at. Allowed (the host draws the default view), so view.renders only warns. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewAlwaysAbsent", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-absent", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t absent_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message, (void)out;
    return MISSIVE_ABSENT;
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = absent_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-absent", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewAlwaysAbsent", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
