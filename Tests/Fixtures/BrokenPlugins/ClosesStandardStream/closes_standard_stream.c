/* Defect: the entry closes standard output (descriptor 1), so that everything the host prints afterwards
   fails. Its type is otherwise correct. */
#include <unistd.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenClosesStandardStream", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:closes-stream", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:closes-stream", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenClosesStandardStream", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    close(STDOUT_FILENO);
    return &plugin;
}
