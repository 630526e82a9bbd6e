/* Defect: decode reads one JSON object and stops at its closing brace, never looking at what follows, so
 * {"fixture":true}xyz, two objects in a row, or an object and a NUL byte are all taken for the first
 * object. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenAcceptsTrailingData", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:trailing", MISSIVE_PERSISTENCE_COUNTED, 0);

/* The length of the object that starts the content (up to its closing brace, strings skipped), or the
 * whole length when it does not close. */
static size_t first_object_length(const uint8_t *content, size_t length) {
    int depth = 0, in_string = 0;
    for (size_t at = 0; at < length; at++) {
        uint8_t byte = content[at];
        if (in_string) {
            if (byte == '\\') at++;
            else if (byte == '"') in_string = 0;
        } else if (byte == '"') {
            in_string = 1;
        } else if (byte == '{' || byte == '[') {
            depth++;
        } else if ((byte == '}' || byte == ']') && --depth == 0) {
            return at + 1;
        }
    }
    return length;
}

static int32_t first_object_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                                   const missive_sink *error) {
    /* The bug: the rest of the content is ignored. */
    size_t used = content ? first_object_length(content, length) : 0;
    return fixture_decode(context, content, used, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:trailing", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = first_object_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenAcceptsTrailingData", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
