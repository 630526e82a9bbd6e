/* Defect: decode writes to standard output and error without end (and without newlines). */
#include <stdio.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenFloodInDecode", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:flood", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t misbehaving_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                                  const missive_sink *error) {
    (void)context, (void)content, (void)length, (void)out, (void)error;
    char block[4096];
    memset(block, 'x', sizeof block);
    for (;;) {
        fwrite(block, 1, sizeof block, stdout);
        fwrite(block, 1, sizeof block, stderr);
    }
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:flood", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = misbehaving_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenFloodInDecode", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
