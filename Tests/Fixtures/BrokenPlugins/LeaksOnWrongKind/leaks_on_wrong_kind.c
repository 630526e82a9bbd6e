/* Defect: decode copies the content into a new message first, then checks that "fixture" is a boolean; when
 * it is a value of another kind (a string, a number, null, an array or an object), it returns the error and
 * forgets to free the copy. Content that does not parse, or that lacks the member, never reaches the copy,
 * so only JSON that parses but has a member of the wrong type leaks. */
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenLeaksOnWrongKind", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:wrong-kind", MISSIVE_PERSISTENCE_COUNTED, 0);

/* The first byte of the value of "fixture", or 0 when the content has no such member. */
static uint8_t fixture_value(const uint8_t *content, size_t length) {
    static const char key[] = "\"fixture\":";
    const size_t key_length = sizeof key - 1;
    for (size_t at = 0; at + key_length < length; at++) {
        if (memcmp(content + at, key, key_length) == 0) return content[at + key_length];
    }
    return 0;
}

static int32_t checking_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                               const missive_sink *error) {
    uint8_t first = content ? fixture_value(content, length) : 0;
    if (first == 0 || first == 't' || first == 'f') return fixture_decode(context, content, length, out, error);
    missive_message *copy = NULL;
    if (fixture_keep(content, length, &copy) != MISSIVE_OK) return MISSIVE_FAILED;
    *out = NULL;
    /* The bug: copy is not released. */
    missive_write_string(error, "\"fixture\" must be a boolean");
    return MISSIVE_INVALID_CONTENT;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:wrong-kind", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = checking_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenLeaksOnWrongKind", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
