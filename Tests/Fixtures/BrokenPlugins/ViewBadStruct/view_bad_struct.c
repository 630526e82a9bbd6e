/* Defect: the missive.view.v1 structs cannot be used. One type's struct_size is too small to hold the view
 * function; the other's view function is NULL. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewBadStruct", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:short-view", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_TYPE("fixture:null-view", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t echo_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    return fixture_write_view(out, "never called");
}

/* Only struct_size is covered: the view function lies past it. */
static const missive_view_v1 short_view = {.struct_size = sizeof(uint32_t), .view = echo_view};
static const missive_view_v1 null_view = {.struct_size = sizeof(missive_view_v1), .view = NULL};

static const void *short_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&short_view, extension_id);
}

static const void *null_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&null_view, extension_id);
}

static const missive_type short_type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:short-view", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = short_extension,
};
static const missive_type null_type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:null-view", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = null_extension,
};
static const missive_type *const types[] = {&short_type, &null_type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewBadStruct", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
