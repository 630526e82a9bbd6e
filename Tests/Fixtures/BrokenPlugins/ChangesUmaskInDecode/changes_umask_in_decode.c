/* Defect: every decode sets the umask to 0 (as a plugin might before writing a cache file) and never puts it
   back. Loading changes nothing, so it is registered; its first decode changes the process. */
#include <sys/stat.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenChangesUmaskInDecode", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:umask", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t umask_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    umask(0);
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:umask", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = umask_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenChangesUmaskInDecode", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
