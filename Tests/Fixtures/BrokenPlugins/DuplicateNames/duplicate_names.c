/* Defect: the same objectName twice, and a businessID used by two types. The first of each pair is valid. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenDuplicateNames", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE_BUSINESS("fixture:dup", "fixture_dup", MISSIVE_PERSISTENCE_COUNTED, 0);
MISSIVE_METADATA_TYPE("fixture:dup", MISSIVE_PERSISTENCE_PERSISTED, 0);
MISSIVE_METADATA_TYPE_BUSINESS("fixture:other", "fixture_dup", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type first = FIXTURE_TYPE("fixture:dup", "fixture_dup", MISSIVE_PERSISTENCE_COUNTED);
static const missive_type same_name = FIXTURE_TYPE("fixture:dup", NULL, MISSIVE_PERSISTENCE_PERSISTED);
static const missive_type same_business = FIXTURE_TYPE("fixture:other", "fixture_dup", MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&first, &same_name, &same_business};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenDuplicateNames", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
