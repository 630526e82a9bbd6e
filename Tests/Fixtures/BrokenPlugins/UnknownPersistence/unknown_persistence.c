/* Defect: a persistence value (7) that is none of 0, 1, 3 and 16, in metadata and descriptor alike. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenUnknownPersistence", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:persist7", 7, 0);

static const missive_type type = FIXTURE_TYPE("fixture:persist7", NULL, 7);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenUnknownPersistence", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
