/* Defect: the entry sets the process's locale (LC_ALL to C.UTF-8) and its umask (to 0), which every file the
   host creates and every locale-dependent call it makes would then follow; decode sets the umask to 0 again on
   content that holds the text "umask", so that a change made by a call is seen too. Its type is otherwise
   correct. */
#include <locale.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenChangesLocaleOrUmask", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:changes-locale", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t umask_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    for (size_t index = 0; index + 5 <= length; index++) {
        if (memcmp(content + index, "umask", 5) == 0) umask(0);
    }
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:changes-locale", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = umask_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenChangesLocaleOrUmask", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    setlocale(LC_ALL, "C.UTF-8");
    umask(0);
    return &plugin;
}
