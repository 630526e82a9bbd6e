/* Defect: every view carries a call counter, so one message's view differs each time it is asked for. The
 * counter is atomic: the view is safe on any thread, only not the same twice. */
#include <stdio.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewNondeterministic", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-counter", MISSIVE_PERSISTENCE_COUNTED, 0);

static unsigned long calls;

static int32_t counting_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    char text[48];
    snprintf(text, sizeof text, "View number %lu", __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED));
    return fixture_write_view(out, text);
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = counting_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-counter", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewNondeterministic", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
