/* Defect: a library initializer calls abort(), so dlopen itself kills the process, before any entry runs. */
#include <stdlib.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenAbortInInitializer", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:init-abort", MISSIVE_PERSISTENCE_COUNTED, 0);

__attribute__((constructor)) static void initialize(void) { abort(); }

static const missive_type type = FIXTURE_TYPE("fixture:init-abort", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenAbortInInitializer", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
