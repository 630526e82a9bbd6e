/* Broken: the view function builds its text in one static buffer that every call shares, without a lock. On one
 * thread each view is right; two threads viewing different messages at once overwrite each other's text (a data
 * race), so a view can show another message's content. view.threads fails. */
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewSharedBufferRace", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-shared-buffer", MISSIVE_PERSISTENCE_COUNTED, 0);

/* The defect: one buffer for every call. */
static char shared[256];

static int32_t shared_buffer_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const echo *value = (const echo *)message;
    size_t at = 0;
    static const char prefix[] = "Content: ";
    memcpy(shared, prefix, sizeof prefix - 1);
    at = sizeof prefix - 1;
    /* Quotes become apostrophes, so that the text reads well. */
    for (size_t i = 0; i < value->length && at < sizeof shared - 1; i++) {
        shared[at++] = value->bytes[i] == '"' ? '\'' : (char)value->bytes[i];
    }
    shared[at] = 0;
    return fixture_write_view(out, shared);
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = shared_buffer_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const char short_example[] = "{\"fixture\":true}";
static const char long_example[] = "{\"fixture\":true,\"round\":123456789}";
static const missive_bytes examples[] = {
    {(const uint8_t *)short_example, sizeof short_example - 1},
    {(const uint8_t *)long_example, sizeof long_example - 1},
};

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-shared-buffer", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 2, .examples = examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewSharedBufferRace", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
