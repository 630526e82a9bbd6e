/* Broken: the view's text colours a word with a terminal escape sequence (ESC [31m ... ESC [0m) and ends with a
 * BEL. A host cleans them away before drawing, so the view still reads; view.valid reports each repair. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewControlText", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-control-text", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t control_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    /* The defect: control sequences in text shown to people. The writer escapes them as JSON, as it must. */
    return fixture_write_view(out, "Status: \x1b[31mred\x1b[0m alert\a");
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = control_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-control-text", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewControlText", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
