/* Defect: the view function cannot give a view. For {"fixture":true} it fails, with a reason after the mark
 * (and a half-written document before it, which the host discards); for content with a "round" it returns
 * MISSIVE_OK with a document that is not JSON. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewFails", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-fails", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t failing_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    if (fixture_contains(message, "\"round\"")) {
        missive_write_string(out, "{\"type\":\"text\",\"text\":\"unterminated");
        return MISSIVE_OK;
    }
    missive_view_writer w;
    missive_view_begin(&w, out);
    missive_view_stack_begin(&w, "vertical", 0);
    return missive_fail_with_reason(out, "the view template is missing");
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = failing_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const char plain[] = "{\"fixture\":true}";
static const char with_round[] = "{\"fixture\":true,\"round\":1}";
static const missive_bytes examples[] = {
    {(const uint8_t *)plain, sizeof plain - 1},
    {(const uint8_t *)with_round, sizeof with_round - 1},
};

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-fails", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 2, .examples = examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewFails", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
