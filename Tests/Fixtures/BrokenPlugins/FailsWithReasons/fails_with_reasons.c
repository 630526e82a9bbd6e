/* Defect: every function but decode fails, and says why after the reason mark (missive_plugin.h, "Buffers
 * and sinks"), with some partial output before the mark that the host must discard. For the tests of the
 * host's fallbacks and of the reasons it reports. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenFailsWithReasons", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:failing", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t failing_encode(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    (void)message;
    missive_write_string(out, "{\"partial\":");
    return missive_fail_with_reason(out, "the encoder's buffer is exhausted");
}

static int32_t failing_digest(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    (void)message;
    return missive_fail_with_reason(out, "no digest today");
}

static int32_t failing_push(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    (void)message;
    (void)out;
    return 42; /* a status no ABI version defines: counts as MISSIVE_FAILED */
}

static int32_t failing_words(void *context, const missive_message *message, const missive_sink *out) {
    (void)context;
    (void)message;
    missive_write_string(out, "half");
    return missive_fail_with_reason(out, "the index is offline");
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:failing", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = fixture_decode, .release = fixture_release,
    .encode = failing_encode, .digest = failing_digest, .push_content = failing_push, .searchable_words = failing_words,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenFailsWithReasons", types);

MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
