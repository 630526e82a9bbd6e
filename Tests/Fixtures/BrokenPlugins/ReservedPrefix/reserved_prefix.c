/* Defects: an objectName with the reserved MS: prefix and one that breaks the grammar, beside a valid type. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenReservedPrefix", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("MS:Fixture", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_TYPE("fixture:allowed", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_TYPE("fixture bad name", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type reserved = FIXTURE_TYPE("MS:Fixture", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type allowed = FIXTURE_TYPE("fixture:allowed", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type bad_name = FIXTURE_TYPE("fixture bad name", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&reserved, &allowed, &bad_name};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenReservedPrefix", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
