/* Broken: its action names the function by a symbol the library does not export (the function is static,
 * and the extension gives no pointer). The host refuses the action; actions.declared fails. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("ActionMissingSymbol", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:missing-symbol", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_MESSAGE_ACTION("fixture:missing-symbol", "touch", "Touch", "hand", 0, "content", "int32(message m, sink out)",
                                "missing_symbol_touch");

/* Not exported: dlsym does not find it. */
static int32_t missing_symbol_touch(const missive_message *m, const missive_sink *out) {
    (void)m;
    missive_write_string(out, "{\"fixture\":true}");
    return MISSIVE_OK;
}

static const missive_action touch = {
    .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_MESSAGE, .id = "touch", .object_name = "fixture:missing-symbol",
    .title = "Touch", .icon = "hand", .signature = "int32(message m, sink out)", .symbol = "missing_symbol_touch", .function = NULL,
};
static const missive_action *const actions[] = {&touch};
static const missive_actions_v1 extension = {.struct_size = sizeof(missive_actions_v1), .action_count = 1, .actions = actions};

static const void *get_plugin_extension(void *context, const char *id) {
    (void)context;
    /* Refers to the function, so that the compiler keeps it; the host must still not find it. */
    return id == (const char *)missing_symbol_touch ? NULL : fixture_actions_extension(&extension, id);
}

static const missive_type type = FIXTURE_TYPE("fixture:missing-symbol", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN_WITH_ACTIONS("ActionMissingSymbol", types, get_plugin_extension);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
