/* Defect: encode writes the number "ratio" with printf's %g, six significant digits, so the first encoding
 * already lost digits: 3.14159265 becomes 3.14159. Encoding that again gives the same bytes, so a check
 * that only compares the second encoding with the first sees nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenLossyEncode", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:lossy", MISSIVE_PERSISTENCE_COUNTED, 0);

/* The content as received, with the number after "ratio": written again with %g. */
static int32_t lossy_encode(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const echo *value = (const echo *)message;
    static const char key[] = "\"ratio\":";
    const size_t key_length = sizeof key - 1;
    for (size_t at = 0; at + key_length <= value->length; at++) {
        if (memcmp(value->bytes + at, key, key_length) != 0) continue;
        size_t start = at + key_length, end = start;
        while (end < value->length && strchr("-+.0123456789eE", value->bytes[end])) end++;
        char number[64] = {0};
        memcpy(number, value->bytes + start, end - start < sizeof number - 1 ? end - start : sizeof number - 1);
        char text[64];
        int written = snprintf(text, sizeof text, "%g", strtod(number, NULL));
        out->write(out->context, value->bytes, start);
        out->write(out->context, (const uint8_t *)text, (size_t)written);
        out->write(out->context, value->bytes + end, value->length - end);
        return MISSIVE_OK;
    }
    out->write(out->context, value->bytes, value->length);
    return MISSIVE_OK;
}

static const char example[] = "{\"ratio\":3.14159265,\"fixture\":true}";
static const missive_bytes examples[] = {{(const uint8_t *)example, sizeof example - 1}};

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:lossy", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = examples, .decode = fixture_decode, .release = fixture_release,
    .encode = lossy_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenLossyEncode", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
