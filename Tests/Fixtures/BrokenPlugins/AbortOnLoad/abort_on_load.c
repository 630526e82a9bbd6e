/* Defect: the entry calls abort(), so loading the plugin kills the process that loads it.
 *
 * SwiftPM builds every product into the folder beside the `missive` executable, which is on the default
 * plugin search path of development builds. So that `swift run missive ...` keeps working there, the abort
 * happens only when MISSIVE_FIXTURE_ABORT_ON_LOAD is set, as the tests set it for the checker they run. */
#include <stdlib.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenAbortOnLoad", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:abort", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:abort", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenAbortOnLoad", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    if (getenv("MISSIVE_FIXTURE_ABORT_ON_LOAD")) abort();
    return &plugin;
}
