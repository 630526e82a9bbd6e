/* Defect: the metadata declares a type the runtime descriptor does not provide, and vice versa. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenMetadataMismatch", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:declared", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:actual", NULL, MISSIVE_PERSISTENCE_PERSISTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenMetadataMismatch", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
