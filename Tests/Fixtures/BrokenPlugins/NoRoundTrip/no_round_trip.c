/* Defect: encode does not round-trip: each encoding counts one more round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenNoRoundTrip", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:drift", MISSIVE_PERSISTENCE_COUNTED, 0);

/* Encodes {"fixture":true,"round":N+1}, where N is the round the content carried (0 if none). */
static int32_t drift_encode(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    const echo *value = (const echo *)message;
    const uint8_t *bytes = value->bytes;
    size_t length = value->length;
    long round = 0;
    const char *marker = "\"round\":";
    for (size_t i = 0; i + 8 < length; i++) {
        if (memcmp(bytes + i, marker, 8) == 0) round = strtol((const char *)bytes + i + 8, NULL, 10);
    }
    char text[64];
    int n = snprintf(text, sizeof text, "{\"fixture\":true,\"round\":%ld}", round + 1);
    out->write(out->context, (const uint8_t *)text, (size_t)n);
    return MISSIVE_OK;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:drift", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = drift_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenNoRoundTrip", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
