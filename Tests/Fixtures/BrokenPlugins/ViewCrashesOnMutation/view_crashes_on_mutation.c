/* Defect: the view assumes the optional member "label" is there. The example has it, so every view check
 * on the example passes; content that decodes without it (a mutation that changes the key's spelling, say)
 * makes the view read through a NULL pointer (SIGSEGV). */
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenViewCrashesOnMutation", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:view-label", MISSIVE_PERSISTENCE_COUNTED, 0);

/* The first character of the "label" string's value, or NULL when the content has no "label" member. */
static const char *find_label(const echo *value) {
    static const char key[] = "\"label\":\"";
    for (size_t at = 0; at + sizeof key - 1 <= value->length; at++) {
        if (memcmp(value->bytes + at, key, sizeof key - 1) == 0) return (const char *)value->bytes + at + sizeof key - 1;
    }
    return NULL;
}

static int32_t label_view(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const volatile char *label = find_label((const echo *)message);
    char text[64];
    size_t length = 0;
    /* The bug: no test for NULL. */
    while (length < sizeof text - 1 && label[length] != '"') {
        text[length] = label[length];
        length++;
    }
    text[length] = 0;
    return fixture_write_view(out, text);
}

static const missive_view_v1 view = {.struct_size = sizeof(missive_view_v1), .view = label_view};

static const void *get_extension(void *context, const char *extension_id) {
    (void)context;
    return fixture_view_extension(&view, extension_id);
}

static const char example[] = "{\"label\":\"Fixture\",\"fixture\":true}";
static const missive_bytes examples[] = {{(const uint8_t *)example, sizeof example - 1}};

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:view-label", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest, .get_extension = get_extension,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenViewCrashesOnMutation", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
