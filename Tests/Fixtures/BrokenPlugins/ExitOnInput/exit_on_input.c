/* Defect: decode calls exit(0) on content that holds the text "bye", ending the process that hosts it with
   a status that says all went well; every other content decodes correctly. Its second example holds "bye". */
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenExitOnInput", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:bye", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t bye_decode(void *context, const uint8_t *content, size_t length, missive_message **out, const missive_sink *error) {
    for (size_t index = 0; index + 3 <= length; index++) {
        if (memcmp(content + index, "bye", 3) == 0) exit(0);
    }
    return fixture_decode(context, content, length, out, error);
}

static const char good[] = "{\"fixture\":true}", bye[] = "{\"say\":\"bye\",\"fixture\":true}";
static const missive_bytes examples[] = {
    {.bytes = (const uint8_t *)good, .length = sizeof good - 1},
    {.bytes = (const uint8_t *)bye, .length = sizeof bye - 1},
};

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:bye", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 2, .examples = examples, .decode = bye_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenExitOnInput", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
