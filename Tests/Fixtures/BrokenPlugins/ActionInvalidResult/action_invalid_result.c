/* Broken: its action returns content its own type refuses ({"nope":1} lacks "fixture"). The host refuses
 * the result (invalid-result) and leaves the message as it was; actions.examples fails. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionInvalidResult", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:invalid-result", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_MESSAGE_ACTION("fixture:invalid-result", "reset", "Reset", "undo", 0, "content", "int32(message m, sink out)",
                                "invalid_result_reset");

MISSIVE_EXPORT int32_t invalid_result_reset(const missive_message *m, const missive_sink *out) {
    (void)m;
    missive_write_string(out, "{\"nope\":1}");
    return MISSIVE_OK;
}

static const missive_action reset = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_MESSAGE, .id = "reset", .object_name = "fixture:invalid-result",
    .title = "Reset", .icon = "undo", .signature = "int32(message m, sink out)", .symbol = "invalid_result_reset",
};
static const missive_action *const actions[] = {&reset};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_type type = FIXTURE_TYPE("fixture:invalid-result", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("ActionInvalidResult", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
