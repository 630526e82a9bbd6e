/* Defect: valid metadata, but no missive_plugin_entry_v1 symbol (the entry has another name). */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenNoEntry", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:noentry", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:noentry", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenNoEntry", types);

const missive_plugin *missive_plugin_entry(const missive_host *host) {
    (void)host;
    return &plugin;
}
