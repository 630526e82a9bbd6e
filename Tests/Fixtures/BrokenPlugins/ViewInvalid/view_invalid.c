/* Defect: the view reads, but breaks the rules of missive.view.v1: a javascript: link, an image of negative
 * width and an element of an unknown kind without a fallback. The host repairs or drops each one. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewInvalid", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-invalid", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t invalid_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    missive_view_writer w;
    missive_view_begin(&w, out);
    missive_view_stack_begin(&w, "vertical", 0);
    missive_view_text(&w, "Fixture", "title", NULL, 0);
    missive_view_link(&w, "Open", "javascript:alert(1)");
    /* missive_view_image leaves a negative size out, so this one is written by hand. */
    missive_view_raw(&w, "{\"type\":\"image\",\"url\":\"https://example.com/a.png\",\"width\":-5,\"alt\":\"A\"}");
    missive_view_raw(&w, "{\"type\":\"carousel\",\"items\":[]}");
    missive_view_stack_end(&w);
    return missive_view_end(&w);
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = invalid_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-invalid", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewInvalid", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
