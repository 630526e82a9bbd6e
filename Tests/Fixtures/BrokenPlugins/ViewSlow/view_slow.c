/* Defect: the view function sleeps 5 ms, over view.budget's 1 ms; everything else about it is right, so it
 * gets the budget's warning and passes every other check. */
#include <time.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewSlow", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-slow", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t slow_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    struct timespec delay = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
    while (nanosleep(&delay, &delay) != 0) {
    }
    return fixture_write_view(out, "Drawn slowly");
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = slow_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-slow", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewSlow", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
