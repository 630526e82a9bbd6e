/* Broken: its action's title is "Vote" in the metadata and "Poll" in the extension. The host refuses the
 * action (metadata-mismatch); actions.declared fails. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionMetadataMismatch", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:action-mismatch", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_COMPOSER_ACTION("fixture.mismatch", "fixture:action-mismatch", "Vote", "poll", 0, "int32(sink out)", "mismatch_create");

MISSIVE_EXPORT int32_t mismatch_create(const missive_sink *out) {
    missive_write_string(out, "{\"fixture\":true}");
    return MISSIVE_OK;
}

static const missive_action create = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_COMPOSER, .id = "fixture.mismatch", .object_name = "fixture:action-mismatch",
    .title = "Poll", .icon = "poll", .signature = "int32(sink out)", .symbol = "mismatch_create",
};
static const missive_action *const actions[] = {&create};
FIXTURE_ACTIONS(actions, get_plugin_extension)

static const missive_type type = FIXTURE_TYPE("fixture:action-mismatch", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("ActionMetadataMismatch", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
