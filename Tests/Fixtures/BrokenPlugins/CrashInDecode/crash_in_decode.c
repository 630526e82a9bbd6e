/* Defect: decode dereferences NULL on every input (SIGSEGV). */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenCrashInDecode", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:crash", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t crash_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                            const missive_sink *error) {
    (void)context, (void)content, (void)length, (void)out, (void)error;
    *(volatile int *)0 = 1;
    return MISSIVE_FAILED;
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:crash", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = crash_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenCrashInDecode", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
