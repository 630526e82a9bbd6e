/* Defect: the digest shows the "label" member's text with its JSON escapes resolved, and does not clean it:
 * a label holding \n, \t or another control escape gives a digest that is not one line. The example's label
 * has none, so the digest of every example keeps the rules; some mutations of it do not. */
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenDigestEchoesControls", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:label", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t label_digest(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const echo *value = (const echo *)message;
    static const char key[] = "\"label\":\"";
    const size_t key_length = sizeof key - 1;
    char text[128] = "[label] ";
    size_t used = strlen(text);
    for (size_t at = 0; at + key_length <= value->length; at++) {
        if (memcmp(value->bytes + at, key, key_length) != 0) continue;
        for (size_t i = at + key_length; i < value->length && value->bytes[i] != '"' && used < sizeof text - 1; i++) {
            uint8_t byte = value->bytes[i];
            if (byte == '\\' && i + 1 < value->length) {
                /* The bug: escapes become the characters they stand for, line breaks and tabs included. */
                switch (value->bytes[++i]) {
                case 'n': byte = '\n'; break;
                case 't': byte = '\t'; break;
                case 'r': byte = '\r'; break;
                case 'b': byte = '\b'; break;
                case 'f': byte = '\f'; break;
                default: byte = value->bytes[i]; break;
                }
            }
            text[used++] = (char)byte;
        }
        break;
    }
    out->write(out->context, (const uint8_t *)text, used);
    return MISSIVE_OK;
}

static const char example[] = "{\"label\":\"Fixture notes\",\"fixture\":true}";
static const missive_bytes examples[] = {{(const uint8_t *)example, sizeof example - 1}};

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:label", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = examples, .decode = fixture_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = label_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenDigestEchoesControls", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
