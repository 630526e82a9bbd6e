/* Defect, for this host: built for an ABI minor newer than any host knows (1.999), as its metadata says, so
 * a host refuses it before loading it. Its descriptor is an ordinary one. */
#include "fixture_support.h"

MISSIVE_METADATA_RECORD("{\"record\":\"plugin\",\"abi\":1,\"abiMinor\":999,\"name\":\"BrokenFutureMinor\",\"version\":\"0.0.1\",\"vendor\":\"Missive Tests\"}");
MISSIVE_METADATA_TYPE("fixture:future", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:future", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenFutureMinor", types);

MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
