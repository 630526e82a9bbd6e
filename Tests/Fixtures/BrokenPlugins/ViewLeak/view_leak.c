/* Broken: the view function formats its text in a buffer it allocates and never frees, so every view of a
 * message leaks 64 bytes. Decode, encode and digest are the echo type's and release everything. memory.release
 * fails. */
#include <stdio.h>
#include <stdlib.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewLeak", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-leak", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t leaky_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const echo *value = (const echo *)message;
    char *text = malloc(64);
    if (!text) return MISSIVE_FAILED;
    snprintf(text, 64, "A fixture of %zu bytes", value->length);
    /* The defect: text is not freed. */
    return fixture_write_view(out, text);
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = leaky_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-leak", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewLeak", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
