/* Defect: decode refuses content with members it does not know, so MS:Custom content, which carries
 * "businessID", and a newer sender's content would both become unknown messages. Otherwise a valid plugin. */
#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenRefusesUnknownMembers", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE_BUSINESS("fixture:strict", "strict", MISSIVE_PERSISTENCE_COUNTED, 0);

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:strict", .business_id = "strict",
    .persistence = MISSIVE_PERSISTENCE_COUNTED, .example_count = 1, .examples = fixture_examples,
    .decode = fixture_decode_strict, .release = fixture_release, .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenRefusesUnknownMembers", types);

MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
