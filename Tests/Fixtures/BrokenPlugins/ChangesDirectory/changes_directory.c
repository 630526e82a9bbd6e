/* Defect: the entry changes the process's working directory to /tmp, so that a relative path the host
   resolves afterwards names another file. Its type is otherwise correct. */
#include <unistd.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenChangesDirectory", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:changes-directory", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:changes-directory", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenChangesDirectory", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    if (chdir("/tmp") != 0) return NULL;
    return &plugin;
}
