/* Defect: decode aborts on content that holds the text "boom" (with a message on stderr), and handles its
   examples and everything else correctly, so a scan passes it and only a real message brings a host down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenAbortOnMessage", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:boom", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t boom_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    for (size_t index = 0; index + 4 <= length; index++) {
        if (memcmp(content + index, "boom", 4) == 0) {
            fprintf(stderr, "abort_on_message.c: unexpected boom\n");
            abort();
        }
    }
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:boom", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = boom_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenAbortOnMessage", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
