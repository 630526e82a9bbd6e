/* Defect: decode calls exit(0), ending the process that hosts it. */
#include <stdlib.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenExitInDecode", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:exit", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t misbehaving_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                                  const missive_sink *error) {
    (void)context, (void)content, (void)length, (void)out, (void)error;
    exit(0);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:exit", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = misbehaving_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenExitInDecode", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
