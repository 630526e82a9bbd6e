/* Defect: the entry calls abort(), so loading the plugin kills the process that loads it. */
#include <stdlib.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenAbortOnLoad", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:abort", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:abort", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenAbortOnLoad", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    abort();
    return &plugin;
}
