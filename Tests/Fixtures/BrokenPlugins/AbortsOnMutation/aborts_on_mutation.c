/* Defect: decode asserts that the value of "fixture" starts like a JSON value, where it should refuse the
 * content. Every example and every well-formed input passes the assertion; a mutation that puts another byte
 * there (a brace, a colon, a letter, a NUL) makes it print why to standard error and abort, as a failed
 * assert(), a Rust panic or an uncaught C++ exception does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_support.h"

MISSIVE_METADATA_PLUGIN("BrokenAbortsOnMutation", "0.0.1", "Missive Tests");
MISSIVE_METADATA_TYPE("fixture:aborts", MISSIVE_PERSISTENCE_COUNTED, 0);

static int32_t asserting_decode(void *context, const uint8_t *content, size_t length, missive_message **out,
                                const missive_sink *error) {
    static const char key[] = "\"fixture\":";
    const size_t key_length = sizeof key - 1;
    for (size_t at = 0; content && at + key_length < length; at++) {
        if (memcmp(content + at, key, key_length) != 0) continue;
        uint8_t first = content[at + key_length];
        if (!strchr(" \t\r\ntfn\"[{-0123456789", first) || first == 0) {
            fprintf(stderr, "aborts_on_mutation.c:%d: decode: unexpected byte 0x%02x after \"fixture\":, at offset %zu\n", __LINE__,
                    first, at + key_length);
            fflush(stderr);
            abort();
        }
        break;
    }
    return fixture_decode(context, content, length, out, error);
}

static const missive_type type = {
    .struct_size = sizeof(missive_type), .object_name = "fixture:aborts", .persistence = MISSIVE_PERSISTENCE_COUNTED,
    .example_count = 1, .examples = fixture_examples, .decode = asserting_decode, .release = fixture_release,
    .encode = fixture_encode, .digest = fixture_digest,
};
static const missive_type *const types[] = {&type};
static const missive_plugin plugin = FIXTURE_PLUGIN("BrokenAbortsOnMutation", types);

const missive_plugin *missive_plugin_entry_v1(const missive_host *host) {
    (void)host;
    return &plugin;
}
