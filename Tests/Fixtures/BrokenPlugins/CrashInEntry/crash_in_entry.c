/* Defect: the entry dereferences NULL (SIGSEGV), so loading the plugin kills the process that loads it. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenCrashInEntry", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:entry-crash", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:entry-crash", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenCrashInEntry", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    *(volatile int *)0 = 1;
    return &plugin;
}
