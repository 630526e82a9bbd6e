/* Defect: the runtime descriptor reports ABI 2.0 (the metadata, written with this header, says 1). */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenWrongABI", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:wrongabi", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = FIXTURE_TYPE("fixture:wrongabi", NULL, MISSIVE_PERSISTENCE_COUNTED);
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = {
    .abi_version = (2u << 16) | 0u, .struct_size = sizeof(missive_plugin), .name = "BrokenWrongABI",
    .version = "0.0.1", .vendor = "Missive Tests", .type_count = 1, .types = types,
};

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
