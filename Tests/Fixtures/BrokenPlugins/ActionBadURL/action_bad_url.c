/* Broken: its URL action returns a javascript: URL. The host refuses it (invalid-result); actions.examples
 * fails. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionBadURL", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:bad-url", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_MESSAGE_ACTION("fixture:bad-url", "open", "Open", "link", 0, "url", "int32(message m, sink out)", "bad_url_open");

MISSIVE_EXPORT int32_t bad_url_open(const missive_message *m, const missive_sink *out) {
    (void)m;
    missive_write_string(out, "javascript:alert(1)");
    return MISSIVE_OK;
}

static const missive_action open_action = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_MESSAGE, .id = "open", .object_name = "fixture:bad-url", .title = "Open",
    .icon = "link", .yields = MISSIVE_YIELDS_URL, .signature = "int32(message m, sink out)", .symbol = "bad_url_open",
};
static const missive_action *const actions[] = {&open_action};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_type type = FIXTURE_TYPE("fixture:bad-url", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("ActionBadURL", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
