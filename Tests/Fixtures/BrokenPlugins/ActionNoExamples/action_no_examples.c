/* Broken: its action takes an argument but declares no example arguments, so the conformance suite cannot
 * run it; actions.examples fails. Hosts call it as usual. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionNoExamples", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:no-examples", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_MESSAGE_ACTION("fixture:no-examples", "repeat", "Repeat", "repeat", 0, "content", "int32(message m, int32 times, sink out)",
                                "no_examples_repeat");

MISSIVE_EXPORT int32_t no_examples_repeat(const missive_message *m, int32_t times, const missive_sink *out) {
    (void)m, (void)times;
    missive_write_string(out, "{\"fixture\":true}");
    return MISSIVE_OK;
}

static const missive_action repeat = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_MESSAGE, .id = "repeat", .object_name = "fixture:no-examples",
    .title = "Repeat", .icon = "repeat", .signature = "int32(message m, int32 times, sink out)", .symbol = "no_examples_repeat", .examples = NULL,
};
static const missive_action *const actions[] = {&repeat};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_type type = FIXTURE_TYPE("fixture:no-examples", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("ActionNoExamples", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
