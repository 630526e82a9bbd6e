/* A valid plugin whose view uses an element of a kind newer than this host knows ("map"), written with
 * missive_view_raw, with a "fallback" for hosts that do not know it: what the format intends, so it passes
 * view.valid. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ViewFallback", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-fallback", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t fallback_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    missive_view_writer w;
    missive_view_begin(&w, out);
    missive_view_stack_begin(&w, "vertical", 1);
    missive_view_text(&w, "Meeting point", "title", NULL, 0);
    missive_view_raw(&w, "{\"type\":\"map\",\"latitude\":48.8584,\"longitude\":2.2945,\"zoom\":15,"
                         "\"fallback\":{\"type\":\"link\",\"text\":\"Open the map\","
                         "\"url\":\"https://www.openstreetmap.org/#map=15/48.8584/2.2945\"}}");
    missive_view_stack_end(&w);
    return missive_view_end(&w);
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = fallback_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-fallback", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("ViewFallback", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
