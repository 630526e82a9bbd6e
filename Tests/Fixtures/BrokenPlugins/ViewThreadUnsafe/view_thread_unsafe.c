/* Defect: the view depends on the calling thread (it names it), so views computed on other threads differ
 * from the one computed on the host's thread, although each thread always gets the same view. */
#include <pthread.h>
#include <stdio.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewThreadUnsafe", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-thread", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t thread_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context, (void)message;
    char text[64];
    snprintf(text, sizeof text, "Drawn by thread %lu", (unsigned long)pthread_self());
    return fixture_write_view(out, text);
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = thread_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-thread", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewThreadUnsafe", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
