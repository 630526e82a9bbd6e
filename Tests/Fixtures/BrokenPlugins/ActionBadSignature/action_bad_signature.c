/* Broken: its action's signature takes a float, a type outside the signature grammar. The host refuses the
 * action, with the reason, and loads the plugin without it; actions.declared fails. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionBadSignature", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:bad-signature", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_MESSAGE_ACTION("fixture:bad-signature", "scale", "Scale", "zoom", 0, "content", "int32(message m, float factor, sink out)",
                                "bad_signature_scale");

MISSIVE_EXPORT int32_t bad_signature_scale(const missive_message *m, float factor, const missive_sink *out) {
    (void)m, (void)factor;
    missive_write_string(out, "{\"fixture\":true}");
    return MISSIVE_OK;
}

static const missive_action scale = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_MESSAGE, .id = "scale", .object_name = "fixture:bad-signature",
    .title = "Scale", .icon = "zoom", .signature = "int32(message m, float factor, sink out)", .symbol = "bad_signature_scale",
    .examples = "[[2]]",
};
static const missive_action *const actions[] = {&scale};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_type type = FIXTURE_TYPE("fixture:bad-signature", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("ActionBadSignature", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
